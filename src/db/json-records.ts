import { sql, type RawBuilder } from 'kysely';

/**
 * Rows for an `insert ... select` as one JSON parameter read by `jsonb_populate_recordset` (typed by the table's row
 * type), instead of one bind value per column per row: a batch of 128 payments is one parameter, not 3,000. The
 * column list is the rows' keys, so a column they leave out gets its default. jsonb, not json: the document is parsed
 * once, and a jsonb column (an event's payload, a stored response) takes its part without parsing it again. The
 * caller writes the INSERT itself (the module that owns the table): `insert into t (${columns}) select ... from ${records}`.
 */
export function jsonRecords(table: string, rows: readonly Record<string, unknown>[]): { columns: RawBuilder<unknown>; records: RawBuilder<unknown> } {
  const first = rows[0];
  if (!first) throw new Error(`jsonRecords(${table}): no rows`);
  const columns = sql.join(Object.keys(first).map((column) => sql.id(column)));
  return { columns, records: sql`jsonb_populate_recordset(null::${sql.id(table)}, ${JSON.stringify(rows)}::jsonb)` };
}
