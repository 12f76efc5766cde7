import { idempotent } from '../../../http/idempotency.ts';
import { ok, PAYMENT_ID_PATTERN } from '../../../http/schemas.ts';
import { AppError } from '../../../lib/errors.ts';
import { getCheckoutForMerchant } from '../../checkout/view.ts';
import { PAYMENT_STATUSES } from '../../payments/schema.ts';
import type { PaymentStatus } from '../../payments/tables.ts';
import { getPayment, listPayments } from '../../payments/service.ts';
import { paymentIdByOrderId } from '../../payments/stats.ts';
import { qrPng } from '../../reference/promptpay.ts';
import { SCENARIOS, simulatePayment, type Scenario } from '../../sandbox/service.ts';
import { csvCell } from '../../settlements/present.ts';
import { listDeliveries, listEvents, redeliver } from '../../webhooks/service.ts';
import { can, securityHeaders, sendPage } from '../context.ts';
import { scenarioUnknown, simulateInSandboxView } from '../errors.ts';
import { currencyField, isoDay, minorField, queryOf, safeBack, withFormKey } from '../forms.ts';
import { html } from '../html.ts';
import { paymentDetailPage, paymentsPage } from '../pages/payments.ts';
import { noticeOf, redirect, type DashboardDeps, type PageRouter, type Signed } from '../routing.ts';
import { listRefunds } from '../../refunds/service.ts';

const PAYMENT_ID = new RegExp(PAYMENT_ID_PATTERN);

/** The list's status filter: one status, or `succeeded` for every payment whose money arrived (completed or settled). */
function statusFilter(value: string | undefined): PaymentStatus[] | undefined {
  if (value === 'succeeded') return ['completed', 'settled'];
  const status = PAYMENT_STATUSES.find((candidate) => candidate === value);
  return status ? [status] : undefined;
}
const CSV_MAX_ROWS = 10_000;

/** A payment's page: its legs (with their QR while the buyer may pay), events, deliveries and refunds. */
export async function paymentDetail(
  deps: DashboardDeps,
  { id, context, session, scope }: Signed,
  extra: { notice?: string | undefined; error?: string | undefined; values?: Record<string, string> },
): Promise<string> {
  const payment = await getPayment(deps.payments, scope, id);
  const checkout = payment.match_details.length ? await getCheckoutForMerchant(deps.payments, scope, id) : null;
  const qr_data_urls = new Map<number, string>();
  if (checkout && (payment.status === 'matched' || payment.status === 'payment_pending')) {
    for (const leg of checkout.legs) {
      if (leg.payee.type === 'promptpay')
        qr_data_urls.set(
          leg.match_order,
          `data:image/png;base64,${(await qrPng(leg.payee.qr_payload)).toString('base64')}`,
        );
    }
  }
  const events = (await listEvents(deps.webhooks, scope, { resource_id: payment.id, limit: 100 })).data;
  const deliveries = (
    await Promise.all(events.map((event) => listDeliveries(deps.webhooks, scope, { event_id: event.id, limit: 20 })))
  ).flatMap((page) => page.data);
  const refunds = (await listRefunds(deps.refunds, scope, { payment_id: payment.id, limit: 100 })).data;
  return paymentDetailPage(context, {
    payment,
    checkout,
    qr_data_urls,
    events,
    deliveries,
    can_redeliver: can(session, 'webhooks'),
    refunds,
    can_refund: can(session, 'money'),
    ...extra,
  });
}

