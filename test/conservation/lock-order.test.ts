import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { expireDuePayments } from '../../src/modules/payments/service.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

/**
 * One lock order for sellers: the expiry sweeper gives liquidity back in the order reservations lock offers (rate,
 * created_at, id), so a sweep racing creates that reserve the same sellers never deadlocks (a 500 on PostgreSQL).
 */
describe('the expiry sweeper and reservations lock sellers in one order', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;
  const create = (amount: number) =>
    t.call('POST', '/v1/trades', merchant.live, {
      order_id: `lo-${++order}`,
      amount,
      currency: 'THB',
      return_url: 'https://shop.example/r',
      expires_in_seconds: 60,
    });
  const only = async (active_id: string, ids: string[]) => {
    for (const id of ids)
      await t.db
        .updateTable('sellers')
        .set({ active: id === active_id })
        .where('id', '=', id)
        .execute();
  };

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
  });
  after(() => t.close());

  // PGlite has one connection: no two transactions ever hold locks at once there, so the interleaving is PostgreSQL's.
  it('a sweep that meets a seller a reservation holds waits for it before locking any other seller', {
    skip: !process.env['DATABASE_URL'],
  }, async () => {
    const cheap = await t.createSeller(thbSeller(1_000, '30.00', '0833333333'));
    const dear = await t.createSeller(thbSeller(1_000, '31.00', '0844444444'));
    await t.db
      .updateTable('sellers')
      .set({ active: false })
      .where('id', 'not in', [cheap.id, dear.id])
      .where('synthetic', '=', false)
      .execute();
    // the dear seller's payment expires first, then the cheap one's: the sweep's batch meets them against rate order
    await only(dear.id, [cheap.id, dear.id]);
    assert.equal((await create(500)).statusCode, 201);
    t.clock.advance(1);
    await only(cheap.id, [cheap.id, dear.id]);
    assert.equal((await create(500)).statusCode, 201);
    await t.db.updateTable('sellers').set({ active: true }).where('id', 'in', [cheap.id, dear.id]).execute();
    t.clock.advance(60_000);

    // a reservation holds the cheap seller (rate order: cheap first) and will next want the dear one
    let sweep: Promise<number> | undefined;
    await t.db
      .transaction()
      .execute(async (trx) => {
        await sql`select mpay_reserve_offers(${[cheap.id]}::uuid[], ${[1]}::bigint[])`.execute(trx);
        sweep = expireDuePayments(t.application.payments, 100);
        await new Promise((resolve) => setTimeout(resolve, 500));
        // the sweep must not be holding the dear seller now, or this waits on it while it waits on us: a deadlock
        await sql`select mpay_reserve_offers(${[dear.id]}::uuid[], ${[1]}::bigint[])`.execute(trx);
        throw new Error('rollback');
      })
      .catch((error: Error) => assert.equal(error.message, 'rollback'));
    assert.ok((await sweep!) >= 2);
  });

  it('expiring payments whose legs run against rate order, swept while creates reserve both sellers: no 500, nothing lost', async () => {
    const cheap = await t.createSeller(thbSeller(40_000, '35.00', '0811111111'));
    const dear = await t.createSeller(thbSeller(10_000_000, '36.00', '0822222222'));
    const both = [cheap.id, dear.id];
    // expiry order alternates dear, cheap, dear, cheap...: the sweep meets them against the rate order
    for (let i = 0; i < 15; i++) {
      await only(dear.id, both);
      assert.equal((await create(1_000)).statusCode, 201);
      t.clock.advance(1);
      await only(cheap.id, both);
      assert.equal((await create(1_000)).statusCode, 201);
      t.clock.advance(1);
    }
    await t.db.updateTable('sellers').set({ active: true }).where('id', 'in', both).execute();
    t.clock.advance(60_000);
    // creates now take the cheap seller's last 10,000 and then the dear one: legs on both, locked cheap first
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => expireDuePayments(t.application.payments, 100)),
      ...Array.from({ length: 24 }, () => create(1_500)),
    ]);
    const responses = results.filter(
      (result): result is Awaited<ReturnType<typeof create>> => typeof result !== 'number',
    );
    assert.deepEqual(
      responses.filter((response) => response.statusCode >= 500).map((response) => response.body),
      [],
    );
    assert.ok(
      responses.every(
        (response) => response.statusCode === 201 || response.json().error.code === 'PAYMENT_INSUFFICIENT_LIQUIDITY',
      ),
      responses.map((r) => r.statusCode).join(','),
    );
    while ((await expireDuePayments(t.application.payments, 100)) > 0) {
      // the rest of the due ones
    }
    // every reservation is exactly the legs of the payments still open
    for (const seller of both) {
      const row = await t.db
        .selectFrom('sellers')
        .select('reserved_minor')
        .where('id', '=', seller)
        .executeTakeFirstOrThrow();
      const open = await t.db
        .selectFrom('payment_legs')
        .innerJoin('payments', 'payments.id', 'payment_legs.payment_id')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('payment_legs.allocated_fiat_amount'), eb.val('0')).as('held'))
        .where('payment_legs.seller_id', '=', seller)
        .where('payments.status', 'in', ['matched', 'payment_pending', 'confirming'])
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.reserved_minor), Number(open.held), `seller ${seller}`);
    }
  });
});
