import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { idempotent } from '../../http/idempotency.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { ok, PAYMENT_ID_PATTERN } from '../../http/schemas.ts';
import { AppError } from '../../lib/errors.ts';
import { CURRENCIES, isCurrency, type Currency } from '../../lib/money.ts';
import { merchantBalance, type BalanceDeps } from '../balance/service.ts';
import { cancelBuyOrder, createBuyOrder, listBuyOrders, type BuyOrdersDeps } from '../buy-orders/service.ts';
import { getMerchantDispute, listMerchantDisputes, openMerchantDispute, type DisputesDeps } from '../disputes/service.ts';
import type { ApiKeyCache } from '../merchants/credentials.ts';
import { listApiKeys, rollApiKey } from '../merchants/keys.ts';
import { getCheckoutForMerchant } from '../checkout/view.ts';
import { getPayment, listPayments, type PaymentsDeps } from '../payments/service.ts';
import { dailyPaymentStats, paymentIdByOrderId } from '../payments/stats.ts';
import { listPendingFunds, receiverConfirm, type PendingFundsDeps } from '../pending-funds/service.ts';
import type { BankDirectory } from '../reference/banks.ts';
import { qrPng } from '../reference/promptpay.ts';
import { SCENARIOS, simulatePayment, type SandboxDeps, type Scenario } from '../sandbox/service.ts';
import { applyCashLeg, cancelSellOrder, checkCashLegEvidence, createSellOrder, listSellOrders, type SellOrdersDeps } from '../sell-orders/service.ts';
import { csvCell } from '../settlements/present.ts';
import { exportSettlementCsv, getSettlement, listSettlementPayments, listSettlements, type SettlementsDeps } from '../settlements/service.ts';
import { createEndpoint, listEndpoints, revealEndpointSecret, rotateEndpointSecret, type WebhooksDeps } from '../webhooks/endpoints.ts';
import { listDeliveries, listEvents, recoverSince, redeliver } from '../webhooks/service.ts';
import { asset } from './assets.ts';
import {
  can,
  checkCsrf,
  clearedSessionCookie,
  contextOf,
  currentSession,
  errorPage,
  LANG_COOKIE,
  securityHeaders,
  sendPage,
  sessionCookie,
  statusOfError,
  type Permission,
} from './context.ts';
import { majorToMinor, payToMicro } from './format.ts';
import { html } from './html.ts';
import type { MessageKey } from './i18n.ts';
import type { PageContext } from './layout.ts';
import { accountPage, invitePage, signInPage } from './pages/auth.ts';
import { balancePage, disputePage } from './pages/balance.ts';
import { developersPage, type DevelopersModel } from './pages/developers.ts';
import { homePage } from './pages/home.ts';
import { paymentDetailPage, paymentsPage } from './pages/payments.ts';
import { PAYMENT_STATUSES } from '../payments/schema.ts';
import { settlementDetailPage, settlementsPage } from './pages/settlements.ts';
import { acceptInvitation, changePassword, checkSignIn, findInvitation, openSession, SESSION_ABSOLUTE_MS, setSessionMode, signOut, type DashboardSession, type UsersDeps } from './users.ts';
import { present } from '../../lib/assert.ts';
import { confirmInLiveView, fiatAmountInvalid, fieldNotOneOf, fieldRequired, graceHoursOutOfRange, payAmountInvalid, paymentNotFound, receiptFileRequired, scenarioUnknown, simulateInSandboxView, sinceInvalid } from './errors.ts';

export interface DashboardDeps {
  users: UsersDeps;
  /** API key rolls forget the process's key cache. */
  key_cache: ApiKeyCache;
  payments: PaymentsDeps & { banks: BankDirectory };
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
}

type Form = Record<string, string>;

interface Signed {
  request: FastifyRequest;
  reply: FastifyReply;
  session: DashboardSession;
  context: PageContext;
  scope: MerchantScope;
  form: Form;
  file?: { data: Buffer; mimetype: string } | undefined;
}

interface GuardOptions {
  permission?: Permission;
  multipart?: boolean;
}

/** Notices a redirect may ask a page to show (`?notice=`): fixed words only, never text from the URL. */
const NOTICES: readonly MessageKey[] = ['redelivered', 'done', 'password_changed'];

