import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { invalidCursor } from './http-errors.ts';

/** Keyset position: newest first, on (created_at, id). Opaque to clients. */
export interface CursorPosition {
  created_at: Date;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.created_at.toISOString(), position.id])).toString('base64url');
}

export type CursorIdFormat = 'uuid' | 'payment_id' | 'payment_link_id' | 'sequence';

/** What a cursor's id must look like for the table it pages: anything else would reach SQL as a bad uuid or bigint. */
const CURSOR_ID: Record<CursorIdFormat, RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  payment_id: /^(sbx_)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  payment_link_id: /^plink_[0-9a-f]{32}$/,
  sequence: /^\d{1,15}$/,
};
// Timestamps we wrote: after 2000 and before 10000 (PostgreSQL and toISOString both hold these).
const CURSOR_MIN_MS = Date.UTC(2000, 0, 1);
const CURSOR_MAX_MS = Date.UTC(10_000, 0, 1);

/** The one cursor decoder: anything but a cursor this API returned for this list is 400, never a database error. */
export function decodeCursor(
  cursor: string | undefined,
  id_format: CursorIdFormat = 'uuid',
): CursorPosition | undefined {
  if (cursor === undefined) return undefined;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(decoded) || decoded.length !== 2) throw new Error('bad cursor');
    const [created_at, id] = decoded as unknown[];
    if (typeof created_at !== 'string' || typeof id !== 'string' || !CURSOR_ID[id_format].test(id))
      throw new Error('bad cursor');
    const date = new Date(created_at);
    const ms = date.getTime();
    if (!(ms >= CURSOR_MIN_MS && ms < CURSOR_MAX_MS)) throw new Error('bad cursor');
    return { created_at: date, id };
  } catch {
    throw invalidCursor();
  }
}

/** Rows were fetched with `limit + 1`: the extra row only says there is more. */
export function toPage<Row, Out>(
  rows: Row[],
  limit: number,
  present: (row: Row) => Out,
  positionOf: (row: Row) => CursorPosition = defaultPosition as (row: Row) => CursorPosition,
) {
  const has_more = rows.length > limit;
  const page = has_more ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return {
    data: page.map(present),
    has_more,
    next_cursor: has_more && last ? encodeCursor(positionOf(last)) : null,
  };
}

const defaultPosition = (row: { created_at: Date; id: string }): CursorPosition => ({
  created_at: row.created_at,
  id: row.id,
});

/** What every list takes besides its filters: a cursor from `next_cursor` and a page size (schemas.ts `Cursor`, `Limit`). */
export interface PageQuery {
  cursor?: string | undefined;
  limit: number;
}

/** The keyset a list pages on, when it is not `(created_at, id)` of its rows. */
export interface Keyset<Row> {
  /** Columns (with their table alias when the query joins) compared with the cursor, newest first. */
  created_at: string;
  id: string;
  id_format: CursorIdFormat;
  /** The cursor position of a row (what `next_cursor` encodes). */
  positionOf: (row: Row) => CursorPosition;
}

/** Newest first on (created_at, id): the order every keyset here reads in, across several sources too. */
function newestFirst(a: CursorPosition, b: CursorPosition): number {
  return b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/**
 * The one list runner every list route calls: the caller's filtered select, read newest first on its keyset
 * (default `(created_at, id)`, prefixed by `table` when the query joins) after the cursor, `limit + 1` rows, as one
 * page `{data, has_more, next_cursor}`. A cursor this list did not return is 400, never a database error.
 * Several selects (a table and its archive, same keyset) are read alike and merged newest first into one page.
 */
export async function listPage<DB, TB extends keyof DB, Row, Out>(
  select: SelectQueryBuilder<DB, TB, Row> | readonly SelectQueryBuilder<DB, TB, Row>[],
  query: PageQuery,
  present: (row: Row) => Out,
  keyset: { table?: string; id_format?: CursorIdFormat } | Keyset<Row> = {},
) {
  const columns: Keyset<Row> =
    'positionOf' in keyset
      ? keyset
      : {
          created_at: keyset.table ? `${keyset.table}.created_at` : 'created_at',
          id: keyset.table ? `${keyset.table}.id` : 'id',
          id_format: keyset.id_format ?? 'uuid',
          positionOf: defaultPosition as (row: Row) => CursorPosition,
        };
  const position = decodeCursor(query.cursor, columns.id_format);
  const created = sql.ref(columns.created_at);
  const id = sql.ref(columns.id);
  const read = async (source: SelectQueryBuilder<DB, TB, Row>) => {
    const after = position
      ? source.where(
          sql<SqlBool>`(${created}, ${id}) < (${position.created_at}, ${columns.id_format === 'sequence' ? Number(position.id) : position.id})`,
        )
      : source;
    return (await after
      .orderBy(created, 'desc')
      .orderBy(id, 'desc')
      .limit(query.limit + 1)
      .execute()) as Row[];
  };
  const sources = Array.isArray(select) ? select : [select as SelectQueryBuilder<DB, TB, Row>];
  const pages: Row[][] = [];
  for (const source of sources) pages.push(await read(source));
  const rows =
    pages.length === 1
      ? (pages[0] ?? [])
      : pages
          .flat()
          .sort((a, b) => newestFirst(columns.positionOf(a), columns.positionOf(b)))
          .slice(0, query.limit + 1);
  return toPage(rows, query.limit, present, columns.positionOf);
}
