import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.ts';
import { formFields, readMultipartForm } from '../../http/multipart.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { AppError } from '../../lib/errors.ts';
import { merchantBalance, type BalanceDeps } from '../balance/service.ts';
import type { BuyOrdersDeps } from '../buy-orders/service.ts';
import type { DisputesDeps } from '../disputes/service.ts';
import type { CredentialCache } from '../merchants/credential-cache.ts';
import type { PaymentLinksDeps } from '../payment-links/service.ts';
import type { PaymentsDeps } from '../payments/service.ts';
import type { PendingFundsDeps } from '../pending-funds/service.ts';
import type { RefundsDeps } from '../refunds/service.ts';
import type { BankDirectory } from '../reference/banks.ts';
import type { SandboxDeps } from '../sandbox/service.ts';
import type { SellOrdersDeps } from '../sell-orders/service.ts';
import type { SettlementsDeps } from '../settlements/service.ts';
import type { WebhooksDeps } from '../webhooks/endpoints.ts';
import {
  backOf,
  can,
  checkCsrf,
  contextOf,
  currentSession,
  errorPage,
  securityHeaders,
  sendPage,
  statusOfError,
  type Permission,
} from './context.ts';
import { confirmationRequired, csrfMismatch } from './errors.ts';
import { pathId, type Form } from './forms.ts';
import type { MessageKey } from './i18n.ts';
import type { PageContext } from './layout.ts';
import type { RequestLog } from './request-log.ts';
import type { DashboardSession, UsersDeps } from './users.ts';

export interface DashboardDeps {
  users: UsersDeps;
  /** API key rolls forget the process's key cache. */
  key_cache: CredentialCache;
  payments: PaymentsDeps & { banks: BankDirectory };
  payment_links: PaymentLinksDeps;
  refunds: RefundsDeps;
  sandbox: SandboxDeps & { db: Db };
  webhooks: WebhooksDeps;
  pending_funds: PendingFundsDeps;
  balance: BalanceDeps;
  sell_orders: SellOrdersDeps;
  buy_orders: BuyOrdersDeps;
  disputes: DisputesDeps;
  settlements: SettlementsDeps;
  /** Secure cookies when PUBLIC_BASE_URL is https. */
  secure_cookies: boolean;
  /** Each key's recent API calls. */
  request_log: RequestLog;
}

/** What a signed-in handler gets: the request, its session and page context, the merchant scope and the form. */
export interface Signed {
  request: FastifyRequest;
  reply: FastifyReply;
  session: DashboardSession;
  context: PageContext;
  scope: MerchantScope;
  form: Form;
  file?: { data: Buffer; mimetype: string } | undefined;
  /** The route's `:id`, checked against `id_pattern` before the handler runs (anything else is the 404 page). */
  id: string;
}

export interface GuardOptions {
  permission?: Permission;
  multipart?: boolean;
  /** A destructive action: the form carries its ticked confirmation box (`confirm=yes`), checked before the handler. */
  confirm?: boolean;
  /** What the route's `:id` must match (default a UUID). */
  id_pattern?: RegExp;
  /** The form's page again, with this message inline and the typed values kept (`signed.form`). */
  on_error?: (signed: Signed, message: string) => Promise<string>;
}

export type Handler = (signed: Signed) => Promise<unknown>;

/** Notices a redirect may ask a page to show (`?notice=`): fixed words only, never text from the URL. */
const NOTICES: readonly MessageKey[] = ['redelivered', 'done', 'password_changed'];

// Pages for people, not the integrators' API: kept out of /openapi.json (and so out of the SDK, the fuzz and security
// suites, which test/dashboard covers instead).
export const PAGE_SCHEMA = (summary: string) => ({ hide: true, tags: ['dashboard'], summary, produces: ['text/html'] });

export function noticeOf(context: PageContext, query: unknown): string | undefined {
  const key = (query as { notice?: string } | undefined)?.notice;
  return key && (NOTICES as readonly string[]).includes(key) ? context.t(key as MessageKey) : undefined;
}

export function redirect(reply: FastifyReply, location: string): FastifyReply {
  return securityHeaders(reply).redirect(location, 303);
}

