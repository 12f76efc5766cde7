import type { Db, Trx } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { lockMerchant, readIssuedWebhookSecret, setIssuedWebhookSecret } from '../merchants/issued-secret.ts';
import type { WebhookSetupPort } from '../merchants/service.ts';
import {
  assertTargetAllowed,
  DEFAULT_ROTATION_GRACE_SECONDS,
  insertEndpoint,
  presentEndpoint,
  rotate,
  type WebhooksDeps,
} from './endpoints.ts';
import { sandboxEndpointNotSet } from './errors.ts';
import type { EndpointView } from './schema.ts';
import { generateWebhookSecret } from './signing.ts';
import type { EndpointRow } from './tables.ts';

/**
 * The single-endpoint shortcut (PUT /v1/webhook-endpoint): the default endpoint of the caller's mode, and the live
 * default that merchant creation sets up with the secret issued with the merchant.
 */

async function findDefault(trx: Trx | Db, scope: MerchantScope, lock: boolean): Promise<EndpointRow | undefined> {
  let select = trx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('merchant_id', '=', scope.merchant_id)
    .where('is_sandbox', '=', scope.is_sandbox)
    .where('is_default', '=', true)
    .where('deleted_at', 'is', null);
  if (lock) select = select.forUpdate();
  return select.executeTakeFirst();
}

/**
 * The secret issued with the merchant (POST /admin/merchants) before its live default endpoint exists: kept sealed on
 * the merchant row and moved onto the endpoint when the endpoint is created.
 */
async function takeIssuedSecret(deps: WebhooksDeps, trx: Trx, scope: MerchantScope): Promise<string | null> {
  if (scope.is_sandbox) return null;
  const issued = await readIssuedWebhookSecret(trx, scope.merchant_id);
  if (!issued) return null;
  await setIssuedWebhookSecret(trx, scope.merchant_id, null);
  return deps.box.open(issued, scope.merchant_id);
}

/**
 * Sets the caller's mode's default endpoint and returns it with its secret (shown here and on rotation only). The
 * live default created first uses the secret issued with the merchant; otherwise a new endpoint gets a new secret.
 */
export async function setDefaultEndpoint(
  deps: WebhooksDeps,
  scope: MerchantScope,
  url: string,
): Promise<{ url: string; secret: string; endpoint: EndpointView }> {
  await assertTargetAllowed(deps, scope.is_sandbox, url);
  return deps.db.transaction().execute(async (trx) => {
    await lockMerchant(trx, scope.merchant_id);
    const now = deps.clock.now();
    const existing = await findDefault(trx, scope, true);
    if (existing) {
      const row = await trx
        .updateTable('webhook_endpoints')
        .set({ url, updated_at: now })
        .where('id', '=', existing.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { url, secret: deps.box.open(row.secret_sealed, row.id), endpoint: presentEndpoint(row, now) };
    }
    const secret = (await takeIssuedSecret(deps, trx, scope)) ?? generateWebhookSecret();
    const row = await insertEndpoint(deps, trx, scope, { url, is_default: true, secret });
    return { url, secret, endpoint: presentEndpoint(row, now) };
  });
}

/** Creates the live default endpoint in the caller's transaction (POST /admin/merchants with a webhook_url). */
export async function createLiveDefaultEndpoint(
  deps: WebhooksDeps,
  trx: Trx,
  merchant_id: string,
  url: string,
  secret: string,
): Promise<void> {
  await insertEndpoint(deps, trx, { merchant_id, is_sandbox: false }, { url, is_default: true, secret });
}

/** What merchant creation needs from this module (the merchants module sits below webhooks and calls up through it). */
export function webhookSetupPort(deps: WebhooksDeps): WebhookSetupPort {
  return {
    generateSecret: generateWebhookSecret,
    assertLiveTargetAllowed: (url) => assertTargetAllowed(deps, false, url),
    seal: (secret, merchant_id) => deps.box.seal(secret, merchant_id),
    createLiveDefaultEndpoint: (trx, merchant_id, url, secret) =>
      createLiveDefaultEndpoint(deps, trx, merchant_id, url, secret),
  };
}

export async function getDefaultEndpoint(
  deps: WebhooksDeps,
  scope: MerchantScope,
): Promise<{ url: string | null; secret_set: boolean }> {
  const row = await findDefault(deps.db, scope, false);
  if (row) return { url: row.url, secret_set: true };
  if (scope.is_sandbox) return { url: null, secret_set: false };
  return { url: null, secret_set: (await readIssuedWebhookSecret(deps.db, scope.merchant_id)) !== null };
}

/**
 * Rotates the caller's mode's default endpoint's secret (overlap as rotateEndpointSecret). Before a live default
 * endpoint exists, the secret issued with the merchant is replaced instead; a sandbox caller without one is 409.
 */
export async function rotateDefaultSecret(
  deps: WebhooksDeps,
  scope: MerchantScope,
  grace_seconds = DEFAULT_ROTATION_GRACE_SECONDS,
): Promise<{ url: string | null; secret: string }> {
  return deps.db.transaction().execute(async (trx) => {
    await lockMerchant(trx, scope.merchant_id);
    const existing = await findDefault(trx, scope, true);
    if (existing) {
      const rotated = await rotate(deps, trx, existing, grace_seconds);
      return { url: rotated.url, secret: rotated.secret };
    }
    if (scope.is_sandbox) throw sandboxEndpointNotSet();
    const secret = generateWebhookSecret();
    await setIssuedWebhookSecret(trx, scope.merchant_id, deps.box.seal(secret, scope.merchant_id));
    return { url: null, secret };
  });
}
