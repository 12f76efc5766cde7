import { SignInThrottle } from '../../http/sign-in-throttle.ts';
import { defineModule } from '../module.ts';
import { dashboardAdminRoutes } from './admin-routes.ts';
import { RequestLog } from './request-log.ts';
import { dashboardRoutes, type DashboardDeps } from './routes.ts';

/**
 * The merchant dashboard: the same services as the API behind dashboard sign-in; owns its users. The top
 * of the graph: it calls every module whose pages it shows and none calls it.
 */
export const dashboardModule = defineModule({
  name: 'dashboard',
  owns: ['merchant_users', 'dashboard_settings', 'api_request_log'],
  calls: [
    'audit',
    'balance',
    'buy-orders',
    'checkout',
    'disputes',
    'ledger',
    'merchants',
    'payment-links',
    'payments',
    'pending-funds',
    'reference',
    'refunds',
    'sandbox',
    'sell-orders',
    'settlements',
    'validators',
    'webhooks',
  ],
  start: (
    { config, db, clock, logger, auth_counters },
    needs: Omit<DashboardDeps, 'users' | 'secure_cookies' | 'request_log'>,
  ) => {
    const sign_in = new SignInThrottle({
      counters: auth_counters,
      now_ms: () => clock.now().getTime(),
      max_delay_ms: config.sign_in_max_delay_ms,
    });
    const users = { db, clock, public_base_url: config.public_base_url, sign_in };
    const request_log = new RequestLog(db, clock, (error) =>
      logger.warn({ err: error }, 'api request log: a batch was not written'),
    );
    const deps: DashboardDeps = {
      ...needs,
      users,
      request_log,
      secure_cookies: config.public_base_url.startsWith('https://'),
    };
    return {
      jobs: [{ name: 'api-request-log-purge', interval_ms: 3600_000, run: () => request_log.purge() }],
      routes: async (server) => {
        // On the root, so it sees every route's response (the Developers page shows each key's calls).
        server.addHook('onResponse', request_log.hook);
        server.addHook('onClose', async () => request_log.flush());
        await server.register(dashboardAdminRoutes, { deps: users });
        await server.register(dashboardRoutes, { deps });
      },
    };
  },
});