/** A merchant without a PAY account yet (never funded) has no balance: the pages say so instead of failing. */
export async function balanceOrNull(deps: DashboardDeps, scope: MerchantScope) {
  try {
    return await merchantBalance(deps.balance, scope, scope.merchant_id);
  } catch (error) {
    if (error instanceof AppError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}

/**
 * Every signed-in route: session, role, the body (form or multipart), CSRF on anything but GET, then the handler.
 * A refusal re-renders the form's page with the message inline and what was typed (`on_error`), or is an error page
 * in the page's language that links back.
 */
function signedIn(deps: DashboardDeps, options: GuardOptions, handler: Handler) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await currentSession(deps.users, request);
    const anonymous = contextOf(request, null);
    if (!session) {
      if (request.method === 'GET') return redirect(reply, `/dashboard/sign-in`);
      return sendPage(reply, errorPage(anonymous, 401, anonymous.t('sign_in'), '/dashboard/sign-in'), 401);
    }
    const context = contextOf(request, session);
    if (options.permission && !can(session, options.permission)) {
      return sendPage(
        reply,
        errorPage(context, 403, context.t('forbidden_body', { role: session.user.role }), backOf(request)),
        403,
      );
    }
    const scope: MerchantScope = { merchant_id: session.merchant.id, is_sandbox: session.mode === 'sandbox' };
    const signed: Signed = {
      request,
      reply,
      session,
      context,
      scope,
      form: {},
      id: '',
    };
    try {
      if (request.method !== 'GET') {
        if (options.multipart) {
          const parsed = request.isMultipart() ? await readMultipartForm(request) : { fields: {} };
          signed.form = parsed.fields;
          if (parsed.file?.data.length) signed.file = { data: parsed.file.data, mimetype: parsed.file.mimetype };
        } else {
          signed.form = formFields(request.body);
        }
        const header = request.headers['x-csrf-token'];
        if (!checkCsrf(session, signed.form['_csrf'] ?? (Array.isArray(header) ? header[0] : header)))
          throw csrfMismatch();
      }
      const { id } = request.params as { id?: string };
      if (id !== undefined) signed.id = pathId(request, options.id_pattern);
      if (options.confirm && request.method !== 'GET' && signed.form['confirm'] !== 'yes') throw confirmationRequired();
      // The API's shared helpers (idempotency) read the caller from the principal.
      request.principal = {
        kind: 'merchant',
        merchant_id: scope.merchant_id,
        user_id: session.user.id,
        via: 'session',
        is_sandbox: scope.is_sandbox,
        may_move_money: can(session, 'money'),
      };
      return await handler(signed);
    } catch (error) {
      const known = statusOfError(error, context);
      if (!known) throw error;
      if (options.on_error && request.method !== 'GET') {
        return sendPage(reply, await options.on_error(signed, known.message), known.status);
      }
      return sendPage(reply, errorPage(context, known.status, known.message, backOf(request)), known.status);
    }
  };
}

/** The Fastify instance of the dashboard plugin (TypeBox types for the few routes with a params or query schema). */
export type DashboardApp = Parameters<FastifyPluginAsyncTypebox>[0];

/** The route makers every dashboard page file registers its routes with. */
export interface PageRouter {
  app: DashboardApp;
  deps: DashboardDeps;
  get: (url: string, summary: string, options: GuardOptions, handler: Handler) => void;
  post: (url: string, summary: string, options: GuardOptions, handler: Handler) => void;
}

export function pageRouter(app: DashboardApp, deps: DashboardDeps): PageRouter {
  return {
    app,
    deps,
    get: (url, summary, options, handler) => {
      app.get(url, { config: { auth: 'public' }, schema: PAGE_SCHEMA(summary) }, signedIn(deps, options, handler));
    },
    post: (url, summary, options, handler) => {
      const consumes = [options.multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded'];
      app.post(
        url,
        { config: { auth: 'public', errors: [401, 403, 404, 409] }, schema: { ...PAGE_SCHEMA(summary), consumes } },
        signedIn(deps, options, handler),
      );
    },
  };
}
