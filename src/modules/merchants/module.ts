import { defineModule } from '../module.ts';
import { CredentialCache } from './credential-cache.ts';
import { createAuthenticator } from './credentials.ts';
import { merchantsAdminRoutes } from './routes.ts';
import { resolveServiceSecrets } from './secrets.ts';
import type { MerchantsDeps, WebhookSetupPort } from './service.ts';

/**
 * Merchants and their credentials (API keys, JWTs, sessions), the authenticator every route uses, and the service
 * secrets. The lowest business module: merchant creation reaches the webhooks module only through `WebhookSetupPort`.
 */
export const merchantsModule = defineModule({
  name: 'merchants',
  owns: ['merchants', 'api_keys', 'merchant_sessions', 'credential_epoch'],
  calls: [],
  start: async ({ config, db, clock }, needs: { webhooks: WebhookSetupPort }) => {
    const secrets = await resolveServiceSecrets(db, config);
    const key_cache = new CredentialCache(db);
    const jwt_max_lifetime_seconds = config.jwt_max_lifetime_seconds;
    const deps: MerchantsDeps = {
      db,
      clock,
      secrets: secrets.secrets,
      webhooks: needs.webhooks,
      key_cache,
      jwt_max_lifetime_seconds,
    };
    return {
      deps,
      secrets,
      key_cache,
      authenticator: createAuthenticator({
        db,
        clock,
        secrets: secrets.secrets,
        cache: key_cache,
        jwt_max_lifetime_seconds,
      }),
      routes: async (server) => void (await server.register(merchantsAdminRoutes, { deps })),
    };
  },
});
