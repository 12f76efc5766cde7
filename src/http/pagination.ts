import { sql, type Expression, type SqlBool } from 'kysely';
import { AppError } from '../lib/errors.ts';

/** Keyset position: newest first, on (created_at, id). Opaque to clients. */
export interface CursorPosition {
  created_at: Date;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.created_at.toISOString(), position.id])).toString('base64url');
}

/** What a cursor's id must look like for the table it pages: anything else would reach SQL as a bad uuid or bigint. */
const CURSOR_ID: Record<'uuid' | 'payment_id' | 'sequence', RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  payment_id: /^(sbx_)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  sequence: /^\d{1,15}$/,
};
// Timestamps we wrote: after 2000 and before 10000 (PostgreSQL and toISOString both hold these).
const CURSOR_MIN_MS = Date.UTC(2000, 0, 1);
const CURSOR_MAX_MS = Date.UTC(10_000, 0, 1);

/** The one cursor decoder: anything but a cursor this API returned for this list is 400, never a database error. */
export function decodeCursor(cursor: string | undefined, id_format: keyof typeof CURSOR_ID = 'uuid'): CursorPosition | undefined {
  if (cursor === undefined) return undefined;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(decoded) || decoded.length !== 2) throw new Error('bad cursor');
    const [created_at, id] = decoded as unknown[];
    if (typeof created_at !== 'string' || typeof id !== 'string' || !CURSOR_ID[id_format].test(id)) throw new Error('bad cursor');
    const date = new Date(created_at);
    const ms = date.getTime();
    if (!(ms >= CURSOR_MIN_MS && ms < CURSOR_MAX_MS)) throw new Error('bad cursor');
    return { created_at: date, id };
  } catch {
    throw new AppError('VALIDATION_ERROR', 'cursor is not a cursor this API returned', [{ field: 'querystring.cursor', message: 'invalid cursor' }]);
  }
}

/** `WHERE (created_at, id) < (cursor)`; pass the table alias when the query joins. */
export function afterCursor(position: CursorPosition, table?: string): Expression<SqlBool> {
  const created = table ? sql.ref(`${table}.created_at`) : sql.ref('created_at');
  const id = table ? sql.ref(`${table}.id`) : sql.ref('id');
  return sql<SqlBool>`(${created}, ${id}) < (${position.created_at}, ${position.id})`;
}

/** Rows were fetched with `limit + 1`: the extra row only says there is more. */
export function toPage<Row extends { created_at: Date; id: string }, Out>(rows: Row[], limit: number, present: (row: Row) => Out) {
  const has_more = rows.length > limit;
  const page = has_more ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return {
    data: page.map(present),
    has_more,
    next_cursor: has_more && last ? encodeCursor({ created_at: last.created_at, id: last.id }) : null,
  };
}
