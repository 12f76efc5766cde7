import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { preparedQuery } from '../../db/prepared.ts';
import type { Principal } from '../../http/principal.ts';
import { present } from '../../lib/assert.ts';
import { GroupCommit } from '../../lib/group-commit.ts';

/** Most credentials kept; beyond it the oldest entry goes first. */
export const CREDENTIAL_CACHE_MAX_ENTRIES = 10_000;
/** The longest an entry is kept from when it was stored (a bound for memory, not for revocation). */
export const CREDENTIAL_CACHE_MAX_AGE_MS = 60_000;

export type CachedPrincipal = Extract<Principal, { kind: 'key' | 'merchant' | 'seller' }>;

interface Entry {
  principal: CachedPrincipal;
  /** Null for a seller key (no merchant). */
  merchant_id: string | null;
  /** The credential epoch the entry was read under. */
  epoch: number;
  /** The credential's own end (a rolled key's grace, a token's exp, a session's absolute or idle end), capped by max age. */
  until_ms: number;
}

const readEpoch = preparedQuery<{ epoch: number }, []>((db) =>
  db.selectFrom('credential_epoch').select(sql<number>`epoch`.as('epoch')),
);

/**
 * Verified credentials of every kind (API keys and seller keys by their SHA-256, merchant JWTs, dashboard sessions), keyed by kind
 * and credential, so a request whose credential was verified before reads no key, session or merchant row. The cache
 * only grants: a credential it does not hold, or holds past its own end, is read from the database again (which may
 * refuse it).
 *
 * Invalidation holds in every process from the change's commit: every change that takes a right away moves the
 * credential epoch in its transaction (sql/mpay_credentials_changed.sql), and an entry is trusted only while the
 * epoch read after the request arrived is the one it was read under. The epoch read is shared: the requests that
 * arrive while one is in flight share the next (a GroupCommit of one in flight), so a request costs a fraction of
 * one tiny prepared statement instead of a key, session or merchant read.
 */
export class CredentialCache {
  readonly #entries = new Map<string, Entry>();
  readonly #max_entries: number;
  readonly #max_age_ms: number;
  readonly #epochs: GroupCommit<null, number>;

  constructor(db: Db, options: { max_entries?: number; max_age_ms?: number } = {}) {
    this.#max_entries = options.max_entries ?? CREDENTIAL_CACHE_MAX_ENTRIES;
    this.#max_age_ms = options.max_age_ms ?? CREDENTIAL_CACHE_MAX_AGE_MS;
    this.#epochs = new GroupCommit(
      async (waiting) => {
        const [row] = await readEpoch(db);
        const epoch = Number(present(row, 'credential_epoch has its row').epoch);
        return waiting.map(() => epoch);
      },
      {
        max_in_flight: 1,
        max_batch: Number.MAX_SAFE_INTEGER,
        // a database that does not answer fails every waiting request at once (each would fail alone anyway)
        refusesEveryItem: () => true,
      },
    );
  }

  /** The credential epoch, read after this call (shared with the calls beside it). */
  epoch(): Promise<number> {
    return this.#epochs.submit(null);
  }

  /** The entry read under `epoch` (the current one), while the credential's own end is ahead. */
  get<Kind extends CachedPrincipal>(key: string, epoch: number, now_ms: number): Kind | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.epoch !== epoch || entry.until_ms <= now_ms) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.principal as Kind;
  }

  /**
   * The entry and the epoch it was read under, whatever the current epoch, while the credential's own end is ahead:
   * for a request whose statement carries the epoch check (auth.ts, `credential_epoch: 'carried'`), so it pays no
   * epoch read of its own and trusts the entry only if its statement saw that same epoch.
   */
  peek<Kind extends CachedPrincipal>(key: string, now_ms: number): { principal: Kind; epoch: number } | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until_ms <= now_ms) {
      this.#entries.delete(key);
      return undefined;
    }
    return { principal: entry.principal as Kind, epoch: entry.epoch };
  }

  /** Keeps a credential verified from rows read after `epoch` was read, until `until_ms` (its own end) at most. */
  set(key: string, principal: CachedPrincipal, epoch: number, until_ms: number, now_ms: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.#max_entries)
      this.#entries.delete(present(this.#entries.keys().next().value, 'a full cache has a first entry'));
    this.#entries.set(key, {
      principal,
      merchant_id: principal.kind === 'seller' ? null : principal.merchant_id,
      epoch,
      until_ms: Math.min(until_ms, now_ms + this.#max_age_ms),
    });
  }

  /** Forgets every cached credential of a merchant at once in this process (its keys were rolled here). */
  forgetMerchant(merchant_id: string): void {
    for (const [key, entry] of this.#entries) if (entry.merchant_id === merchant_id) this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
