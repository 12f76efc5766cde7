import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import { keepSetting, readSettings } from '../../db/settings.ts';
import { randomBase62, sha256Hex } from '../../lib/crypto.ts';
import type { ServiceSecrets } from './credentials.ts';
import { present } from '../../lib/assert.ts';

export interface ResolvedSecrets {
  secrets: ServiceSecrets;
  /** Raw tokens generated on this start (first start only): printed once, stored only as hashes. */
  generated: { admin_token?: string; internal_token?: string };
}

/**
 * Service tokens come from the environment, or are generated on the first start and kept hashed in the store.
 * The JWT key must be kept raw to sign; it comes from JWT_SECRET or is generated once and kept in `settings`.
 */
export async function resolveServiceSecrets(
  db: Db,
  config: Pick<Config, 'admin_service_token' | 'internal_service_token' | 'jwt_secret'>,
): Promise<ResolvedSecrets> {
  return db.transaction().execute(async (trx) => {
    const stored = await readSettings(trx, { lock: true });
    const generated: ResolvedSecrets['generated'] = {};

    async function keep(key: string, value: string): Promise<void> {
      stored.set(key, await keepSetting(trx, key, value));
    }

    if (!config.jwt_secret && !stored.has('jwt_secret')) await keep('jwt_secret', randomBase62(48));
    if (!config.admin_service_token && !stored.has('admin_token_sha256')) {
      const token = `adm_${randomBase62(40)}`;
      await keep('admin_token_sha256', sha256Hex(token));
      if (stored.get('admin_token_sha256') === sha256Hex(token)) generated.admin_token = token;
    }
    if (!config.internal_service_token && !stored.has('internal_token_sha256')) {
      const token = `int_${randomBase62(40)}`;
      await keep('internal_token_sha256', sha256Hex(token));
      if (stored.get('internal_token_sha256') === sha256Hex(token)) generated.internal_token = token;
    }

    return {
      secrets: {
        jwt_secret: config.jwt_secret ?? present(stored.get('jwt_secret'), 'the first start stored jwt_secret'),
        admin_token_sha256: config.admin_service_token
          ? sha256Hex(config.admin_service_token)
          : present(stored.get('admin_token_sha256'), 'the first start stored admin_token_sha256'),
        internal_token_sha256: config.internal_service_token
          ? sha256Hex(config.internal_service_token)
          : present(stored.get('internal_token_sha256'), 'the first start stored internal_token_sha256'),
      },
      generated,
    };
  });
}
