import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { accounts } from '../../src/modules/ledger/port.ts';
import { disputesIssuanceAccount } from '../../src/modules/disputes/service.ts';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { ADMIN_HEADERS, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  balancesOf,
  createSell,
  expectError,
  fund,
  inFlightSell,
  merchantCall,
  MINT_SOURCE,
  PAY,
  receipt,
  scriptedValidator,
  sellBody,
} from '../helpers/orders.ts';

/** The `chargeback` kind can occur: an operator opens one (admin route, audited), and its resolutions move PAY as the table says. */
describe('chargebacks', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  const validator = scriptedValidator();

  before(async () => {
    t = await startTestApp({
      env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE, CASH_LEG_RETRY_MAX: '1' },
      overrides: { validator },
    });
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
    await fund(t, seller.id, 1_000 * PAY);
  });
  after(() => t.close());

  const admin = (
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    headers: Record<string, string> = ADMIN_HEADERS,
  ) => t.request({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
  const chargeback = (sell_order_id: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>) =>
    admin(
      'POST',
      '/admin/disputes',
      { kind: 'chargeback', sell_order_id, notes: 'the bank reversed the payout', ...extra },
      headers,
    );
  async function completedSell(jwt: string, amount: number) {
    const sell = await inFlightSell(t, jwt, buyer.jwt, amount);
    const done = await merchantCall(t, jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
      receipt_base64: receipt(),
      content_type: 'image/png',
    });
    assert.equal(done.json().data.status, 'completed', done.body);
    return sell;
  }
  async function failedMatchedSell(jwt: string, amount: number) {
    const sell = await inFlightSell(t, jwt, buyer.jwt, amount);
    validator.next.push('failed');
    await merchantCall(t, jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
      receipt_base64: receipt(),
      content_type: 'image/png',
    });
    await sweepSellOrders(t.application.payouts.sell_orders);
    return sell;
  }
  async function resolveChargeback(sell_order_id: string, outcome: string) {
    const opened = await chargeback(sell_order_id);
    assert.equal(opened.statusCode, 201, opened.body);
    const id = opened.json().data.id as string;
    assert.equal((await admin('POST', `/admin/disputes/${id}/investigate`, {})).statusCode, 200);
    return { id, resolved: await admin('POST', `/admin/disputes/${id}/resolve`, { outcome }) };
  }

  it('opens a chargeback: 201 kind chargeback, gateway.dispute.opened to the merchant, event log and admin_audit_log rows, no PAY moved', async () => {
    const sell = await completedSell(seller.jwt, 2 * PAY);
    const transfers = (await t.db.selectFrom('ledger_transfers').select('id').execute()).length;
    const response = await chargeback(sell.id, { reference: 'CB-2026-0042' });
    assert.equal(response.statusCode, 201, response.body);
    const dispute = response.json().data;
    assert.equal(dispute.kind, 'chargeback');
    assert.equal(dispute.status, 'opened');
    assert.equal(dispute.merchant_id, seller.id);
    assert.equal(dispute.sell_order_id, sell.id);
    assert.equal(dispute.opened_by_user_id, 'ops-1');
    assert.equal(dispute.resolution, null);
    assert.deepEqual(
      dispute.events.map((e: { action: string; actor_user_id: string; actor_role: string }) => [
        e.action,
        e.actor_user_id,
        e.actor_role,
      ]),
      [['opened', 'ops-1', 'super_admin']],
    );
    assert.equal(dispute.events[0].details.reference, 'CB-2026-0042');
    assert.equal((await t.db.selectFrom('ledger_transfers').select('id').execute()).length, transfers);
    const events = await t.db
      .selectFrom('events')
      .select(['type', 'merchant_id', 'payload'])
      .where('resource_id', '=', dispute.id)
      .execute();
    assert.deepEqual(
      events.map((e) => [e.type, e.merchant_id]),
      [['gateway.dispute.opened', seller.id]],
    );
    assert.equal((events[0]!.payload as { data: { kind: string; actor_user_id: string } }).data.kind, 'chargeback');
    assert.equal((events[0]!.payload as { data: { kind: string; actor_user_id: string } }).data.actor_user_id, 'ops-1');
    const audit = await t.db.selectFrom('admin_audit_log').selectAll().where('target_id', '=', dispute.id).execute();
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.action, 'dispute.chargeback_opened');
    assert.equal(audit[0]!.actor_user_id, 'ops-1');
    assert.equal(audit[0]!.target_type, 'dispute');
    assert.equal((audit[0]!.details as { reference: string }).reference, 'CB-2026-0042');
    // The merchant sees it in its own list.
    const mine = await merchantCall(t, seller.jwt, 'GET', '/v1/merchant-disputes?kind=chargeback');
    assert.deepEqual(
      mine.json().data.map((d: { id: string }) => d.id),
      [dispute.id],
    );
    // One unresolved dispute per sell order.
    expectError(await chargeback(sell.id), 409, 'DISPUTE_BAD_STATE');
  });

  it('refuses: 401 without the token, 403 for another role, 400 bad body, 404 unknown sell order, 409 for an order whose cash leg never ran', async () => {
    const pending = await createSell(t, seller.jwt, sellBody(PAY, 'USD'));
    const count = async () => (await t.db.selectFrom('disputes').select('id').execute()).length;
    const audit_count = async () => (await t.db.selectFrom('admin_audit_log').select('id').execute()).length;
    const [disputes_before, audit_before] = [await count(), await audit_count()];
    expectError(await chargeback(pending.id, {}, {}), 401, 'UNAUTHORIZED');
    expectError(
      await chargeback(pending.id, {}, { ...ADMIN_HEADERS, 'x-actor-role': 'support' }),
      403,
      'ADMIN_FORBIDDEN',
    );
    expectError(
      await merchantCall(t, seller.jwt, 'POST', '/admin/disputes', {
        kind: 'chargeback',
        sell_order_id: pending.id,
        notes: 'x',
      }),
      401,
      'UNAUTHORIZED',
    );
    for (const body of [
      { kind: 'merchant_dispute', sell_order_id: pending.id, notes: 'x' },
      { sell_order_id: pending.id, notes: 'x' },
      { kind: 'chargeback', sell_order_id: 'nope', notes: 'x' },
      { kind: 'chargeback', sell_order_id: pending.id, notes: '' },
      { kind: 'chargeback', sell_order_id: pending.id },
      { kind: 'chargeback', sell_order_id: pending.id, notes: 'x', reference: '' },
      { kind: 'chargeback', sell_order_id: pending.id, notes: 'x', amount: 5 },
    ]) {
      expectError(await admin('POST', '/admin/disputes', body), 400, 'VALIDATION_ERROR');
    }
    expectError(await chargeback(randomUUID()), 404, 'NOT_FOUND');
    expectError(await chargeback(pending.id), 409, 'DISPUTE_BAD_STATE');
    const cancelled = await createSell(t, seller.jwt, sellBody(PAY, 'USD'));
    assert.equal(
      (await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${cancelled.id}/cancel`)).statusCode,
      200,
    );
    expectError(await chargeback(cancelled.id), 409, 'DISPUTE_BAD_STATE');
    assert.equal(await count(), disputes_before);
    assert.equal(await audit_count(), audit_before);
  });

  const fillOf = async (sell_order_id: string) =>
    t.db.selectFrom('order_fills').selectAll().where('sell_order_id', '=', sell_order_id).executeTakeFirstOrThrow();

  it("favor_merchant on a charged-back completed sell order takes the fill's PAY from the buyer back to the seller (no mint)", async () => {
    const sell = await completedSell(seller.jwt, 6 * PAY);
    const seller_before = await balancesOf(t, seller.id);
    const buyer_before = await balancesOf(t, buyer.id);
    const circulation_before = (await t.application.ledger.verify()).circulation_micro_pay;
    const issuance_before = await t.application.ledger.balance(disputesIssuanceAccount(false));
    const { id, resolved } = await resolveChargeback(sell.id, 'favor_merchant');
    assert.equal(resolved.statusCode, 200, resolved.body);
    const fill = await fillOf(sell.id);
    const transfer = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', '=', `dispute:${id}:fill:${fill.id}`)
      .executeTakeFirstOrThrow();
    assert.deepEqual(resolved.json().data.resolution, {
      outcome: 'favor_merchant',
      ledger_effect: 'return_to_seller',
      amount_micro_pay: 6 * PAY,
      ledger_transfer_id: transfer.id,
    });
    assert.deepEqual(
      [transfer.kind, transfer.debit_account, transfer.credit_account, Number(transfer.amount_micro_pay)],
      ['transfer', accounts.merchantAvailable(buyer.id, false), accounts.merchantAvailable(seller.id, false), 6 * PAY],
    );
    assert.equal((await balancesOf(t, seller.id)).available, seller_before.available + 6 * PAY);
    assert.equal((await balancesOf(t, buyer.id)).available, buyer_before.available - 6 * PAY);
    assert.equal(await t.application.ledger.balance(disputesIssuanceAccount(false)), issuance_before);
    assert.equal((await t.application.ledger.verify()).circulation_micro_pay, circulation_before);
    assert.equal(
      (await t.db.selectFrom('events').select('type').where('resource_id', '=', id).orderBy('seq').execute())
        .map((e) => e.type)
        .join(),
      'gateway.dispute.opened,gateway.dispute.resolved',
    );
  });

  it("favor_counterparty on a charged-back failed matched sell order gives the fill's PAY from the seller back to the buyer (no burn)", async () => {
    const sell = await failedMatchedSell(seller.jwt, 4 * PAY);
    const seller_before = await balancesOf(t, seller.id);
    const buyer_before = await balancesOf(t, buyer.id);
    const circulation_before = (await t.application.ledger.verify()).circulation_micro_pay;
    const { id, resolved } = await resolveChargeback(sell.id, 'favor_counterparty');
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal(resolved.json().data.resolution.ledger_effect, 'return_to_buyers');
    assert.equal(resolved.json().data.resolution.amount_micro_pay, 4 * PAY);
    const transfer = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', '=', `dispute:${id}:fill:${(await fillOf(sell.id)).id}`)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [transfer.kind, transfer.debit_account, transfer.credit_account],
      ['transfer', accounts.merchantAvailable(seller.id, false), accounts.merchantAvailable(buyer.id, false)],
    );
    assert.equal((await balancesOf(t, seller.id)).available, seller_before.available - 4 * PAY);
    assert.equal((await balancesOf(t, buyer.id)).available, buyer_before.available + 4 * PAY);
    assert.equal((await t.application.ledger.verify()).circulation_micro_pay, circulation_before);
  });

  it('favor_counterparty on a completed one, favor_merchant on a failed one and no_action on either move nothing', async () => {
    const completed = await completedSell(seller.jwt, PAY);
    const failed = await failedMatchedSell(seller.jwt, PAY);
    for (const [sell, outcome] of [
      [completed, 'favor_counterparty'],
      [failed, 'favor_merchant'],
      [completed, 'no_action'],
      [failed, 'no_action'],
    ] as const) {
      const before_balances = await balancesOf(t, seller.id);
      const { id, resolved } = await resolveChargeback(sell.id, outcome);
      assert.equal(resolved.statusCode, 200, resolved.body);
      assert.deepEqual(resolved.json().data.resolution, {
        outcome,
        ledger_effect: 'none',
        amount_micro_pay: null,
        ledger_transfer_id: null,
      });
      assert.equal(
        await t.db.selectFrom('ledger_transfers').select('id').where('key', '=', id).executeTakeFirst(),
        undefined,
      );
      assert.deepEqual(await balancesOf(t, seller.id), before_balances);
    }
  });

  it('a seller that spent the PAY it owes back: what it holds moves now, the rest is its shortfall owed to the buyer', async () => {
    const poor = await t.createMerchant('Poor');
    await fund(t, poor.id, 3 * PAY);
    const sell = await failedMatchedSell(poor.jwt, 3 * PAY);
    await createSell(t, poor.jwt, sellBody(2 * PAY));
    const buyer_before = await balancesOf(t, buyer.id);
    const { id, resolved } = await resolveChargeback(sell.id, 'favor_counterparty');
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal(resolved.json().data.status, 'resolved');
    assert.equal((await balancesOf(t, buyer.id)).available, buyer_before.available + PAY);
    const shortfall = await t.db
      .selectFrom('pay_shortfalls')
      .selectAll()
      .where('origin_key', '=', `dispute:${id}:fill:${(await fillOf(sell.id)).id}`)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [shortfall.debtor_account, shortfall.creditor_account, Number(shortfall.amount_micro_pay)],
      [accounts.merchantAvailable(poor.id, false), accounts.merchantAvailable(buyer.id, false), 2 * PAY],
    );
    const balance = (await merchantCall(t, poor.jwt, 'GET', `/v1/merchants/${poor.id}/balance`)).json().data;
    assert.equal(balance.shortfall_micro_pay, 2 * PAY);
    assert.equal((await t.application.ledger.verify()).ok, true);
  });
});
