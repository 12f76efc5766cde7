import type { Executor, Trx } from '../../db/database.ts';

/**
 * The webhook secret issued with a merchant (POST /admin/merchants) waits, sealed, in the merchant row's
 * `webhook_secret` until the live default endpoint exists. The merchants module owns that row; the webhooks module
 * reads, replaces and takes the secret through these functions (sealing is the webhooks module's secret box).
 */

/** Serialises one merchant's webhook-endpoint changes (the per-mode limit and the one default per mode). */
export async function lockMerchant(trx: Trx, merchant_id: string): Promise<void> {
  await trx.selectFrom('merchants').select('id').where('id', '=', merchant_id).forUpdate().executeTakeFirstOrThrow();
}

/** The sealed issued secret, or null once an endpoint took it. */
export async function readIssuedWebhookSecret(executor: Executor | Trx, merchant_id: string): Promise<string | null> {
  const merchant = await executor
    .selectFrom('merchants')
    .select('webhook_secret')
    .where('id', '=', merchant_id)
    .executeTakeFirstOrThrow();
  return merchant.webhook_secret;
}

/** Replaces the waiting secret (a sealed value), or clears it with null when an endpoint takes it over. */
export async function setIssuedWebhookSecret(trx: Trx, merchant_id: string, sealed: string | null): Promise<void> {
  await trx.updateTable('merchants').set({ webhook_secret: sealed }).where('id', '=', merchant_id).execute();
}

/**
 * Seals every waiting secret still in plaintext (one without `sealed_prefix`, left by a store from before sealing);
 * returns how many it sealed.
 */
export async function sealIssuedWebhookSecrets(
  trx: Trx,
  sealed_prefix: string,
  seal: (secret: string, merchant_id: string) => string,
): Promise<number> {
  const merchants = await trx
    .selectFrom('merchants')
    .select(['id', 'webhook_secret'])
    .where('webhook_secret', 'not like', `${sealed_prefix}%`)
    .forUpdate()
    .execute();
  let sealed = 0;
  for (const row of merchants) {
    if (row.webhook_secret === null || row.webhook_secret.startsWith(sealed_prefix)) continue;
    await setIssuedWebhookSecret(trx, row.id, seal(row.webhook_secret, row.id));
    sealed += 1;
  }
  return sealed;
}
