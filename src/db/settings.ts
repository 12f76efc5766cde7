import type { Executor, Trx } from './database.ts';

/**
 * `settings` is the store's key-value table for secrets generated on the first start (the JWT key, the hashed
 * service tokens, the webhook secrets key). The db layer owns it; each module keeps its own keys through these
 * functions and never writes the table itself.
 */
export async function readSettings(trx: Trx, options: { lock: boolean }): Promise<Map<string, string>> {
  const query = trx.selectFrom('settings').selectAll();
  const rows = await (options.lock ? query.forUpdate() : query).execute();
  return new Map(rows.map((row) => [row.key, row.value]));
}

/** Stores `value` under `key` unless a value is already there (another process may win the race); returns the stored one. */
export async function keepSetting(executor: Executor | Trx, key: string, value: string): Promise<string> {
  await executor
    .insertInto('settings')
    .values({ key, value })
    .onConflict((c) => c.column('key').doNothing())
    .execute();
  const winner = await executor.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return winner.value;
}
