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

export function decodeCursor(cursor: string | undefined): CursorPosition | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [created_at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(created_at);
    if (typeof id !== 'string' || Number.isNaN(date.getTime())) throw new Error('bad cursor');
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
