import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { expireBuyOrders } from '../../src/modules/buy-orders/service.ts';
import { accounts } from '../../src/modules/ledger/port.ts';
import { runMatcher } from '../../src/modules/payouts/matcher.ts';
import { requestCashLegs } from '../../src/modules/sell-orders/cash-leg.ts';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { ADMIN_HEADERS, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  buyBody,
  fund,
  merchantCall,
  MINT_SOURCE,
  PAY,
  receipt,
  scriptedValidator,
  sellBody,
} from '../helpers/orders.ts';
import { seededRandom } from '../helpers/random.ts';

describe('ledger invariants after a randomized mix of sells, buys, confirms, cancels and disputes', () => {
  let t: TestApp;
  let merchants: TestMerchant[];
  const validator = scriptedValidator();
  const seed = Number(process.env['MPAY_SEED'] ?? Date.now() % 1_000_000);

  before(async () => {
    t = await startTestApp({
      env: {
        LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE,
        CASH_LEG_RETRY_MAX: '2',
        GATEWAY_DISPUTE_AUTO_OPEN_ENABLED: 'true',
      },
      overrides: { validator },
    });
    merchants = [];
    for (let i = 0; i < 4; i++) {
      const m = await t.createMerchant(`M${i}`);
      await fund(t, m.id, 40 * PAY);
      merchants.push(m);
    }
  });
  after(() => t.close());

  it(`holds every invariant (seed ${seed})`, async (context) => {
    const random = seededRandom(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const amounts = [PAY, 2 * PAY, 3 * PAY];
    const currencies = ['THB', 'AUD'];
    const admin = (url: string, body: unknown) =>
      t.request({ method: 'POST', url, headers: ADMIN_HEADERS, payload: body as object });
    const rows = async () => ({
      sells: await t.db.selectFrom('sell_orders').selectAll().execute(),
      buys: await t.db.selectFrom('buy_orders').selectAll().execute(),
      disputes: await t.db.selectFrom('disputes').selectAll().execute(),
    });

    for (let step = 0; step < 200; step++) {
      const m = pick(merchants);
      const roll = random();
      const { sells, buys, disputes } = await rows();
      const mine = sells.filter((s) => s.merchant_id === m.id);
      if (roll < 0.25) {
        const r = await merchantCall(
          t,
          m.jwt,
          'POST',
          '/v1/merchant-sell-orders',
          sellBody(pick(amounts), pick(currencies)),
        );
        assert.ok([201, 409].includes(r.statusCode), r.body);
      } else if (roll < 0.45) {
        await merchantCall(t, m.jwt, 'POST', '/v1/merchant-buy-orders', buyBody(pick(amounts), pick(currencies)));
      } else if (roll < 0.55) {
        await runMatcher(t.application.payouts.matcher);
        await requestCashLegs(t.application.payouts.sell_orders);
      } else if (roll < 0.7) {
        const target = sells.filter((s) => s.status === 'cash_leg_in_flight');
        if (target.length) {
          const order = pick(target);
          const owner = merchants.find((x) => x.id === order.merchant_id)!;
          validator.next.push(pick(['verified', 'failed', 'unverified', 'verified'] as const));
          const r = await merchantCall(t, owner.jwt, 'POST', `/v1/merchant-sell-orders/${order.id}/confirm-cash-leg`, {
            receipt_base64: receipt(),
            content_type: 'image/png',
          });
          assert.equal(r.statusCode, 200, r.body);
          validator.next.length = 0;
        }
      } else if (roll < 0.77) {
        if (mine.length) {
          const r = await merchantCall(t, m.jwt, 'POST', `/v1/merchant-sell-orders/${pick(mine).id}/cancel`);
          assert.ok([200, 409].includes(r.statusCode), r.body);
        }
      } else if (roll < 0.82) {
        const own_buys = buys.filter((b) => b.merchant_id === m.id);
        if (own_buys.length) {
          const r = await merchantCall(t, m.jwt, 'POST', `/v1/merchant-buy-orders/${pick(own_buys).id}/cancel`);
          assert.ok([200, 409].includes(r.statusCode), r.body);
        }
      } else if (roll < 0.88) {
        t.clock.advance(pick([600_000, 3600_000, 3 * 3600_000, 26 * 3600_000]));
        await sweepSellOrders(t.application.payouts.sell_orders);
        await expireBuyOrders(t.application.payouts.buy_orders);
      } else if (roll < 0.93) {
        // Mostly on settled outcomes (completed, failed after a match), where a resolution can move PAY.
        const settled = mine.filter(
          (s) => s.status === 'completed' || (s.status === 'failed' && s.matched_buy_order_id),
        );
        const candidates = settled.length && random() < 0.8 ? settled : mine;
        if (candidates.length) {
          const r = await merchantCall(t, m.jwt, 'POST', '/v1/merchant-disputes', {
            sell_order_id: pick(candidates).id,
            notes: `step ${step}`,
          });
          assert.ok([201, 409].includes(r.statusCode), r.body);
        }
      } else {
        const open = disputes.filter((d) => d.status !== 'resolved');
        if (open.length) {
          const d = pick(open);
          if (d.status === 'opened') await admin(`/admin/disputes/${d.id}/investigate`, {});
          else {
            const r = await admin(`/admin/disputes/${d.id}/resolve`, {
              outcome: pick(['favor_merchant', 'favor_counterparty', 'no_action']),
            });
            assert.ok([200, 409].includes(r.statusCode), r.body);
          }
        }
      }
    }

    const verification = await t.application.ledger.verify();
    assert.equal(verification.ok, true, `seed ${seed}: ${verification.problems.join('; ')}`);
    const { sells, buys, disputes } = await rows();
    const transfers = await t.db.selectFrom('ledger_transfers').selectAll().execute();
    const by_key = new Map(transfers.map((tr) => [tr.key, tr]));
    assert.ok(sells.length > 5 && buys.length > 5, `seed ${seed}: the mix did too little`);

    const count = <T>(items: T[], test: (item: T) => boolean) => items.filter(test).length;
    context.diagnostic(
      `sells ${sells.length} (completed ${count(sells, (s) => s.status === 'completed')}, failed ${count(sells, (s) => s.status === 'failed')}), buys ${buys.length} (matched ${count(buys, (b) => b.status === 'matched')}), disputes ${disputes.length} (mint ${count(disputes, (d) => d.ledger_effect === 'mint')}, burn ${count(disputes, (d) => d.ledger_effect === 'burn')})`,
    );
    // Reserves hold exactly the open sell orders (all of a pending one; the filled part of a matched one); every sell
    // order burns only when completed, and only once.
    for (const m of merchants) {
      const open = sells.filter(
        (s) => s.merchant_id === m.id && ['pending', 'matched', 'cash_leg_in_flight'].includes(s.status),
      );
      const reserve = await t.application.ledger.balance(accounts.merchantReserve(m.id, false));
      assert.equal(
        reserve,
        open.reduce((sum, s) => sum + (s.status === 'pending' ? s.amount_micro_pay : s.filled_micro_pay), 0),
        `seed ${seed}: reserve of ${m.name}`,
      );
    }
    // A failed sell with several fills keeps the fills its seller confirmed paid: their part of the reserve is burned
    // (`:burn-paid`) instead of released, and those buyers keep their PAY.
    const all_fills = await t.db.selectFrom('order_fills').selectAll().execute();
    const verified = await t.db
      .selectFrom('sell_order_cash_leg_attempts')
      .select(['sell_order_id', 'buy_order_id'])
      .where('outcome', '=', 'verified')
      .execute();
    const paidFill = (f: { sell_order_id: string; buy_order_id: string }) =>
      all_fills.filter((other) => other.sell_order_id === f.sell_order_id).length > 1 &&
      verified.some((v) => v.sell_order_id === f.sell_order_id && v.buy_order_id === f.buy_order_id);
    const paidOf = (s: { id: string; status: string }) =>
      s.status === 'failed'
        ? all_fills
            .filter((f) => f.sell_order_id === s.id && paidFill(f))
            .reduce((paid, f) => paid + f.amount_micro_pay, 0)
        : 0;
    for (const s of sells) {
      assert.equal(by_key.has(s.id), s.status === 'completed', `seed ${seed}: burn of ${s.status} sell ${s.id}`);
      if (s.status === 'completed') assert.equal(by_key.get(s.id)!.amount_micro_pay, s.filled_micro_pay);
      const reserved = s.filled_micro_pay > 0 ? s.filled_micro_pay : s.amount_micro_pay;
      assert.equal(
        by_key.has(`sell_order:${s.id}:release`),
        s.status === 'failed' && reserved > paidOf(s),
        `seed ${seed}: release of sell ${s.id}`,
      );
      assert.equal(by_key.get(`sell_order:${s.id}:burn-paid`)?.amount_micro_pay, paidOf(s) || undefined);
      const closed_partial =
        s.status !== 'pending' && s.filled_micro_pay > 0 && s.filled_micro_pay < s.amount_micro_pay;
      assert.equal(
        by_key.has(`sell_order:${s.id}:release-unfilled`),
        closed_partial,
        `seed ${seed}: unfilled release of sell ${s.id}`,
      );
    }
    // Fills: one mint each; they add up to each order's filled amounts; every fill honours the buy's price, is worth a
    // minor unit and never charges above the buyer's bid for its PAY; a fully filled sell's fills differ from its
    // target_fiat_amount by at most one minor unit per fill.
    const fills = await t.db.selectFrom('order_fills').selectAll().execute();
    const sells_by_id = new Map(sells.map((s) => [s.id, s]));
    const buys_by_id = new Map(buys.map((b) => [b.id, b]));
    for (const f of fills) {
      const mint = by_key.get(`buy_order:${f.buy_order_id}:fill:${f.sell_order_id}`);
      assert.equal(mint?.amount_micro_pay, f.amount_micro_pay, `seed ${seed}: mint of fill ${f.id}`);
      const s = sells_by_id.get(f.sell_order_id)!;
      const b = buys_by_id.get(f.buy_order_id)!;
      assert.equal(s.target_currency, b.fiat_currency);
      assert.ok(
        BigInt(s.target_fiat_amount) * BigInt(b.amount_micro_pay) <= BigInt(b.fiat_amount) * BigInt(s.amount_micro_pay),
        `seed ${seed}: price of fill ${f.id}`,
      );
      assert.ok(f.fiat_amount >= 1, `seed ${seed}: fill ${f.id} is worth a minor unit`);
      assert.ok(
        BigInt(f.fiat_amount) * BigInt(b.amount_micro_pay) <= BigInt(b.fiat_amount) * BigInt(f.amount_micro_pay),
        `seed ${seed}: fill ${f.id} charges at most the bid`,
      );
    }
    const sum = (items: { amount_micro_pay: number }[]) => items.reduce((total, f) => total + f.amount_micro_pay, 0);
    for (const s of sells) {
      const own = fills.filter((f) => f.sell_order_id === s.id);
      assert.equal(sum(own), s.filled_micro_pay, `seed ${seed}: fills of sell ${s.id}`);
      assert.equal(
        own.reduce((total, f) => total + f.fiat_amount, 0),
        s.filled_fiat_amount,
      );
      if (s.filled_micro_pay === s.amount_micro_pay)
        assert.ok(
          Math.abs(s.filled_fiat_amount - s.target_fiat_amount) <= own.length,
          `seed ${seed}: sell ${s.id}'s fills are within a minor unit each of its target`,
        );
    }
    for (const b of buys) {
      assert.equal(
        sum(fills.filter((f) => f.buy_order_id === b.id)),
        b.filled_micro_pay,
        `seed ${seed}: fills of buy ${b.id}`,
      );
      assert.equal(
        b.status === 'matched',
        b.filled_micro_pay === b.amount_micro_pay,
        `seed ${seed}: status of buy ${b.id}`,
      );
    }
    // The mint source nets out every completed sell and every fill taken back when its cash leg failed.
    const mint_source = await t.application.ledger.balance(accounts.mintSource(MINT_SOURCE, false));
    const minted = sum(fills);
    const burned = sells.filter((s) => s.status === 'completed').reduce((total, s) => total + s.filled_micro_pay, 0);
    const reversed = fills.reduce((total, f) => total + f.reversed_micro_pay, 0);
    for (const f of fills)
      assert.equal(
        f.reversed_at !== null,
        sells_by_id.get(f.sell_order_id)!.status === 'failed' && !paidFill(f),
        `seed ${seed}: reversal of fill ${f.id}`,
      );
    const burned_paid = sells.reduce((total, s) => total + paidOf(s), 0);
    assert.equal(mint_source, burned + burned_paid + reversed - minted);
    // Dispute effects: one transfer per effect, none otherwise; at most one unresolved dispute per sell order.
    for (const d of disputes)
      assert.equal(
        by_key.has(d.id),
        d.ledger_effect === 'mint' || d.ledger_effect === 'burn',
        `seed ${seed}: dispute ${d.id}`,
      );
    const unresolved = disputes.filter((d) => d.status !== 'resolved').map((d) => d.sell_order_id);
    assert.equal(new Set(unresolved).size, unresolved.length);
  });
});
