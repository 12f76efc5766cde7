import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { accounts } from '../../src/modules/ledger/port.ts';
import { fillMintKey, runMatcher, type MatcherDeps } from '../../src/modules/payouts/matcher.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { buyBody, createBuy, createSell, fund, merchantCall, MINT_SOURCE, PAY, sellBody } from '../helpers/orders.ts';

/** The matcher's writes follow GroupCommit's failure rule: a pair that cannot be written never holds back the others. */
describe('the matcher: a pair whose write fails leaves the other pairs of its batch filled', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  let logged: { buy_order_id: string; sell_order_id: string }[];
  let matcher: MatcherDeps;

  const read = async (kind: 'buy' | 'sell', id: string) => {
    const jwt = kind === 'buy' ? buyer.jwt : seller.jwt;
    return (await merchantCall(t, jwt, 'GET', `/v1/merchant-${kind}-orders/${id}`)).json().data;
  };
  const mintOf = (buy_id: string, sell_id: string) =>
    t.db.selectFrom('ledger_transfers').selectAll().where('key', '=', fillMintKey(buy_id, sell_id)).executeTakeFirst();
  /** Fails the insert of any fill of `sell_id`, as a broken row or constraint would. */
  const refuseFillsOf = async (sell_id: string) => {
    await sql`create or replace function test_refuse_fill() returns trigger language plpgsql as $$
      begin raise exception 'test: this fill cannot be written'; end $$`.execute(t.db);
    await sql`create trigger test_refuse_fill before insert on order_fills for each row
      when (new.sell_order_id = ${sql.lit(sell_id)}::uuid) execute function test_refuse_fill()`.execute(t.db);
  };
  const allowFills = () => sql`drop trigger if exists test_refuse_fill on order_fills`.execute(t.db);

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
    await fund(t, seller.id, 1_000 * PAY);
  });
  beforeEach(() => {
    logged = [];
    const logger = {
      error: (fields: { buy_order_id: string; sell_order_id: string }) => logged.push(fields),
    } as unknown as Logger;
    matcher = { ...t.application.payouts.matcher, logger };
  });
  after(() => t.close());

  it('one pair refused by the ledger and one by the database: the two others are filled, each pass', async () => {
    const pairs = [];
    for (let i = 0; i < 4; i++) {
      // distinct times: each buy meets the sell created beside it (price-time priority)
      const sell = await createSell(t, seller.jwt, sellBody((i + 1) * PAY, 'AUD', 1_000 * (i + 1)));
      const buy = await createBuy(t, buyer.jwt, buyBody((i + 1) * PAY, 'AUD', 1_000 * (i + 1)));
      pairs.push({ sell: sell.id, buy: buy.id });
      t.clock.advance(10);
    }
    const [first, by_ledger, by_database, last] = pairs as [(typeof pairs)[0], ...typeof pairs];
    // The ledger refuses the second pair's mint: its key was used for another amount.
    await t.application.ledger.transfer({
      key: fillMintKey(by_ledger!.buy, by_ledger!.sell),
      kind: 'mint',
      debit_account: accounts.mintSource(MINT_SOURCE, false),
      credit_account: accounts.merchantAvailable(buyer.id, false),
      amount_micro_pay: 1,
    });
    // The database refuses the third pair's fill row (after its mint, which is undone with it).
    await refuseFillsOf(by_database!.sell);
    try {
      assert.equal(await runMatcher(matcher), 2, 'the two good pairs');
      for (const pair of [first, last]) {
        assert.equal((await read('buy', pair!.buy)).status, 'matched');
        assert.equal((await read('sell', pair!.sell)).status, 'matched');
      }
      for (const pair of [by_ledger, by_database]) {
        const [buy, sell] = [await read('buy', pair!.buy), await read('sell', pair!.sell)];
        assert.deepEqual(
          [buy.status, buy.filled_micro_pay, sell.status, sell.filled_micro_pay],
          ['pending', 0, 'pending', 0],
        );
      }
      assert.equal(await mintOf(by_database!.buy, by_database!.sell), undefined, 'the refused fill took its mint back');
      assert.equal((await mintOf(by_ledger!.buy, by_ledger!.sell))?.amount_micro_pay, 1, 'the earlier transfer stands');
      assert.deepEqual(
        logged.map((entry) => [entry.buy_order_id, entry.sell_order_id]),
        [
          [by_ledger!.buy, by_ledger!.sell],
          [by_database!.buy, by_database!.sell],
        ],
      );
      // the next pass plans the two refused pairs again; they are refused again, and the pass still completes
      logged = [];
      assert.equal(await runMatcher(matcher), 0);
      assert.equal(logged.length, 2);
    } finally {
      await allowFills();
    }
    // once the database takes its row, that pair fills; the pair the ledger refuses stays pending
    logged = [];
    assert.equal(await runMatcher(matcher), 1);
    assert.equal((await read('buy', by_database!.buy)).status, 'matched');
    assert.equal((await read('buy', by_ledger!.buy)).status, 'pending');
    assert.equal(logged.length, 1);
    assert.equal((await t.application.ledger.verify()).ok, true);
    await merchantCall(t, buyer.jwt, 'POST', `/v1/merchant-buy-orders/${by_ledger!.buy}/cancel`);
    await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${by_ledger!.sell}/cancel`);
  });

  it("a pair written alone is priced on its own: a refused pair's share stays open", async () => {
    // One sell of 2 PAY for 7,001 minor units, two buys of 1 PAY each at 3,501: each fill is 3,500.5 at the ask, half
    // up 3,501 (the bid allows it); with the first refused the second is written alone and the sell stays open.
    const sell = await createSell(t, seller.jwt, sellBody(2 * PAY, 'SGD', 7_001));
    t.clock.advance(10);
    const refused = await createBuy(t, buyer.jwt, buyBody(PAY, 'SGD', 3_501));
    t.clock.advance(10);
    const filled = await createBuy(t, buyer.jwt, buyBody(PAY, 'SGD', 3_501));
    await t.application.ledger.transfer({
      key: fillMintKey(refused.id, sell.id),
      kind: 'mint',
      debit_account: accounts.mintSource(MINT_SOURCE, false),
      credit_account: accounts.merchantAvailable(buyer.id, false),
      amount_micro_pay: 1,
    });
    assert.equal(await runMatcher(matcher), 1);
    const fill = await t.db
      .selectFrom('order_fills')
      .selectAll()
      .where('buy_order_id', '=', filled.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([fill.sell_order_id, fill.amount_micro_pay, fill.fiat_amount], [sell.id, PAY, 3_501]);
    const after_pass = await read('sell', sell.id);
    assert.deepEqual(
      [after_pass.status, after_pass.filled_micro_pay, after_pass.filled_fiat_amount, after_pass.matched_buy_order_id],
      ['pending', PAY, 3_501, filled.id],
    );
    const bought = await read('buy', filled.id);
    assert.deepEqual([bought.status, bought.filled_fiat_amount], ['matched', 3_501]);
    assert.equal((await read('buy', refused.id)).status, 'pending');
    assert.deepEqual(
      logged.map((entry) => entry.buy_order_id),
      [refused.id],
    );
    assert.equal((await t.application.ledger.verify()).ok, true);
  });
});