export function paymentRoutes({ deps, get, post }: PageRouter): void {
  get(
    '/dashboard/payments',
    'Payments: filters, search by payment id, order id or its start, cursor paging',
    {},
    async ({ request, reply, context, session, scope }) => {
      const query = queryOf(request);
      const status = statusFilter(query['status']);
      const filter = {
        status: status ? query['status'] : undefined,
        from: query['from'],
        to: query['to'],
        q: query['q']?.trim().slice(0, 255),
      };
      const can_simulate = can(session, 'simulate');
      if (filter.q) {
        // A payment id or a whole order id opens that payment; otherwise the order ids that start with the text.
        const id = PAYMENT_ID.test(filter.q) ? filter.q : await paymentIdByOrderId(deps.payments.db, scope, filter.q);
        if (id) {
          try {
            await getPayment(deps.payments, scope, id);
            return redirect(reply, `/dashboard/payments/${encodeURIComponent(id)}`);
          } catch (error) {
            if (!(error instanceof AppError && error.code === 'NOT_FOUND')) throw error;
          }
        }
      }
      const cursor = query['cursor']?.slice(0, 512);
      const list = await listPayments(deps.payments, scope, {
        status,
        order_id_prefix: filter.q,
        from: isoDay(filter.from),
        to: isoDay(filter.to, 1),
        cursor,
        limit: 25,
      });
      if (filter.q && !list.data.length && !cursor) {
        return sendPage(
          reply,
          paymentsPage(context, {
            filter,
            payments: [],
            next_cursor: null,
            can_simulate,
            error: `${context.t('not_found_title')}: ${filter.q}`,
          }),
          404,
        );
      }
      return sendPage(
        reply,
        paymentsPage(context, {
          filter,
          payments: list.data,
          next_cursor: list.next_cursor,
          cursor,
          can_simulate,
          notice: noticeOf(context, query),
        }),
      );
    },
  );

  get(
    '/dashboard/payments/export.csv',
    "Payments as CSV (the list's filters, at most 10,000 rows)",
    {},
    async ({ request, reply, scope }) => {
      const query = queryOf(request);
      const status = statusFilter(query['status']);
      const lines = ['id,order_id,status,currency,amount_minor,amount,created_at,completed_at,failure_reason'];
      let cursor: string | undefined;
      do {
        const page = await listPayments(deps.payments, scope, {
          status,
          order_id_prefix: query['q']?.trim().slice(0, 255) || undefined,
          from: isoDay(query['from']),
          to: isoDay(query['to'], 1),
          cursor,
          limit: 100,
        });
        for (const payment of page.data) {
          lines.push(
            [
              payment.id,
              payment.order_id,
              payment.status,
              payment.currency,
              payment.amount,
              payment.amount_decimal,
              payment.created_at,
              payment.completed_at ?? '',
              payment.failure_reason ?? '',
            ]
              .map(csvCell)
              .join(','),
          );
        }
        cursor = page.next_cursor ?? undefined;
      } while (cursor && lines.length <= CSV_MAX_ROWS);
      return securityHeaders(reply)
        .type('text/csv; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="payments-${scope.is_sandbox ? 'sandbox' : 'live'}.csv"`)
        .send(`${lines.join('\r\n')}\r\n`);
    },
  );

  /** A refused simulation: the first page of payments again, the message inline, the form as it was typed. */
  const simulateAgain = async ({ context, session, scope, form }: Signed, error: string) => {
    const list = await listPayments(deps.payments, scope, { limit: 25 });
    return paymentsPage(context, {
      filter: {},
      payments: list.data,
      next_cursor: list.next_cursor,
      can_simulate: can(session, 'simulate'),
      error,
      values: form,
    });
  };

  post(
    '/dashboard/payments/simulate',
    'Sandbox: simulate a payment scenario',
    { permission: 'simulate', on_error: simulateAgain },
    async ({ request, reply, scope, form }) => {
      if (!scope.is_sandbox) throw simulateInSandboxView();
      const scenario = form['scenario'] as Scenario;
      if (!SCENARIOS.includes(scenario)) throw scenarioUnknown(SCENARIOS);
      const order_id = form['order_id']?.trim();
      withFormKey(request, form);
      const result = await idempotent(deps.sandbox, request, reply, { required: false }, async (trx) => ({
        status: 201,
        body: ok(
          await simulatePayment(deps.sandbox, trx, scope, {
            scenario,
            amount: minorField(form, 'amount'),
            currency: currencyField(form, 'currency'),
            ...(order_id ? { order_id: order_id.slice(0, 255) } : {}),
          }),
        ),
      }));
      return redirect(reply, `/dashboard/payments/${encodeURIComponent(result.data.payment.id)}?notice=done`);
    },
  );

  get(
    '/dashboard/payments/:id',
    'Payment detail: timeline, legs, QR, checkout link, refunds, events and deliveries',
    { id_pattern: PAYMENT_ID },
    async (signed) =>
      sendPage(
        signed.reply,
        await paymentDetail(deps, signed, { notice: noticeOf(signed.context, signed.request.query) }),
      ),
  );

  post(
    '/dashboard/webhook-deliveries/:id/redeliver',
    'Redeliver a webhook delivery',
    { permission: 'webhooks' },
    async ({ request, id, reply, context, scope, form }) => {
      const delivery = await redeliver(deps.webhooks, scope, id);
      if (request.headers['hx-request'] === 'true') {
        return securityHeaders(reply)
          .type('text/html; charset=utf-8')
          .send(html`<span class="status" role="status">${context.t('redelivered')} (${delivery.status})</span>`.value);
      }
      const back = safeBack(form['back'], '/dashboard/developers');
      return redirect(reply, `${back.split('?')[0]}?notice=redelivered`);
    },
  );
}
