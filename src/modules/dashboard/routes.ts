import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { authRoutes } from './routes/auth.ts';
import { balanceRoutes } from './routes/balance.ts';
import { developerRoutes } from './routes/developers.ts';
import { homeRoutes } from './routes/home.ts';
import { paymentRoutes } from './routes/payments.ts';
import { settlementRoutes } from './routes/settlements.ts';
import { pageRouter, type DashboardDeps } from './routing.ts';

export type { DashboardDeps } from './routing.ts';

/** The dashboard's pages, one file of routes per page under routes/ (their HTML under pages/). */
export const dashboardRoutes: FastifyPluginAsyncTypebox<{ deps: DashboardDeps }> = async (app, { deps }) => {
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  const router = pageRouter(app, deps);
  for (const routes of [authRoutes, homeRoutes, paymentRoutes, balanceRoutes, settlementRoutes, developerRoutes]) routes(router);
};
