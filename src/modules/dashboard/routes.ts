import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { backOf, contextOf, currentSession, errorPage, errorText, sendPage, statusOfError } from './context.ts';
import { pageNotFound } from './errors.ts';
import { authRoutes } from './routes/auth.ts';
import { balanceRoutes } from './routes/balance.ts';
import { developerRoutes } from './routes/developers.ts';
import { homeRoutes } from './routes/home.ts';
import { linkRoutes } from './routes/links.ts';
import { paymentRoutes } from './routes/payments.ts';
import { refundRoutes } from './routes/refunds.ts';
import { settlementRoutes } from './routes/settlements.ts';
import { teamRoutes } from './routes/team.ts';
import { PAGE_SCHEMA, pageRouter, type DashboardDeps } from './routing.ts';

export type { DashboardDeps } from './routing.ts';

/** The dashboard's pages, one file of routes per page under routes/ (their HTML under pages/). */
export const dashboardRoutes: FastifyPluginAsyncTypebox<{ deps: DashboardDeps }> = async (app, { deps }) => {
  await app.register(formbody, { bodyLimit: 64 * 1024 });

  // A request the framework refuses before a handler runs (unreadable or oversized body, a query the schema refuses)
  // is a page too; anything that is not the client's fault goes on to the server's own handler.
  app.setErrorHandler(async (error, request, reply) => {
    const context = contextOf(request, null);
    const known = statusOfError(error, context);
    if (!known) throw error;
    return sendPage(reply, errorPage(context, known.status, known.message, backOf(request)), known.status);
  });

  const router = pageRouter(app, deps);
  for (const routes of [
    authRoutes,
    homeRoutes,
    paymentRoutes,
    refundRoutes,
    linkRoutes,
    balanceRoutes,
    settlementRoutes,
    developerRoutes,
    teamRoutes,
  ])
    routes(router);

  // Any other /dashboard path is a page that says so, in the person's language, with the way back.
  app.all(
    '/dashboard/*',
    { config: { auth: 'public', errors: [404] }, schema: PAGE_SCHEMA('No such dashboard page (404)') },
    async (request, reply) => {
      const session = request.url.length <= 2048 ? await currentSession(deps.users, request) : null;
      const context = contextOf(request, session);
      return sendPage(reply, errorPage(context, 404, errorText(context, pageNotFound()), backOf(request)), 404);
    },
  );
};
