import { idempotent } from '../../../http/idempotency.ts';
import { ok, PAYMENT_ID_PATTERN } from '../../../http/schemas.ts';
import { qrPng } from '../../reference/promptpay.ts';
import { uploadRefundProof } from '../../refunds/proofs.ts';
import { REFUND_FUNDINGS, REFUND_REASONS, REFUND_STATUSES, type CreateRefundInput } from '../../refunds/schema.ts';
import { cancelRefund, createRefund, getRefund, listRefunds } from '../../refunds/service.ts';
import type { RefundStatus } from '../../refunds/tables.ts';
import { checkProof } from '../../validators/receipt.ts';
import { can, errorPage, sendPage } from '../context.ts';
import { fieldNotOneOf, receiptFileRequired } from '../errors.ts';
import { minorField, queryOf, UUID, withFormKey, type Form } from '../forms.ts';
import { refundDetailPage, refundsPage } from '../pages/refunds.ts';
import { noticeOf, redirect, type DashboardDeps, type PageRouter, type Signed } from '../routing.ts';
import { paymentDetail } from './payments.ts';

const PAYMENT_ID = new RegExp(PAYMENT_ID_PATTERN);

/** The refund form as the API's body: an amount in major units (empty: what remains), a reason, who pays. */
function refundInput(form: Form): CreateRefundInput {
  const reason = form['reason']?.trim() || undefined;
  const funding = form['funding']?.trim() || undefined;
  if (reason !== undefined && !(REFUND_REASONS as readonly string[]).includes(reason))
    throw fieldNotOneOf('reason', REFUND_REASONS);
  if (funding !== undefined && !(REFUND_FUNDINGS as readonly string[]).includes(funding))
    throw fieldNotOneOf('funding', REFUND_FUNDINGS);
  return {
    ...(form['amount']?.trim() ? { amount: minorField(form, 'amount') } : {}),
    ...(reason ? { reason: reason as NonNullable<CreateRefundInput['reason']> } : {}),
    ...(funding ? { funding: funding as NonNullable<CreateRefundInput['funding']> } : {}),
  };
}

/** The list's status filter: one status or several, comma-separated (unknown values are ignored). */
function statusFilter(value: string | undefined): RefundStatus[] | undefined {
  const statuses = (value ?? '')
    .split(',')
    .filter((status): status is RefundStatus => (REFUND_STATUSES as readonly string[]).includes(status));
  return statuses.length ? statuses : undefined;
}

/** A refund's page: its state, the buyer's claim link and its QR while it has not ended, cancel and slip forms. */
async function refundDetail(
  deps: DashboardDeps,
  { id, context, session, scope }: Signed,
  extra: { notice?: string | undefined; error?: string | undefined },
): Promise<string> {
  const refund = await getRefund(deps.refunds, scope, id);
  const ended = refund.status === 'succeeded' || refund.status === 'failed' || refund.status === 'canceled';
  const qr_data_url = ended ? null : `data:image/png;base64,${(await qrPng(refund.claim_url)).toString('base64')}`;
  return refundDetailPage(context, { refund, qr_data_url, can_move_money: can(session, 'money'), ...extra });
}

/** Refunds: made from a payment's page, listed, each with its claim link and QR, canceled, its slip uploaded. */
export function refundRoutes({ deps, get, post }: PageRouter): void {
  const paymentAgain = async (signed: Signed, error: string) =>
    signed.id
      ? paymentDetail(deps, signed, { error, values: signed.form })
      : errorPage(signed.context, 404, error, '/dashboard/payments');
  const refundAgain = async (signed: Signed, error: string) =>
    signed.id ? refundDetail(deps, signed, { error }) : errorPage(signed.context, 404, error, '/dashboard/refunds');

  post(
    '/dashboard/payments/:id/refunds',
    "Refund a payment (the form's one-time key makes a double submit one refund)",
    { permission: 'money', id_pattern: PAYMENT_ID, on_error: paymentAgain },
    async ({ request, reply, scope, form, id }) => {
      const input = refundInput(form);
      withFormKey(request, form);
      const created = await idempotent(deps.refunds, request, reply, { required: false }, async (trx) => ({
        status: 201,
        body: ok(await createRefund(deps.refunds, trx, scope, id, input, form['_key'])),
      }));
      return redirect(reply, `/dashboard/refunds/${created.data.id}?notice=done`);
    },
  );

  get('/dashboard/refunds', 'Refunds: status filter, cursor paging', {}, async ({ request, reply, context, scope }) => {
    const query = queryOf(request);
    const status = statusFilter(query['status']);
    const payment_id = query['payment_id'] && PAYMENT_ID.test(query['payment_id']) ? query['payment_id'] : undefined;
    const cursor = query['cursor']?.slice(0, 512);
    const list = await listRefunds(deps.refunds, scope, { status, payment_id, cursor, limit: 25 });
    return sendPage(
      reply,
      refundsPage(context, {
        filter: { status: status?.join(','), payment_id },
        refunds: list.data,
        next_cursor: list.next_cursor,
        cursor,
      }),
    );
  });

  get(
    '/dashboard/refunds/:id',
    "A refund: its state, the buyer's claim link and QR, cancel, the transfer slip",
    { id_pattern: UUID },
    async (signed) =>
      sendPage(
        signed.reply,
        await refundDetail(deps, signed, { notice: noticeOf(signed.context, signed.request.query) }),
      ),
  );

  post(
    '/dashboard/refunds/:id/cancel',
    'Cancel a refund before the money moved',
    { permission: 'money', confirm: true, id_pattern: UUID, on_error: refundAgain },
    async ({ id, reply, scope }) => {
      await cancelRefund(deps.refunds, scope, id);
      return redirect(reply, `/dashboard/refunds/${id}?notice=done`);
    },
  );

  post(
    '/dashboard/refunds/:id/proof',
    'Upload the slip of your transfer to the buyer (multipart `proof`)',
    { permission: 'money', multipart: true, id_pattern: UUID, on_error: refundAgain },
    async ({ id, reply, scope, file }) => {
      if (!file) throw receiptFileRequired();
      await uploadRefundProof(deps.refunds, scope, id, checkProof(file.data));
      return redirect(reply, `/dashboard/refunds/${id}?notice=done`);
    },
  );
}