const PAYMENT_ID = new RegExp(PAYMENT_ID_PATTERN);
// Pages for people, not the integrators' API: kept out of /openapi.json (and so out of the SDK, the fuzz and security suites,
// which test/dashboard covers instead).
const PAGE_SCHEMA = (summary: string) => ({ hide: true, tags: ['dashboard'], summary, produces: ['text/html'] });
const DAY_MS = 24 * 3600 * 1000;
const CSV_MAX_ROWS = 10_000;

function formOf(body: unknown): Form {
  const form: Form = {};
  if (body && typeof body === 'object') {
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      if (typeof value === 'string') form[key] = value;
      else if (Array.isArray(value) && typeof value[0] === 'string') form[key] = value[0];
    }
  }
  return form;
}

async function readMultipart(request: FastifyRequest): Promise<{ form: Form; file?: { data: Buffer; mimetype: string } }> {
  const form: Form = {};
  let file: { data: Buffer; mimetype: string } | undefined;
  if (!request.isMultipart()) return { form };
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      const data = await part.toBuffer();
      if (!file && data.length > 0) file = { data, mimetype: part.mimetype };
    } else if (typeof part.value === 'string') {
      form[part.fieldname] = part.value;
    }
  }
  return file ? { form, file } : { form };
}

/** `back` targets stay inside the dashboard (no open redirect). */
function safeBack(value: string | undefined, fallback: string): string {
  return value && /^\/dashboard(\/[\w\-./#?=&%]*)?$/.test(value) && !value.startsWith('//') ? value : fallback;
}

function noticeOf(context: PageContext, query: unknown): string | undefined {
  const key = (query as { notice?: string } | undefined)?.notice;
  return key && (NOTICES as readonly string[]).includes(key) ? context.t(key as MessageKey) : undefined;
}

function isoDay(value: string | undefined, plus_days = 0): string | undefined {
  if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const at = new Date(`${value}T00:00:00.000Z`);
  if (Number.isNaN(at.getTime())) return undefined;
  return new Date(at.getTime() + plus_days * DAY_MS).toISOString();
}

function requireField(form: Form, name: string): string {
  const value = form[name]?.trim();
  if (!value) throw fieldRequired(name);
  return value;
}

function currencyField(form: Form, name: string): Currency {
  const value = requireField(form, name);
  if (!isCurrency(value)) throw fieldNotOneOf(name, CURRENCIES);
  return value;
}

function minorField(form: Form, name: string): number {
  const minor = majorToMinor(requireField(form, name));
  if (minor === null || minor <= 0) throw fiatAmountInvalid(name);
  return minor;
}

function microPayField(form: Form, name: string): number {
  const micro = payToMicro(requireField(form, name));
  if (micro === null || micro <= 0) throw payAmountInvalid(name);
  return micro;
}

/** Runs a dashboard form through the API's idempotency mechanism, keyed by the form's one-time `_key`. */
function withFormKey(request: FastifyRequest, form: Form): void {
  const key = form['_key'];
  if (key) request.headers['idempotency-key'] = key;
}

/**
 * The `:id` of a dashboard route's path. Dashboard pages are HTML forms without a params schema (Fastify's router
 * guarantees the segment is there, not its shape); each handler checks the id's form where it matters.
 */
function pathId(request: FastifyRequest): string {
  return (request.params as { id: string }).id;
}

export const dashboardRoutes: FastifyPluginAsyncTypebox<{ deps: DashboardDeps }> = async (app, { deps }) => {
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  const cookie_options = { secure: deps.secure_cookies, max_age_seconds: Math.floor(SESSION_ABSOLUTE_MS / 1000) };

  /** Every signed-in route: session, CSRF on anything but GET, role, then the handler; domain errors become pages. */
  function signedIn(options: GuardOptions, handler: (signed: Signed) => Promise<unknown>) {
    return async (request: FastifyRequest, reply: FastifyReply) => {
      const session = await currentSession(deps.users, request);
      const anonymous = contextOf(request, null);
      if (!session) {
        if (request.method === 'GET') return securityHeaders(reply).redirect(`/dashboard/sign-in`, 303);
        return sendPage(reply, errorPage(anonymous, 401, anonymous.t('sign_in')), 401);
      }
      const context = contextOf(request, session);
      let form: Form = {};
      let file: Signed['file'];
      if (request.method !== 'GET') {
        if (options.multipart) {
          const parsed = await readMultipart(request);
          form = parsed.form;
          file = parsed.file;
        } else {
          form = formOf(request.body);
        }
        const header = request.headers['x-csrf-token'];
        if (!checkCsrf(session, form['_csrf'] ?? (Array.isArray(header) ? header[0] : header))) {
          return sendPage(reply, errorPage(context, 403, 'The form\'s security token is missing or out of date. Reload the page and try again.'), 403);
        }
      }
      if (options.permission && !can(session, options.permission)) {
        return sendPage(reply, errorPage(context, 403, context.t('forbidden_body', { role: session.user.role })), 403);
      }
      const scope: MerchantScope = { merchant_id: session.merchant.id, is_sandbox: session.mode === 'sandbox' };
      // The API's shared helpers (idempotency) read the caller from the principal.
      request.principal = { kind: 'merchant', merchant_id: scope.merchant_id, user_id: session.user.id, via: 'session', is_sandbox: scope.is_sandbox, may_move_money: can(session, 'money') };
      try {
        return await handler({ request, reply, session, context, scope, form, file });
      } catch (error) {
        const known = statusOfError(error);
        if (!known) throw error;
        return sendPage(reply, errorPage(context, known.status, known.message), known.status);
      }
    };
  }

  /** A merchant without a PAY account yet (never funded) has no balance: the pages say so instead of failing. */
  async function balanceOrNull(scope: MerchantScope) {
    try {
      return await merchantBalance(deps.balance, scope, scope.merchant_id);
    } catch (error) {
      if (error instanceof AppError && error.code === 'NOT_FOUND') return null;
      throw error;
    }
  }

  const redirect = (reply: FastifyReply, location: string) => securityHeaders(reply).redirect(location, 303);
  const get = (url: string, summary: string, options: GuardOptions, handler: (signed: Signed) => Promise<unknown>) =>
    app.get(url, { config: { auth: 'public' }, schema: PAGE_SCHEMA(summary) }, signedIn(options, handler));
  const post = (url: string, summary: string, options: GuardOptions, handler: (signed: Signed) => Promise<unknown>) =>
    app.post(url, { config: { auth: 'public', errors: [401, 403, 404, 409] }, schema: { ...PAGE_SCHEMA(summary), consumes: [options.multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded'] } }, signedIn(options, handler));

  // ---- static assets, language, sign-in, invitation ----

  app.get('/dashboard/assets/:name', { config: { auth: 'public', rate_limit: false, errors: [404] }, schema: { hide: true, tags: ['dashboard'], summary: 'Dashboard scripts and styles (htmx and Chart.js from the package, no CDN)', params: Type.Object({ name: Type.String({ maxLength: 64 }) }) } }, async (request, reply) => {
    const file = asset(request.params.name);
    if (!file) return reply.status(404).type('text/plain').send('not found');
    return reply.header('Cache-Control', 'public, max-age=3600').header('X-Content-Type-Options', 'nosniff').type(file.type).send(file.body);
  });

  app.get(
    '/dashboard/lang',
    { config: { auth: 'public' }, schema: { ...PAGE_SCHEMA('Switch the dashboard language (cookie) and go back'), querystring: Type.Object({ to: Type.Optional(Type.String({ maxLength: 4 })), back: Type.Optional(Type.String({ maxLength: 2048 })) }) } },
    async (request, reply) => {
      const lang = request.query.to === 'th' ? 'th' : 'en';
      reply.header('Set-Cookie', `${LANG_COOKIE}=${lang}; Path=/dashboard; SameSite=Lax; Max-Age=31536000${deps.secure_cookies ? '; Secure' : ''}`);
      return redirect(reply, safeBack(request.query.back, '/dashboard'));
    },
  );

  app.get('/dashboard/sign-in', { config: { auth: 'public' }, schema: PAGE_SCHEMA('Sign-in page') }, async (request, reply) => {
    if (await currentSession(deps.users, request)) return redirect(reply, '/dashboard');
    return sendPage(reply, signInPage(contextOf(request, null), { notice: noticeOf(contextOf(request, null), request.query) }));
  });

  app.post(
    '/dashboard/sign-in',
    { config: { auth: 'public', errors: [401, 403, 429] }, schema: { ...PAGE_SCHEMA('Sign in with email and password (form post); repeated failures are refused per address and slowed per email'), consumes: ['application/x-www-form-urlencoded'] } },
    async (request, reply) => {
      const context = contextOf(request, null);
      // No session yet, so no synchronizer token: a cross-site sign-in post is refused by its Origin instead.
      const origin = request.headers.origin;
      if (origin && origin !== `${request.protocol}://${request.headers.host}` && origin !== new URL(deps.users.public_base_url).origin) {
        return sendPage(reply, errorPage(context, 403, 'Cross-site sign-in refused'), 403);
      }
      const form = formOf(request.body);
      const email = (form['email'] ?? '').slice(0, 320);
      const outcome = await checkSignIn(deps.users, email, form['password'] ?? '', request.ip);
      if (!outcome.ok) {
        if (outcome.reason === 'limited') {
          reply.header('Retry-After', String(outcome.retry_after_seconds));
          return sendPage(reply, signInPage(context, { email, error: context.t('sign_in_limited', { minutes: String(Math.ceil(outcome.retry_after_seconds / 60)) }) }), 429);
        }
        return sendPage(reply, signInPage(context, { email, error: context.t('invalid_credentials') }), 401);
      }
      const { token } = await openSession(deps.users, outcome.user_id);
      reply.header('Set-Cookie', sessionCookie(token, cookie_options));
      return redirect(reply, '/dashboard');
    },
  );

  app.get('/dashboard/invite/:token', { config: { auth: 'public' }, schema: { ...PAGE_SCHEMA('Invitation: set a password'), params: Type.Object({ token: Type.String({ maxLength: 128 }) }) } }, async (request, reply) => {
    const invitation = await findInvitation(deps.users, request.params.token);
    return sendPage(reply, invitePage(contextOf(request, null), { token: request.params.token, email: invitation?.email ?? null }), invitation ? 200 : 404);
  });

  app.post(
    '/dashboard/invite/:token',
    { config: { auth: 'public', errors: [401, 404] }, schema: { ...PAGE_SCHEMA('Invitation: set the password (one use) and sign in'), params: Type.Object({ token: Type.String({ maxLength: 128 }) }), consumes: ['application/x-www-form-urlencoded'] } },
    async (request, reply) => {
      const context = contextOf(request, null);
      const invitation = await findInvitation(deps.users, request.params.token);
      if (!invitation) return sendPage(reply, invitePage(context, { token: request.params.token, email: null }), 404);
      try {
        const { user_id } = await acceptInvitation(deps.users, request.params.token, formOf(request.body)['password'] ?? '');
        const { token } = await openSession(deps.users, user_id);
        reply.header('Set-Cookie', sessionCookie(token, cookie_options));
        return redirect(reply, '/dashboard');
      } catch (error) {
        const known = statusOfError(error);
        if (!known) throw error;
        return sendPage(reply, invitePage(context, { token: request.params.token, email: invitation.email, error: known.message }), known.status);
      }
    },
  );

  post('/dashboard/sign-out', 'Sign out (ends the session)', {}, async ({ reply, session }) => {
    await signOut(deps.users, session.session_id);
    reply.header('Set-Cookie', clearedSessionCookie(deps.secure_cookies));
    return redirect(reply, '/dashboard/sign-in');
  });

  post('/dashboard/mode', 'Switch the session between the live and the sandbox view', {}, async ({ reply, session, form }) => {
    await setSessionMode(deps.users, session.session_id, form['mode'] === 'sandbox' ? 'sandbox' : 'live');
    return redirect(reply, '/dashboard');
  });

  get('/dashboard/account', 'Account: change password', {}, async ({ request, reply, context }) => sendPage(reply, accountPage(context, { notice: noticeOf(context, request.query) })));

  post('/dashboard/account/password', 'Change the password (other sessions end)', {}, async ({ reply, session, context, form }) => {
    try {
      await changePassword(deps.users, session, form['current_password'] ?? '', form['new_password'] ?? '');
    } catch (error) {
      const known = statusOfError(error);
      if (!known) throw error;
      return sendPage(reply, accountPage(context, { error: known.message }), known.status);
    }
    return redirect(reply, '/dashboard/account?notice=password_changed');
  });

  // ---- home ----

  get('/dashboard', 'Home: volume, count and success rate per currency, PAY balance, things that need action', {}, async ({ reply, context, scope }) => {
    const now = deps.users.clock.now();
    const today = now.toISOString().slice(0, 10);
    const from = new Date(Date.parse(`${today}T00:00:00.000Z`) - 29 * DAY_MS);
    const days = Array.from({ length: 30 }, (_, index) => new Date(from.getTime() + index * DAY_MS).toISOString().slice(0, 10));
    const [stats, balance, pending, disputes, failed] = await Promise.all([
      dailyPaymentStats(deps.payments.db, scope, from),
      balanceOrNull(scope),
      listPendingFunds(deps.pending_funds, scope, { status: ['validated_pending_receiver_confirm'], limit: 100 }),
      listMerchantDisputes(deps.disputes, scope, { status: ['opened'], limit: 100 }),
      listDeliveries(deps.webhooks, scope, { status: ['failed'], limit: 100 }),
    ]);
    return sendPage(
      reply,
      homePage(context, { today, days, stats, balance, pending_to_confirm: pending.data.length, disputes_opened: disputes.data.length, failed_deliveries: failed.data.length }),
    );
  });

  // ---- payments ----

  get('/dashboard/payments', 'Payments: filters, id/order id search, cursor paging', {}, async ({ request, reply, context, session, scope }) => {
    const query = request.query as Record<string, string | undefined>;
    const filter = { status: PAYMENT_STATUSES.find((status) => status === query['status']), from: query['from'], to: query['to'], q: query['q']?.trim() };
    if (filter.q) {
      const id = PAYMENT_ID.test(filter.q) ? filter.q : await paymentIdByOrderId(deps.payments.db, scope, filter.q.slice(0, 255));
      if (id) {
        try {
          await getPayment(deps.payments, scope, id);
          return redirect(reply, `/dashboard/payments/${encodeURIComponent(id)}`);
        } catch (error) {
          if (!(error instanceof AppError && error.code === 'NOT_FOUND')) throw error;
        }
      }
      return sendPage(reply, paymentsPage(context, { filter, payments: [], next_cursor: null, can_simulate: can(session, 'simulate'), error: `${context.t('not_found_title')}: ${filter.q}` }), 404);
    }
    const cursor = query['cursor']?.slice(0, 512);
    const list = await listPayments(deps.payments, scope, { status: filter.status ? [filter.status] : undefined, from: isoDay(filter.from), to: isoDay(filter.to, 1), cursor, limit: 25 });
    return sendPage(reply, paymentsPage(context, { filter, payments: list.data, next_cursor: list.next_cursor, cursor, can_simulate: can(session, 'simulate'), notice: noticeOf(context, query) }));
  });

  get('/dashboard/payments/export.csv', 'Payments as CSV (the list\'s filters, at most 10,000 rows)', {}, async ({ request, reply, scope }) => {
    const query = request.query as Record<string, string | undefined>;
    const status = PAYMENT_STATUSES.find((candidate) => candidate === query['status']);
    const lines = ['id,order_id,status,currency,amount_minor,amount,created_at,completed_at,failure_reason'];
    let cursor: string | undefined;
    do {
      const page = await listPayments(deps.payments, scope, { status: status ? [status] : undefined, from: isoDay(query['from']), to: isoDay(query['to'], 1), cursor, limit: 100 });
      for (const payment of page.data) {
        lines.push([payment.id, payment.order_id, payment.status, payment.currency, payment.amount, payment.amount_decimal, payment.created_at, payment.completed_at ?? '', payment.failure_reason ?? ''].map(csvCell).join(','));
      }
      cursor = page.next_cursor ?? undefined;
    } while (cursor && lines.length <= CSV_MAX_ROWS);
    return securityHeaders(reply)
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="payments-${scope.is_sandbox ? 'sandbox' : 'live'}.csv"`)
      .send(`${lines.join('\r\n')}\r\n`);
  });

  post('/dashboard/payments/simulate', 'Sandbox: simulate a payment scenario', { permission: 'simulate' }, async ({ request, reply, scope, form }) => {
    if (!scope.is_sandbox) throw simulateInSandboxView();
    const scenario = form['scenario'] as Scenario;
    if (!SCENARIOS.includes(scenario)) throw scenarioUnknown(SCENARIOS);
    const order_id = form['order_id']?.trim();
    withFormKey(request, form);
    const result = await idempotent(deps.sandbox, request, reply, { required: false }, async (trx) => ({
      status: 201,
      body: ok(await simulatePayment(deps.sandbox, trx, scope, { scenario, amount: minorField(form, 'amount'), currency: currencyField(form, 'currency'), ...(order_id ? { order_id: order_id.slice(0, 255) } : {}) })),
    }));
    return redirect(reply, `/dashboard/payments/${encodeURIComponent(result.data.payment.id)}?notice=done`);
  });

  get('/dashboard/payments/:id', 'Payment detail: timeline, legs, QR, checkout link, events and deliveries', {}, async ({ request, reply, context, session, scope }) => {
    const id = pathId(request);
    if (!PAYMENT_ID.test(id)) throw paymentNotFound();
    const payment = await getPayment(deps.payments, scope, id);
    const checkout = payment.match_details.length ? await getCheckoutForMerchant(deps.payments, scope, id) : null;
    const qr_data_urls = new Map<number, string>();
    if (checkout && (payment.status === 'matched' || payment.status === 'payment_pending')) {
      for (const leg of checkout.legs) {
        if (leg.payee.type === 'promptpay') qr_data_urls.set(leg.match_order, `data:image/png;base64,${(await qrPng(leg.payee.qr_payload)).toString('base64')}`);
      }
    }
    const events = (await listEvents(deps.webhooks, scope, { resource_id: payment.id, limit: 100 })).data;
    const deliveries = (await Promise.all(events.map((event) => listDeliveries(deps.webhooks, scope, { event_id: event.id, limit: 20 })))).flatMap((page) => page.data);
    return sendPage(reply, paymentDetailPage(context, { payment, checkout, qr_data_urls, events, deliveries, can_redeliver: can(session, 'webhooks'), notice: noticeOf(context, request.query) }));
  });

  post('/dashboard/webhook-deliveries/:id/redeliver', 'Redeliver a webhook delivery', { permission: 'webhooks' }, async ({ request, reply, context, scope, form }) => {
    const delivery = await redeliver(deps.webhooks, scope, pathId(request));
    if (request.headers['hx-request'] === 'true') {
      return securityHeaders(reply).type('text/html; charset=utf-8').send(html`<span class="status" role="status">${context.t('redelivered')} (${delivery.status})</span>`.value);
    }
    const back = safeBack(form['back'], '/dashboard/developers');
    return redirect(reply, `${back.split('?')[0]}?notice=redelivered`);
  });

  // ---- balance and PAY ----

  get('/dashboard/balance', 'Balance and PAY: the seven fields, pending funds, sell and buy orders, disputes', {}, async ({ request, reply, context, session, scope }) => {
    const [balance, pending, sells, buys, disputes] = await Promise.all([
      balanceOrNull(scope),
      listPendingFunds(deps.pending_funds, scope, { limit: 50 }),
      listSellOrders(deps.sell_orders, scope, { limit: 50 }),
      listBuyOrders(deps.buy_orders, scope, { limit: 50 }),
      listMerchantDisputes(deps.disputes, scope, { limit: 50 }),
    ]);
    return sendPage(
      reply,
      balancePage(context, {
        balance,
        pending_funds: pending.data,
        sell_orders: sells.data,
        buy_orders: buys.data,
        disputes: disputes.data,
        can_move_money: can(session, 'money'),
        notice: noticeOf(context, request.query),
      }),
    );
  });

  post('/dashboard/pending-funds/:id/confirm', 'Receiver-confirm pending funds with a receipt (multipart `receipt`)', { permission: 'money', multipart: true }, async ({ request, reply, scope, file }) => {
    // The same rule as the API's receiver-confirm route: it moves live value.
    if (scope.is_sandbox) throw confirmInLiveView();
    if (!file) throw receiptFileRequired();
    await receiverConfirm(deps.pending_funds, scope, pathId(request), { receipt_base64: file.data.toString('base64'), content_type: file.mimetype });
    return redirect(reply, '/dashboard/balance?notice=done#pending-funds');
  });

  post('/dashboard/sell-orders', 'Create a sell order', { permission: 'money' }, async ({ request, reply, scope, form }) => {
    const input = { amount_micro_pay: microPayField(form, 'amount_pay'), currency: 'PAY' as const, target_currency: currencyField(form, 'target_currency'), target_fiat_amount: minorField(form, 'target_amount') };
    withFormKey(request, form);
    await idempotent(deps.sell_orders, request, reply, { required: false }, async (trx) => ({ status: 201, body: ok(await createSellOrder(deps.sell_orders, trx, scope, input, form['_key'])) }));
    return redirect(reply, '/dashboard/balance?notice=done#sell-orders');
  });

  post('/dashboard/sell-orders/:id/cancel', 'Cancel a pending sell order', { permission: 'money' }, async ({ request, reply, scope, form }) => {
    const id = pathId(request);
    withFormKey(request, form);
    await idempotent(deps.sell_orders, request, reply, { required: false }, async (trx) => ({ status: 200, body: ok(await cancelSellOrder(deps.sell_orders, trx, scope, id)) }));
    return redirect(reply, '/dashboard/balance?notice=done#sell-orders');
  });

  post('/dashboard/sell-orders/:id/confirm', 'Confirm a sell order\'s cash leg with evidence (multipart `receipt`)', { permission: 'money', multipart: true }, async ({ request, reply, scope, form, file }) => {
    const id = pathId(request);
    if (!file) throw receiptFileRequired();
    const input = { receipt_base64: file.data.toString('base64'), content_type: file.mimetype, ...(form['reference'] ? { reference: form['reference'].slice(0, 200) } : {}) };
    const evidence = await checkCashLegEvidence(deps.sell_orders, scope, id, input);
    await deps.sell_orders.db.transaction().execute((trx) => applyCashLeg(deps.sell_orders, trx, scope, id, input, evidence));
    return redirect(reply, '/dashboard/balance?notice=done#sell-orders');
  });

  post('/dashboard/buy-orders', 'Create a buy order', { permission: 'money' }, async ({ request, reply, scope, form }) => {
    const input = { amount_micro_pay: microPayField(form, 'amount_pay'), fiat_currency: currencyField(form, 'fiat_currency'), fiat_amount: minorField(form, 'fiat_amount') };
    withFormKey(request, form);
    await idempotent(deps.buy_orders, request, reply, { required: false }, async (trx) => ({ status: 201, body: ok(await createBuyOrder(deps.buy_orders, trx, scope, input)) }));
    return redirect(reply, '/dashboard/balance?notice=done#buy-orders');
  });

  post('/dashboard/buy-orders/:id/cancel', 'Cancel a pending buy order', { permission: 'money' }, async ({ request, reply, scope, form }) => {
    const id = pathId(request);
    withFormKey(request, form);
    await idempotent(deps.buy_orders, request, reply, { required: false }, async (trx) => ({ status: 200, body: ok(await cancelBuyOrder(deps.buy_orders, trx, scope, id)) }));
    return redirect(reply, '/dashboard/balance?notice=done#buy-orders');
  });

  post('/dashboard/disputes', 'Open a dispute on a sell order', { permission: 'money' }, async ({ request, reply, scope, session, form }) => {
    const input = { sell_order_id: requireField(form, 'sell_order_id'), notes: requireField(form, 'notes').slice(0, 2000) };
    withFormKey(request, form);
    const opened = await idempotent(deps.disputes, request, reply, { required: false }, async (trx) => ({
      status: 201,
      body: ok(await openMerchantDispute(deps.disputes, trx, scope, session.user.id, input)),
    }));
    return redirect(reply, `/dashboard/disputes/${opened.data.id}`);
  });

  get('/dashboard/disputes/:id', 'A dispute and its event log', {}, async ({ request, reply, context, scope }) => {
    const dispute = await getMerchantDispute(deps.disputes, scope, pathId(request));
    return sendPage(reply, disputePage(context, dispute));
  });

  // ---- settlements ----

  get('/dashboard/settlements', 'Settlement batches', {}, async ({ reply, context, scope }) => {
    const list = await listSettlements(deps.settlements.db, scope, { limit: 50 });
    return sendPage(reply, settlementsPage(context, { settlements: list.data }));
  });

  get('/dashboard/settlements/:id', 'A settlement batch: payments and fee arithmetic', {}, async ({ request, reply, context, scope }) => {
    const id = pathId(request);
    const settlement = await getSettlement(deps.settlements.db, scope, id);
    const payments = await listSettlementPayments(deps.settlements.db, scope, id, { limit: 100 });
    return sendPage(reply, settlementDetailPage(context, { settlement, payments: payments.data }));
  });

  get('/dashboard/settlements/:id/export.csv', 'A settlement batch as CSV', {}, async ({ request, reply, scope }) => {
    const { filename, csv } = await exportSettlementCsv(deps.settlements.db, scope, pathId(request));
    return securityHeaders(reply).type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${filename}"`).send(csv);
  });

  // ---- developers ----

  async function developersModel(signed: Signed, extra: Partial<DevelopersModel> = {}): Promise<DevelopersModel> {
    const { scope, session } = signed;
    const [keys, endpoints, deliveries, events] = await Promise.all([
      listApiKeys(deps.users, scope.merchant_id),
      listEndpoints(deps.webhooks, scope),
      listDeliveries(deps.webhooks, scope, { limit: 25 }),
      listEvents(deps.webhooks, scope, { limit: 25 }),
    ]);
    return { keys, endpoints, deliveries: deliveries.data, events: events.data, can_keys: can(session, 'keys'), can_webhooks: can(session, 'webhooks'), ...extra };
  }

  get('/dashboard/developers', 'Developers: API keys, webhook endpoints, deliveries, events', {}, async (signed) => {
    return sendPage(signed.reply, developersPage(signed.context, await developersModel(signed, { notice: noticeOf(signed.context, signed.request.query) })));
  });

  post('/dashboard/api-keys/:id/roll', 'Roll an API key: the new key is shown once, the old one works for a grace period', { permission: 'keys' }, async (signed) => {
    const hours = Number(signed.form['grace_hours'] ?? '24');
    if (!Number.isInteger(hours) || hours < 0 || hours > 168) throw graceHoursOutOfRange();
    const rolled = await rollApiKey({ ...deps.users, key_cache: deps.key_cache }, signed.scope.merchant_id, pathId(signed.request), hours * 3600);
    const { t } = signed.context;
    const revealed = html`${t('rolled', { kind: rolled.key.kind })}<span class="secret" id="new-key">${rolled.raw_key}</span><br>${t('rolled_grace', { until: rolled.previous.expires_at ?? '' })}`;
    return sendPage(signed.reply, developersPage(signed.context, await developersModel(signed, { revealed })));
  });

  post('/dashboard/webhook-endpoints', 'Create a webhook endpoint (its secret is shown once)', { permission: 'webhooks' }, async (signed) => {
    const { form } = signed;
    const enabled_events = (form['enabled_events'] ?? '*')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    const endpoint = await createEndpoint(deps.webhooks, signed.scope, {
      url: requireField(form, 'url'),
      ...(form['description']?.trim() ? { description: form['description'].trim().slice(0, 500) } : {}),
      enabled_events: enabled_events.length ? enabled_events : ['*'],
    });
    const revealed = html`${signed.context.t('secret_shown_once')}<span class="secret" id="endpoint-secret">${endpoint.secret}</span>`;
    return sendPage(signed.reply, developersPage(signed.context, await developersModel(signed, { revealed })), 201);
  });

  post('/dashboard/webhook-endpoints/:id/rotate', 'Rotate a webhook endpoint\'s secret (the new one is shown once)', { permission: 'webhooks' }, async (signed) => {
    const endpoint = await rotateEndpointSecret(deps.webhooks, signed.scope, pathId(signed.request));
    const revealed = html`${signed.context.t('secret_shown_once')}<span class="secret" id="endpoint-secret">${endpoint.secret}</span>`;
    return sendPage(signed.reply, developersPage(signed.context, await developersModel(signed, { revealed })));
  });

  post('/dashboard/webhook-endpoints/:id/reveal', 'Show a webhook endpoint\'s current signing secret', { permission: 'webhooks' }, async (signed) => {
    const endpoint = await revealEndpointSecret(deps.webhooks, signed.scope, pathId(signed.request));
    const revealed = html`${signed.context.t('secret_current')}<span class="secret" id="endpoint-secret">${endpoint.secret}</span>`;
    return sendPage(signed.reply, developersPage(signed.context, await developersModel(signed, { revealed })));
  });

  post('/dashboard/webhook-deliveries/recover', 'Redeliver every failed delivery since a time', { permission: 'webhooks' }, async (signed) => {
    const since_text = requireField(signed.form, 'since');
    const since = new Date(/Z|[+-]\d\d:\d\d$/.test(since_text) ? since_text : `${since_text}Z`);
    if (Number.isNaN(since.getTime())) throw sinceInvalid();
    const result = await recoverSince(deps.webhooks, signed.scope, since.toISOString());
    return sendPage(signed.reply, developersPage(signed.context, await developersModel(signed, { notice: signed.context.t('recovered', { n: result.requeued }) })));
  });
};
