import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createApplication, type Application } from '../../src/app.ts';
import { accounts } from '../../src/modules/ledger/port.ts';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { fund, inFlightSell, merchantCall, MINT_SOURCE, PAY, receipt, scriptedValidator } from '../helpers/orders.ts';

/**
 * With the HTTP ledger a failed cash leg's reversal burn commits in the ledger on its own. If the gateway's transaction
 * then fails, the retry must burn the same amount under the same key (the ledger's record of the key decides it),
 * never the amount the buyer's now smaller balance would suggest, which the ledger refuses as a conflict.
 */
describe('HTTP ledger: a failed cash leg whose commit failed after the burn is retried with its first amount', () => {
  let ledger_side: TestApp;
  let ledger_server: Application;
  let gateway: TestApp;
  const validator = scriptedValidator();

  before(async () => {
    ledger_side = await startTestApp({ env: { ROLES: 'ledger' } });
    await ledger_side.application.app.close();
    ledger_server = await createApplication({
      config: ledger_side.application.config,
      database: ledger_side.application.database,
      clock: ledger_side.clock,
    });
    await ledger_server.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (ledger_server.app.server.address() as AddressInfo).port;
    gateway = await startTestApp({
      env: {
        ROLES: 'api,worker',
        LEDGER_URL: `http://127.0.0.1:${port}`,
        LEDGER_TIMEOUT_MS: '5000',
        LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE,
        CASH_LEG_RETRY_MAX: '1',
      },
      overrides: { validator },
    });
  });
  after(async () => {
    await gateway.close();
    await ledger_server.close().catch(() => {});
    await ledger_side.application.database.close();
  });

  it('the second sweep replays the 10 PAY burn although the buyer then holds only 5', async () => {
    const seller = await gateway.createMerchant('Seller');
    const buyer = await gateway.createMerchant('Buyer');
    await fund(gateway, seller.id, 100 * PAY);
    await fund(gateway, buyer.id, 5 * PAY);
    const sell = await inFlightSell(gateway, seller.jwt, buyer.jwt, 10 * PAY);
    validator.next.push('failed');
    await merchantCall(gateway, seller.jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
      receipt_base64: receipt(),
      content_type: 'application/pdf',
    });
    // The gateway's transaction fails after the ledger applied the reversal burn (here: at the sell_order.failed event).
    for (const statement of [
      'create table test_fail_once (armed boolean not null)',
      'insert into test_fail_once values (true)',
      `create function test_fail_sell_order_failed() returns trigger language plpgsql as $$
        begin if (select armed from test_fail_once) then raise exception 'the commit failed after the burn'; end if; return new; end $$`,
      `create trigger test_fail_sell_order_failed before insert on events for each row
        when (new.type = 'sell_order.failed') execute function test_fail_sell_order_failed()`,
    ])
      await sql.raw(statement).execute(gateway.db);
    await assert.rejects(sweepSellOrders(gateway.application.payouts.sell_orders), /the commit failed after the burn/);
    const buyer_account = accounts.merchantAvailable(buyer.id, false);
    assert.equal(await gateway.application.ledger.balance(buyer_account), 5 * PAY, 'the burn committed in the ledger');
    const status = await gateway.db
      .selectFrom('sell_orders')
      .select('status')
      .where('id', '=', sell.id)
      .executeTakeFirst();
    assert.equal(status?.status, 'cash_leg_in_flight', "the gateway's rows rolled back");

    await sql`update test_fail_once set armed = false`.execute(gateway.db);
    assert.equal(await sweepSellOrders(gateway.application.payouts.sell_orders), 1);
    const fill = await gateway.db
      .selectFrom('order_fills')
      .selectAll()
      .where('sell_order_id', '=', sell.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([fill.reversed_micro_pay, fill.shortfall_micro_pay], [10 * PAY, 0]);
    assert.equal(await gateway.application.ledger.balance(buyer_account), 5 * PAY, 'burned once');
    const order = (await merchantCall(gateway, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data;
    assert.deepEqual([order.status, order.failure_reason], ['failed', 'cash_leg_retry_exhausted']);
    assert.equal((await gateway.application.ledger.verify()).ok, true);
  });
});
