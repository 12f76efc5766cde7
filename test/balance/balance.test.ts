import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_HEADERS, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { recalcBufferThresholds, type BalanceDeps } from '../../src/modules/balance/service.ts';
import { accounts } from '../../src/modules/ledger/port.ts';
import { sweepPendingFunds } from '../../src/modules/pending-funds/service.ts';
import { createPendingFunds } from '../helpers/pending-funds.ts';

const DAY = 24 * 3600_000;

describe('merchant balance and the admin deficit view', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;
  let deps: BalanceDeps;
  const balance = (id: string, token: string | undefined, extra: Record<string, string> = {}) =>
    t.request({
      method: 'GET',
      url: `/v1/merchants/${id}/balance`,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra },
    });
  const credit = (id: string, amount_micro_pay: number) =>
    t.admin('POST', `/admin/merchants/${id}/ledger-adjustments`, {
      amount_micro_pay,
      direction: 'credit',
      reason: 'test',
    });

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Balance');
    other = await t.createMerchant('Other');
    deps = t.application.balance;
  });
  after(() => t.close());

  it('404 before the merchant ever held PAY; 401 without a token; 401 with an API key; 403 FORBIDDEN for another merchant; 400 bad id', async () => {
    const none = await balance(merchant.id, merchant.jwt);
    assert.equal(none.statusCode, 404);
    assert.equal(none.json().error.code, 'NOT_FOUND');
    assert.equal((await balance(merchant.id, undefined)).statusCode, 401);
    assert.equal((await balance(merchant.id, merchant.live)).statusCode, 401);
    const foreign = await balance(other.id, merchant.jwt);
    assert.equal(foreign.statusCode, 403);
    assert.equal(foreign.json().error.code, 'FORBIDDEN');
    assert.equal((await balance('nope', merchant.jwt)).statusCode, 400);
  });

  it('200 with exactly the nine fields; net obligation counts validated-pending rows; no deficit without a threshold', async () => {
    await credit(merchant.id, 10_000_000);
    await createPendingFunds(t, merchant.id, 4_000_000);
    await createPendingFunds(t, merchant.id, 1_000_000);
    const response = await balance(merchant.id, merchant.jwt);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json().data, {
      available_micro_pay: 10_000_000,
      buffer_micro_pay: 0,
      refund_hold_micro_pay: 0,
      net_obligation_micro_pay: 5_000_000,
      deficit_micro_pay: 0,
      unconfirmed_fills_micro_pay: 0,
      shortfall_micro_pay: 0,
      apr_bps: 1800,
      entry_fee_usd: '25.00',
      countdown_days: null,
    });
    const session_less = await balance(merchant.id.toUpperCase(), merchant.jwt);
    assert.equal(session_less.statusCode, 200);
  });

  it('buffer balance counts; sandbox PAY never shows in the live balance', async () => {
    await t.application.ledger.transfer({
      key: 'buffer-1',
      kind: 'mint',
      debit_account: accounts.world(false),
      credit_account: accounts.merchantBuffer(other.id, false),
      amount_micro_pay: 2_000_000,
    });
    await t.admin('POST', `/admin/merchants/${other.id}/ledger-adjustments`, {
      amount_micro_pay: 9_000_000,
      direction: 'credit',
      reason: 'sandbox',
      is_sandbox: true,
    });
    const response = await balance(other.id, other.jwt);
    assert.equal(response.statusCode, 200, response.body);
    const view = response.json().data;
    assert.equal(view.buffer_micro_pay, 2_000_000);
    assert.equal(view.available_micro_pay, 0);
  });

  it('the recalc job sets the threshold from trailing 30-day volume; a deficit starts the countdown, which runs down with the clock', async () => {
    // volume = the 10 PAY credited above; threshold at 10 % = 1 PAY; available 10 - obligation 5 => no deficit
    await recalcBufferThresholds(deps);
    let admin = await t.admin('GET', `/admin/merchants/${merchant.id}/deficit`);
    assert.equal(admin.statusCode, 200);
    assert.equal(admin.json().data.trailing_30d_volume_micro_pay, 10_000_000);
    assert.equal(admin.json().data.buffer_threshold_micro_pay, 1_000_000);
    assert.equal(admin.json().data.buffer_last_recalc_at, t.clock.now().toISOString());
    assert.equal(admin.json().data.deficit_micro_pay, 0);

    // obligations grow past the balance: 10 - (5 + 5.5) = -0.5 => deficit 1.5 PAY
    await createPendingFunds(t, merchant.id, 5_500_000);
    await recalcBufferThresholds(deps);
    let view = (await balance(merchant.id, merchant.jwt)).json().data;
    assert.equal(view.deficit_micro_pay, 1_500_000);
    assert.equal(view.countdown_days, 7);
    t.clock.advance(3 * DAY);
    await recalcBufferThresholds(deps);
    view = (await balance(merchant.id, merchant.jwt)).json().data;
    assert.equal(view.countdown_days, 4);

    // 31 days later the volume has left the window: threshold 0, deficit gone, countdown cleared
    t.clock.advance(31 * DAY);
    // the pending rows passed their TTL without receiver action: swept to expired, they no longer count
    assert.equal(await sweepPendingFunds({ db: t.db, clock: t.clock }), 3);
    await recalcBufferThresholds(deps);
    admin = await t.admin('GET', `/admin/merchants/${merchant.id}/deficit`);
    assert.equal(admin.json().data.trailing_30d_volume_micro_pay, 0);
    assert.equal(admin.json().data.buffer_threshold_micro_pay, 0);
    assert.equal(admin.json().data.deficit_micro_pay, 0);
    assert.equal(admin.json().data.countdown_days, null);
  });

  it('admin deficit view: 404 for a merchant without PAY, 401, 403 ADMIN_FORBIDDEN', async () => {
    const fresh = await t.createMerchant('Fresh');
    assert.equal((await t.admin('GET', `/admin/merchants/${fresh.id}/deficit`)).statusCode, 404);
    assert.equal((await t.request({ method: 'GET', url: `/admin/merchants/${merchant.id}/deficit` })).statusCode, 401);
    const forbidden = await t.request({
      method: 'GET',
      url: `/admin/merchants/${merchant.id}/deficit`,
      headers: { ...ADMIN_HEADERS, 'x-actor-role': 'merchant_admin' },
    });
    assert.equal(forbidden.json().error.code, 'ADMIN_FORBIDDEN');
  });
});
