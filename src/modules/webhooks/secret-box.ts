import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import { keepSetting } from '../../db/settings.ts';
import { sealIssuedWebhookSecrets } from '../merchants/issued-secret.ts';

/**
 * Webhook signing secrets at rest: the service must sign with the raw secret, so it cannot hash it; it seals it with
 * AES-256-GCM instead, under a key that is not in the database, so a dump of the database alone cannot forge a
 * delivery. The row id is the additional authenticated data, so a sealed secret copied onto another endpoint's row
 * does not open.
 *
 * Where the key comes from (resolveWebhookSecretsKey):
 * - `WEBHOOK_SECRETS_KEY` (32 bytes, base64 or hex): what production sets, the same on every process;
 * - else, on the embedded default (PGlite in DATA_DIR): `DATA_DIR/webhook-secrets.key`, generated once, mode 0600;
 * - else (memory://, or PostgreSQL without the variable): kept in the `settings` table like the generated JWT key.
 *   That protects nothing against a dump, so on PostgreSQL start-up warns to set WEBHOOK_SECRETS_KEY.
 */
export const KEY_FILE_NAME = 'webhook-secrets.key';
const SETTINGS_KEY = 'webhook_secrets_key';
const SEALED_PREFIX = 'v1.';
const KEY_BYTES = 32;
const IV_BYTES = 12;

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`webhook secrets key must be ${KEY_BYTES} bytes`);
    this.#key = key;
  }

  seal(secret: string, row_id: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(row_id));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${SEALED_PREFIX}${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${ciphertext.toString('base64')}`;
  }

  /** Opens a sealed secret; throws when the key, the row or the bytes do not match. */
  open(sealed: string, row_id: string): string {
    if (!isSealed(sealed)) throw new Error('webhook secret is not sealed');
    const [iv, tag, ciphertext] = sealed.slice(SEALED_PREFIX.length).split('.');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv ?? '', 'base64'));
    decipher.setAAD(Buffer.from(row_id));
    decipher.setAuthTag(Buffer.from(tag ?? '', 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext ?? '', 'base64')), decipher.final()]).toString('utf8');
  }
}

export function isSealed(value: string): boolean {
  return value.startsWith(SEALED_PREFIX);
}

/** 32 bytes written as 64 hex digits or as base64; anything else is a configuration error. */
export function parseSecretsKey(raw: string): Buffer {
  const trimmed = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== KEY_BYTES)
    throw new Error(`WEBHOOK_SECRETS_KEY must be ${KEY_BYTES} bytes as 64 hex digits or base64`);
  return key;
}

export async function resolveWebhookSecretsKey(
  db: Db,
  config: Pick<Config, 'webhook_secrets_key' | 'database_url' | 'data_dir'>,
  logger?: Logger,
): Promise<Buffer> {
  if (config.webhook_secrets_key) return parseSecretsKey(config.webhook_secrets_key);
  const in_memory = config.data_dir === 'memory://' || config.data_dir === ':memory:';
  if (!config.database_url && !in_memory) {
    mkdirSync(config.data_dir, { recursive: true });
    const path = join(config.data_dir, KEY_FILE_NAME);
    if (!existsSync(path)) {
      try {
        // wx: two processes starting together do not overwrite each other's key.
        writeFileSync(path, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    chmodSync(path, 0o600);
    return parseSecretsKey(readFileSync(path, 'utf8'));
  }
  if (config.database_url) {
    logger?.warn(
      'WEBHOOK_SECRETS_KEY is not set: webhook secrets are sealed with a key kept in the database, so a database dump can forge deliveries; set WEBHOOK_SECRETS_KEY in production',
    );
  }
  return parseSecretsKey(await keepSetting(db, SETTINGS_KEY, randomBytes(KEY_BYTES).toString('base64')));
}

/**
 * Seals every secret still in plaintext (left by migration 0100 or by a writer before it), so none stays readable
 * in the database after the first start. Idempotent; runs before the server answers.
 */
export async function sealPlaintextSecrets(db: Db, box: SecretBox): Promise<number> {
  return db.transaction().execute(async (trx) => {
    let sealed = 0;
    const endpoints = await trx
      .selectFrom('webhook_endpoints')
      .select(['id', 'secret_sealed', 'previous_secret_sealed'])
      .where((eb) =>
        eb.or([
          eb('secret_sealed', 'not like', `${SEALED_PREFIX}%`),
          eb('previous_secret_sealed', 'not like', `${SEALED_PREFIX}%`),
        ]),
      )
      .forUpdate()
      .execute();
    for (const row of endpoints) {
      const current = isSealed(row.secret_sealed) ? null : box.seal(row.secret_sealed, row.id);
      const previous =
        row.previous_secret_sealed && !isSealed(row.previous_secret_sealed)
          ? box.seal(row.previous_secret_sealed, row.id)
          : null;
      if (!current && !previous) continue;
      await trx
        .updateTable('webhook_endpoints')
        .set({
          ...(current ? { secret_sealed: current } : {}),
          ...(previous ? { previous_secret_sealed: previous } : {}),
        })
        .where('id', '=', row.id)
        .execute();
      sealed += 1;
    }
    return (
      sealed +
      (await sealIssuedWebhookSecrets(trx, SEALED_PREFIX, (secret, merchant_id) => box.seal(secret, merchant_id)))
    );
  });
}
