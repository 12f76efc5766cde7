import { idempotent } from '../../../http/idempotency.ts';
import { ok } from '../../../http/schemas.ts';
import { cancelBuyOrder, createBuyOrder, listBuyOrders } from '../../buy-orders/service.ts';
import {
  disputeEvidenceOf,
  getMerchantDispute,
  listMerchantDisputes,
  openMerchantDispute,
} from '../../disputes/service.ts';
import { listPendingFunds, receiverConfirm } from '../../pending-funds/service.ts';
import {
  applyCashLeg,
  cancelSellOrder,
  checkCashLegEvidence,
  createSellOrder,
  listSellOrders,
  refundPayoutRules,
} from '../../sell-orders/service.ts';
import { can, sendPage } from '../context.ts';
import { confirmInLiveView, receiptFileRequired, sellOrderNotFound } from '../errors.ts';
import {
  currencyField,
  microPayField,
  minorField,
  payoutDestinationField,
  requireField,
  UUID,
  withFormKey,
} from '../forms.ts';
import { balancePage, disputePage, type BalanceModel } from '../pages/balance.ts';
import { balanceOrNull, noticeOf, redirect, type PageRouter, type Signed } from '../routing.ts';

/** Balance and PAY: pending funds, sell and buy orders, disputes. */
export function balanceRoutes({ deps, get, post }: PageRouter): void {
  async function balanceView(signed: Signed, extra: Partial<BalanceModel> = {}): Promise<string> {
    const { scope, session, context } = signed;
    const [balance, pending, sells, buys, disputes] = await Promise.all([
      balanceOrNull(deps, scope),
      listPendingFunds(deps.pending_funds, scope, { limit: 50 }),
      listSellOrders(deps.sell_orders, scope, { limit: 50 }),
      listBuyOrders(deps.buy_orders, scope, { limit: 50 }),
      listMerchantDisputes(deps.disputes, scope, { limit: 50 }),
    ]);
    const rules = await refundPayoutRules(
      deps.sell_orders,
      scope,
      sells.data.map((order) => order.id),
    );
    return balancePage(context, {
      balance,
      pending_funds: pending.data,
      sell_orders: sells.data,
      ...rules,
      buy_orders: buys.data,
      disputes: disputes.data,
      can_move_money: can(session, 'money'),
      ...extra,
    });
  }
  /** A refused balance form: the page again with the message and, for the create forms, what was typed. */
  const again = (form: string) => async (signed: Signed, error: string) =>
    balanceView(signed, { error, values: { ...signed.form, _form: form } });

  get(
    '/dashboard/balance',
    'Balance and PAY: the seven fields, pending funds, sell and buy orders, disputes',
    {},
    async (signed) => {
      return sendPage(
        signed.reply,
        await balanceView(signed, { notice: noticeOf(signed.context, signed.request.query) }),
      );
    },
  );

  post(
    '/dashboard/pending-funds/:id/confirm',
    'Receiver-confirm pending funds with a receipt (multipart `receipt`)',
    { permission: 'money', multipart: true, on_error: again('confirm') },
    async ({ id, reply, scope, file }) => {
      // The same rule as the API's receiver-confirm route: it moves live value.
      if (scope.is_sandbox) throw confirmInLiveView();
      if (!file) throw receiptFileRequired();
      await receiverConfirm(deps.pending_funds, scope, id, {
        receipt_base64: file.data.toString('base64'),
        content_type: file.mimetype,
      });
      return redirect(reply, '/dashboard/balance?notice=done#pending-funds');
    },
  );

  post(
    '/dashboard/sell-orders',
    'Create a sell order',
    { permission: 'money', on_error: again('sell') },
    async ({ request, reply, scope, form }) => {
      const input = {
        amount_micro_pay: microPayField(form, 'amount_pay'),
        currency: 'PAY' as const,
        target_currency: currencyField(form, 'target_currency'),
        target_fiat_amount: minorField(form, 'target_amount'),
        payout_destination: payoutDestinationField(form),
      };
      withFormKey(request, form);
      await idempotent(deps.sell_orders, request, reply, { required: false }, async (trx) => ({
        status: 201,
        body: ok(await createSellOrder(deps.sell_orders, trx, scope, input, form['_key'])),
      }));
      return redirect(reply, '/dashboard/balance?notice=done#sell-orders');
    },
  );

  post(
    '/dashboard/sell-orders/:id/cancel',
    'Cancel a pending sell order',
    { permission: 'money', on_error: again('cancel') },
    async ({ request, id, reply, scope, form }) => {
      withFormKey(request, form);
      await idempotent(deps.sell_orders, request, reply, { required: false }, async (trx) => ({
        status: 200,
        body: ok(await cancelSellOrder(deps.sell_orders, trx, scope, id)),
      }));
      return redirect(reply, '/dashboard/balance?notice=done#sell-orders');
    },
  );

  post(
    '/dashboard/sell-orders/:id/confirm',
    "Confirm a sell order's cash leg with evidence (multipart `receipt`)",
    { permission: 'money', multipart: true, on_error: again('cash-leg') },
    async ({ id, reply, scope, form, file }) => {
      if (!file) throw receiptFileRequired();
      const input = {
        receipt_base64: file.data.toString('base64'),
        content_type: file.mimetype,
        ...(form['reference'] ? { reference: form['reference'].slice(0, 200) } : {}),
      };
      const evidence = await checkCashLegEvidence(deps.sell_orders, scope, id, input);
      await deps.sell_orders.db
        .transaction()
        .execute((trx) => applyCashLeg(deps.sell_orders, trx, scope, id, input, evidence));
      return redirect(reply, '/dashboard/balance?notice=done#sell-orders');
    },
  );

  post(
    '/dashboard/buy-orders',
    'Create a buy order',
    { permission: 'money', on_error: again('buy') },
    async ({ request, reply, scope, form }) => {
      const input = {
        amount_micro_pay: microPayField(form, 'amount_pay'),
        fiat_currency: currencyField(form, 'fiat_currency'),
        fiat_amount: minorField(form, 'fiat_amount'),
      };
      withFormKey(request, form);
      await idempotent(deps.buy_orders, request, reply, { required: false }, async (trx) => ({
        status: 201,
        body: ok(await createBuyOrder(deps.buy_orders, trx, scope, input)),
      }));
      return redirect(reply, '/dashboard/balance?notice=done#buy-orders');
    },
  );

  post(
    '/dashboard/buy-orders/:id/cancel',
    'Cancel a pending buy order',
    { permission: 'money', on_error: again('cancel') },
    async ({ request, id, reply, scope, form }) => {
      withFormKey(request, form);
      await idempotent(deps.buy_orders, request, reply, { required: false }, async (trx) => ({
        status: 200,
        body: ok(await cancelBuyOrder(deps.buy_orders, trx, scope, id)),
      }));
      return redirect(reply, '/dashboard/balance?notice=done#buy-orders');
    },
  );

  post(
    '/dashboard/disputes',
    'Open a dispute on a sell order',
    { permission: 'money', on_error: again('dispute') },
    async ({ request, reply, scope, session, form }) => {
      const sell_order_id = requireField(form, 'sell_order_id');
      if (!UUID.test(sell_order_id)) throw sellOrderNotFound();
      const input = { sell_order_id, notes: requireField(form, 'notes').slice(0, 2000) };
      withFormKey(request, form);
      const opened = await idempotent(deps.disputes, request, reply, { required: false }, async (trx) => ({
        status: 201,
        body: ok(await openMerchantDispute(deps.disputes, trx, scope, session.user.id, input)),
      }));
      return redirect(reply, `/dashboard/disputes/${opened.data.id}`);
    },
  );

  get('/dashboard/disputes/:id', 'A dispute and its event log', {}, async ({ id, reply, context, scope }) => {
    const dispute = await getMerchantDispute(deps.disputes, scope, id);
    const evidence = await disputeEvidenceOf(deps.disputes, dispute.id);
    return sendPage(reply, disputePage(context, { ...dispute, evidence }));
  });
}
