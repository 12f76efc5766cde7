import type { FastifyReply } from 'fastify';
import { Type, type Static, type TObject, type TProperties, type TSchema } from 'typebox';

/** `{success: true, data}`: every single-object JSON response. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ success: Type.Literal(true), data });
}

/** `{data, has_more, next_cursor}`: every list response. */
export function Page<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` to read the next page' }),
  });
}

export function ok<T>(data: T): { success: true; data: T } {
  return { success: true, data };
}

/** `{success: true, data}` answered 201 Created. */
export function created<T>(reply: FastifyReply, data: T): { success: true; data: T } {
  reply.status(201);
  return ok(data);
}

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** Payment ids: a UUID, or `sbx_` + UUID for sandbox rows. */
export const PAYMENT_ID_PATTERN =
  '^(sbx_)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

export const Uuid = (description?: string) =>
  Type.String({ format: 'uuid', pattern: UUID_PATTERN, ...(description ? { description } : {}) });

export const UuidParams = Type.Object({ id: Uuid() });

export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/** Minor units or micro-PAY: an exact integer below 2^53. */
export const MinorUnits = (description: string, minimum = 0) =>
  Type.Integer({ minimum, maximum: Number.MAX_SAFE_INTEGER, description });

export const Limit = Type.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Page size, 1 to 100' });
export const Cursor = Type.String({ minLength: 1, maxLength: 512, description: 'Opaque cursor from `next_cursor`' });

/** A list's querystring: its filters, then the `cursor` and `limit` every list pages with. */
export function ListQuery<T extends TProperties>(filters: T) {
  return Type.Object({ ...filters, cursor: Type.Optional(Cursor), limit: Limit });
}

declare const CSV_VALUES: unique symbol;
/** A multi-select that passed validation (`CsvEnum`): comma-separated values of `T`; `parseCsv` splits it. */
export type Csv<T extends string> = string & { readonly [CSV_VALUES]: T };

/** A comma-separated multi-select of enum values (`status=pending,matched`), typed by the values it admits. */
export function CsvEnum<T extends string>(values: readonly T[], description: string) {
  return Type.Unsafe<Csv<T>>(
    Type.String({
      pattern: `^(${values.join('|')})(,(${values.join('|')}))*$`,
      description: `${description}; comma-separated: ${values.join(', ')}`,
    }),
  );
}

export function parseCsv<T extends string>(value: Csv<T> | undefined): T[] | undefined {
  return value === undefined ? undefined : ([...new Set(value.split(','))] as T[]);
}

type CsvKeys<Q> = { [K in keyof Q]-?: Q[K] extends Csv<string> | undefined ? K : never }[keyof Q];
type CsvSplit<Q, K extends keyof Q> = Omit<Q, K> & {
  [P in K]: Q[P] extends Csv<infer T> | undefined ? T[] | undefined : never;
};

/** A list's query as its service takes it: the multi-selects named by `keys` split into arrays, the rest as it came. */
export function splitCsv<Q extends object, K extends CsvKeys<Q>>(query: Q, ...keys: K[]): CsvSplit<Q, K> {
  const split = { ...query } as Record<PropertyKey, unknown>;
  for (const key of keys) split[key] = parseCsv(query[key] as Csv<string> | undefined);
  return split as CsvSplit<Q, K>;
}

export function iso(date: Date): string;
export function iso(date: Date | null): string | null;
export function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

/** What a row must hold for `viewOf`: each shown field's value, a timestamp as a Date where the view has a string. */
export type ViewSource<View> = { [Key in keyof View]: View[Key] | (string extends View[Key] ? Date : never) };

/**
 * A row as a response schema shows it: exactly the schema's properties, in its order, timestamps as ISO strings. The
 * schema is the one list of what the API shows, so a column it does not name stays out of responses and events.
 */
export function viewOf<Schema extends TObject>(schema: Schema, row: ViewSource<Static<Schema>>): Static<Schema> {
  const source = row as Record<string, unknown>;
  const view: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = source[key];
    view[key] = value instanceof Date ? value.toISOString() : value;
  }
  return view as Static<Schema>;
}

/** `?include_archived=true` on an admin route that reads an archived audit table (rows older than 90 days). */
export const IncludeArchived = Type.Optional(
  Type.Boolean({
    default: false,
    description:
      'Also read the cold archive: audit rows older than 90 days, moved there by the audit-archival job (`archived_at` set)',
  }),
);
