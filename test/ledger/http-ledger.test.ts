import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createApplication, type Application } from '../../src/app.ts';
import { accounts } from '../../src/modules/ledger/port.ts';
import { INTERNAL_TOKEN, startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { processProofVerdicts } from '../../src/modules/payments/verdicts.ts';
import { multipartParts, uniquePng } from '../helpers/files.ts';
import { ScriptedValidator } from '../helpers/validator.ts';
import { createPendingFunds, receipt } from '../helpers/pending-funds.ts';

/**
 * The gateway with LEDGER_URL against a real ledger server (ROLES=ledger) on loopback, then with that server
 * stopped: "ledger unavailable" is a real network failure here.
 */
describe('ledger over HTTP: the adapter, and the ledger-down path', () => {
  let ledger_side: TestApp;
  let ledger_server: Application;
  let port: number;
  let gateway: TestApp;
  let receiver: TestMerchant;

  async function serveLedger(on_port: number): Promise<Application> {
    const application = await createApplication({
      config: ledger_side.application.config,
      database: ledger_side.application.database,
      clock: ledger_side.clock,
    });
    await application.app.listen({ host: '127.0.0.1', port: on_port });
    return application;
  }

  before(async () => {
    ledger_side = await startTestApp({ env: { ROLES: 'ledger' } });
    await ledger_side.application.app.close();
    ledger_server = await serveLedger(0);
    port = (ledger_server.app.server.address() as AddressInfo).port;
    gateway = await startTestApp({
      env: { ROLES: 'api,worker', LEDGER_URL: `http://127.0.0.1:${port}`, LEDGER_TIMEOUT_MS: '2000' },
    });
    receiver = await gateway.createMerchant('Receiver');
  });
  after(async () => {
    await gateway.close();
    await ledger_server.close().catch(() => {});
    await ledger_side.application.database.close();
  });

  it('the gateway uses the HTTP adapter; transfers, replays and refusals keep their codes across the wire', async () => {
    const ledger = gateway.application.ledger;
    assert.equal(ledger.kind, 'http');
    const account = accounts.merchantAvailable(receiver.id, false);
    const first = await ledger.transfer({
      key: 'h-1',
      kind: 'mint',
      debit_account: accounts.world(false),
      credit_account: account,
      amount_micro_pay: 500,
    });
    const again = await ledger.transfer({
      key: 'h-1',
      kind: 'mint',
      debit_account: accounts.world(false),
      credit_account: account,
      amount_micro_pay: 500,
    });
    assert.equal(again.replayed, true);
    assert.equal(again.id, first.id);
    await assert.rejects(
      ledger.transfer({
        key: 'h-1',
        kind: 'mint',
        debit_account: accounts.world(false),
        credit_account: account,
        amount_micro_pay: 501,
      }),
      { code: 'LEDGER_IDEMPOTENCY_CONFLICT' },
    );
    await assert.rejects(
      ledger.transfer({
        key: 'h-2',
        kind: 'transfer',
        debit_account: account,
        credit_account: accounts.fees(false),
        amount_micro_pay: 501,
      }),
      { code: 'LEDGER_INSUFFICIENT_FUNDS' },
    );
    assert.equal(await ledger.balance(account), 500);
    // the rows are in the ledger server's database, not the gateway's
    assert.equal(
      (await ledger_side.db.selectFrom('ledger_transfers').select('id').where('key', '=', 'h-1').execute()).length,
      1,
    );
    assert.equal((await gateway.db.selectFrom('ledger_transfers').select('id').execute()).length, 0);
    assert.equal((await ledger.verify()).ok, true);
  });

  it('the ledger API needs the internal token', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/internal/ledger/verify`);
    assert.equal(response.status, 401);
    const ok = await fetch(`http://127.0.0.1:${port}/internal/ledger/verify`, {
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
    });
    assert.equal(ok.status, 200);
  });

  it('ledger stopped: receiver-confirm is 502 PENDING_FUNDS_LEDGER_UNAVAILABLE, rolled back, no audit row, no attempt used; the retry after restart mints once', async () => {
    const created = await createPendingFunds(gateway, receiver.id, 2_000_000);
    assert.equal(created.statusCode, 201);
    const id = created.json().data.id;

    await ledger_server.close();
    const down = await gateway.call('POST', `/v1/pending-funds/${id}/receiver-confirm`, receiver.live, receipt());
    assert.equal(down.statusCode, 502, down.body);
    assert.equal(down.json().error.code, 'PENDING_FUNDS_LEDGER_UNAVAILABLE');
    const row = await gateway.db.selectFrom('pending_funds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'validated_pending_receiver_confirm');
    assert.equal(row.attempts, 0);
    assert.equal(row.first_receiver_attempt_at, null);
    const audits = await gateway.db
      .selectFrom('receiver_confirm_audit')
      .select('id')
      .where('pending_funds_id', '=', id)
      .where('stage', '=', 'receiver_confirm')
      .execute();
    assert.equal(audits.length, 0);
    assert.equal(
      (
        await gateway.db
          .selectFrom('events')
          .select('id')
          .where('resource_id', '=', id)
          .where('type', '=', 'pending_funds.confirmed')
          .execute()
      ).length,
      0,
    );

    const balance_down = await gateway.request({
      method: 'GET',
      url: `/v1/merchants/${receiver.id}/balance`,
      headers: { authorization: `Bearer ${receiver.jwt}` },
    });
    assert.equal(balance_down.statusCode, 502);
    assert.equal(balance_down.json().error.code, 'LEDGER_UNAVAILABLE');

    ledger_server = await serveLedger(port);
    const retry = await gateway.call('POST', `/v1/pending-funds/${id}/receiver-confirm`, receiver.live, receipt());
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(retry.json().data.pending_funds.status, 'confirmed');
    assert.equal(retry.json().data.pending_funds.attempts, 1);
    const minted = await ledger_side.db.selectFrom('ledger_transfers').selectAll().where('key', '=', id).execute();
    assert.equal(minted.length, 1);
    assert.equal(minted[0]!.amount_micro_pay, 2_000_000);
    const balance = await gateway.request({
      method: 'GET',
      url: `/v1/merchants/${receiver.id}/balance`,
      headers: { authorization: `Bearer ${receiver.jwt}` },
    });
    assert.equal(balance.statusCode, 200);
    assert.equal(balance.json().data.available_micro_pay, 2_000_500);
  });

  it('a mint that landed before the caller rolled back is replayed by the retry, not applied twice', async () => {
    const created = await createPendingFunds(gateway, receiver.id, 1_000_000);
    const id = created.json().data.id;
    // Simulate "ledger committed, gateway commit lost": the mint with key = row id is already in the ledger.
    await gateway.application.ledger.transfer({
      key: id,
      kind: 'mint',
      debit_account: accounts.world(false),
      credit_account: accounts.merchantAvailable(receiver.id, false),
      amount_micro_pay: 1_000_000,
    });
    const before_balance = await gateway.application.ledger.balance(accounts.merchantAvailable(receiver.id, false));
    const confirm = await gateway.call('POST', `/v1/pending-funds/${id}/receiver-confirm`, receiver.live, receipt());
    assert.equal(confirm.statusCode, 201);
    assert.equal(
      await gateway.application.ledger.balance(accounts.merchantAvailable(receiver.id, false)),
      before_balance,
    );
    assert.equal((await gateway.application.ledger.verify()).ok, true);
  });
  it('an N-leg completion is one multi-posting command over HTTP: every leg posts, or none does and the payment fails', async () => {
    await gateway.db.updateTable('sellers').set({ active: false }).where('synthetic', '=', false).execute();
    const merchant_account = accounts.merchantAvailable(receiver.id, false);
    const legKeys = async (payment_id: string) =>
      (
        await ledger_side.db
          .selectFrom('ledger_transfers')
          .select(['key', 'amount_micro_pay'])
          .where('key', 'like', `payment:${payment_id}:leg:%`)
          .orderBy('key')
          .execute()
      ).map((row) => [row.key, row.amount_micro_pay]);
    const payThreeLegs = async (order_id: string, sellers: string[]) => {
      for (const promptpay_id of sellers) await gateway.createSeller(thbSeller(3_500, '35.00', promptpay_id));
      const created = await gateway.call('POST', '/v1/trades', receiver.live, {
        order_id,
        amount: 10_500,
        currency: 'THB',
        return_url: 'https://shop.example/r',
      });
      assert.equal(created.statusCode, 201, created.body);
      const payment = created.json().data;
      assert.equal(payment.match_details.length, 3);
      // One slip per leg: the payment completes only when every leg is verified.
      const { payload, headers } = multipartParts([1, 2, 3].map(() => ({ name: 'proof', value: uniquePng() })));
      const upload = await gateway.request({
        method: 'POST',
        url: `/v1/payments/${payment.id}/proof`,
        headers: { 'x-api-key': receiver.live, ...headers },
        payload,
      });
      assert.equal(upload.statusCode, 200, upload.body);
      return payment as { id: string; match_details: { seller_id: string }[] };
    };

    // three legs of 1 PAY each: one command, all three posted
    const before = await gateway.application.ledger.balance(merchant_account);
    const paid = await payThreeLegs('n-leg-1', ['0891000001', '0891000002', '0891000003']);
    assert.equal(
      await processProofVerdicts({ ...gateway.application.payments, validator: new ScriptedValidator() }),
      3,
    );
    assert.equal((await gateway.call('GET', `/v1/payments/${paid.id}`, receiver.live)).json().data.status, 'completed');
    // each leg: 1 PAY less the 150 bps fee to the merchant, the fee to the fees account; the fee is one fee in two
    // units: floor(3,500 x 150 / 10,000) = 52 satang, which at 35 THB per PAY is 14,857 micro-PAY (rounded down)
    assert.deepEqual(
      await legKeys(paid.id),
      [1, 2, 3].flatMap((n) => [
        [`payment:${paid.id}:leg:${n}`, 985_143],
        [`payment:${paid.id}:leg:${n}:fee`, 14_857],
      ]),
    );
    assert.equal(await gateway.application.ledger.balance(merchant_account), before + 2_955_429);

    // the third seller's PAY is gone: its posting is refused, the two before it are undone, the payment fails
    const refused = await payThreeLegs('n-leg-2', ['0891000004', '0891000005', '0891000006']);
    const third = accounts.seller(refused.match_details[2]!.seller_id, false);
    await gateway.application.ledger.transfer({
      key: `drain-${third}`,
      kind: 'burn',
      debit_account: third,
      credit_account: accounts.world(false),
      amount_micro_pay: 1,
    });
    assert.equal(
      await processProofVerdicts({ ...gateway.application.payments, validator: new ScriptedValidator() }),
      3,
    );
    const failed = (await gateway.call('GET', `/v1/payments/${refused.id}`, receiver.live)).json().data;
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'ledger_insufficient_funds']);
    assert.deepEqual(await legKeys(refused.id), [], 'no leg of the refused command was posted');
    assert.equal(await gateway.application.ledger.balance(merchant_account), before + 2_955_429);
    assert.equal((await gateway.application.ledger.verify()).ok, true);
  });
});
