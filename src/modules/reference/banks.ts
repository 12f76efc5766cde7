import type { Db, Executor } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { bankDirectoryUnavailable } from './errors.ts';
import type { ReferenceTables } from './tables.ts';

/** A row of the Bank of Thailand's list, as the reference module's table holds it. */
export type ThaiBank = ReferenceTables['thai_banks'];

const CACHE_MS = 3600 * 1000;

/** The bank directory, read from the database and kept for an hour. */
export function createBankDirectory(db: Db, clock: Clock) {
  let cached: { banks: ThaiBank[]; loaded_ms: number } | undefined;
  return {
    /** `executor`: the caller's transaction, when it holds one (PGlite has a single connection). */
    async list(executor: Executor = db): Promise<ThaiBank[]> {
      const now_ms = clock.now().getTime();
      if (cached && now_ms - cached.loaded_ms < CACHE_MS) return cached.banks;
      try {
        const banks = await executor.selectFrom('thai_banks').selectAll().orderBy('code').execute();
        cached = { banks, loaded_ms: now_ms };
        return banks;
      } catch {
        throw bankDirectoryUnavailable();
      }
    },
    async byCode(code: string): Promise<ThaiBank | undefined> {
      return (await this.list()).find((bank) => bank.code === code);
    },
  };
}

export type BankDirectory = ReturnType<typeof createBankDirectory>;
