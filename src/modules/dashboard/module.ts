import { SignInThrottle } from '../../http/sign-in-throttle.ts';
import { defineModule } from '../module.ts';
import { dashboardAdminRoutes } from './admin-routes.ts';
import { dashboardRoutes, type DashboardDeps } from './routes.ts';

/**
 * The merchant dashboard: the same services as the API behind dashboard sign-in; owns its users. The top
 * of the graph: it calls every module whose pages it shows and none calls it.
 */
export const dashboardModule = defineModule({
  name: 'dashboard',
  owns: ['merchant_users', 'dashboard_settings'],
  calls: ['audit', 'balance', 'buy-orders', 'checkout', 'disputes', 'ledger', 'merchants', 'payments', 'pending-funds', 'reference', 'sandbox', 'sell-orders', 'settlements', 'webhooks'],
  start: ({ config, db, clock }, needs: Omit<DashboardDeps, 'users' | 'secure_cookies'>) => {
    const sign_in = new SignInThrottle({ now_ms: () => clock.now().getTime(), max_delay_ms: config.sign_in_max_delay_ms });
    const users = { db, clock, public_base_url: config.public_base_url, sign_in };
    const deps: DashboardDeps = { ...needs, users, secure_cookies: config.public_base_url.startsWith('https://') };
    return {
      routes: async (server) => {
        await server.register(dashboardAdminRoutes, { deps: users });
        await server.register(dashboardRoutes, { deps });
      },
    };
  },
});
