import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';

/**
 * Runs `statements` in one round trip as one transaction: PostgreSQL's simple query protocol runs a query string of
 * several statements as a single implicit transaction (the first that fails rolls back them all), so a later
 * statement starts after the AFTER triggers of an earlier one have run, which one statement of CTEs cannot do. That
 * protocol has no bind parameters: each statement's parameters are inlined as literals (strings as escape-string
 * literals, numbers and booleans as written). PostgreSQL only: PGlite's driver takes one statement per query.
 */
export async function runInOneRoundTrip(db: Db, statements: readonly RawBuilder<unknown>[]): Promise<void> {
  const text = statements
    .map((statement) => {
      const compiled = statement.compile(db);
      // one pass over the compiled text: an inlined value is never read again, whatever it contains
      return compiled.sql.replace(/\$(\d+)/g, (_, position: string) => literal(compiled.parameters[Number(position) - 1]));
    })
    .join(';\n');
  await sql.raw(text).execute(db);
}

function literal(value: unknown): string {
  // E'...': a backslash and a quote are doubled, whatever standard_conforming_strings says (native replaceAll: a
  // batch's JSON is tens of kilobytes, which pg.escapeLiteral's character loop makes a measurable cost)
  if (typeof value === 'string') return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') return String(value);
  throw new Error(`runInOneRoundTrip: a ${typeof value} parameter cannot be inlined`);
}
