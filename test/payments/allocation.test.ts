import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { OFFER_PAGE } from '../../src/modules/liquidity/service.ts';
import { processProofVerdicts } from '../../src/modules/payments/verdicts.ts';
import type { ReceiptValidator, ValidatorVerdict } from '../../src/modules/validators/port.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

/** A verification provider that checked the slip (amount, payee, reference): its verified completes a live leg. */
const verifying: ReceiptValidator = {
  kind: 'easyslip',
  async validate(): Promise<ValidatorVerdict> {
    return { outcome: 'verified', validator_kind: 'easyslip', response: {} };
  },
};

/** Allocation without long-held offer locks: FIFO and no overbooking under concurrency; quote locks within the seller's PAY. */
describe('payment allocation: races and quote-lock capacity', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;
  const create = (body: Record<string, unknown>) =>
    t.call('POST', '/v1/trades', merchant.live, {
      order_id: `alloc-${++order}`,
      currency: 'THB',
      return_url: 'https://shop.example/r',
      ...body,
    });
  const sellerRow = (id: string) =>
    t.db
      .selectFrom('sellers')
      .select(['liquidity_minor', 'reserved_minor'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  before(async () => {
    t = await startTestApp({ overrides: { validator: verifying } });
    merchant = await t.createMerchant();
  });
  beforeEach(async () => {
    await t.db.updateTable('sellers').set({ active: false }).where('synthetic', '=', false).execute();
  });
  after(() => t.close());

  it('40 concurrent creates over three sellers: no overbooking, every leg accounted for, FIFO (best rate, then oldest) respected', async () => {
    const first = await t.createSeller(thbSeller(50_000, '35.00', '0811111111'));
    const second = await t.createSeller(thbSeller(50_000, '35.00', '0822222222'));
    const third = await t.createSeller(thbSeller(50_000, '35.50', '0833333333'));
    const responses = await Promise.all(Array.from({ length: 40 }, () => create({ amount: 7_000 })));
    const created = responses.filter((r) => r.statusCode === 201).map((r) => r.json().data);
    // 150,000 of liquidity holds 21 payments of 7,000 (147,000); the other 19 find too little
    assert.equal(created.length, 21, responses.map((r) => r.statusCode).join(','));
    assert.equal(
      responses.filter((r) => r.statusCode === 409 && r.json().error.code === 'PAYMENT_INSUFFICIENT_LIQUIDITY').length,
      19,
    );
    for (const payment of created) {
      assert.equal(
        payment.match_details.reduce(
          (sum: number, leg: { allocated_fiat_amount: number }) => sum + leg.allocated_fiat_amount,
          0,
        ),
        7_000,
        'legs add up to the amount',
      );
    }
    // FIFO with nothing released: a worse offer is used only once the better ones are full
    assert.deepEqual(await sellerRow(first.id), { liquidity_minor: 50_000, reserved_minor: 50_000 });
    assert.deepEqual(await sellerRow(second.id), { liquidity_minor: 50_000, reserved_minor: 50_000 });
    assert.deepEqual(await sellerRow(third.id), { liquidity_minor: 50_000, reserved_minor: 47_000 });
    const legs = await t.db
      .selectFrom('payment_legs')
      .select(['seller_id', (eb) => eb.fn.sum<string>('allocated_fiat_amount').as('total')])
      .where('seller_id', 'in', [first.id, second.id, third.id])
      .groupBy('seller_id')
      .execute();
    assert.deepEqual(
      Object.fromEntries(legs.map((leg) => [leg.seller_id, Number(leg.total)])),
      { [first.id]: 50_000, [second.id]: 50_000, [third.id]: 47_000 },
      'reservations equal the legs',
    );
  });

  it("a quote lock below the seller's rate never takes its offer (DESIGN 3a); a lock at or above it does, and the trade completes", async () => {
    // 35.00 THB of liquidity at 35 THB/PAY: the seller holds exactly 1 PAY
    const seller = await t.createSeller(thbSeller(3_500, '35.00', '0844444444'));
    const lockAt = async (price: string) => {
      await t.admin('PUT', '/admin/fx/reference-prices', { base: 'PAY', quote: 'THB', price });
      return (await t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'THB' })).json().data.id as string;
    };
    for (const amount of [3_000, 100]) {
      const below = await create({ amount, quote_lock_id: await lockAt('34.99') });
      assert.equal(below.statusCode, 409, below.body);
      assert.equal(below.json().error.code, 'PAYMENT_INSUFFICIENT_LIQUIDITY');
    }
    assert.deepEqual(await sellerRow(seller.id), { liquidity_minor: 3_500, reserved_minor: 0 });

    // at exactly the seller's rate: 35.00 THB is 1 PAY
    const covered = await create({ amount: 3_500, quote_lock_id: await lockAt('35.00') });
    assert.equal(covered.statusCode, 201, covered.body);
    const payment = covered.json().data;
    assert.deepEqual(
      payment.match_details.map((leg: any) => [
        leg.seller_id,
        leg.allocated_fiat_amount,
        leg.rate,
        leg.amount_micro_pay,
      ]),
      [[seller.id, 3_500, '35.00', 1_000_000]],
    );
    assert.deepEqual(await sellerRow(seller.id), { liquidity_minor: 3_500, reserved_minor: 3_500 });

    // the buyer pays; completion moves the seller's whole PAY and does not overdraw it
    const upload = await t.request({
      method: 'POST',
      url: `/v1/payments/${payment.id}/proof`,
      headers: { 'x-api-key': merchant.live, 'content-type': 'multipart/form-data; boundary=b' },
      payload: Buffer.concat([
        Buffer.from(
          '--b\r\nContent-Disposition: form-data; name="proof"; filename="s.png"\r\nContent-Type: image/png\r\n\r\n',
        ),
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]),
        Buffer.from('\r\n--b--\r\n'),
      ]),
    });
    assert.equal(upload.statusCode, 200, upload.body);
    assert.equal(await processProofVerdicts({ ...t.application.payments, validator: verifying }), 1);
    assert.equal((await t.call('GET', `/v1/payments/${payment.id}`, merchant.live)).json().data.status, 'completed');
    assert.deepEqual(await sellerRow(seller.id), { liquidity_minor: 0, reserved_minor: 0 });
  });

  it("a lock above the seller's rate takes the seller's fiat one for one; an expired lock-priced payment gives back all it held", async () => {
    const seller = await t.createSeller(thbSeller(3_500, '35.00', '0855555555'));
    await t.admin('PUT', '/admin/fx/reference-prices', { base: 'PAY', quote: 'THB', price: '40.00' });
    const lock = (await t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'THB' })).json().data
      .id as string;
    const above = await create({ amount: 3_500, quote_lock_id: lock });
    assert.equal(above.statusCode, 201, above.body);
    assert.deepEqual(
      above.json().data.match_details.map((leg: any) => [leg.rate, leg.amount_micro_pay]),
      [['40.00', 875_000]],
    );
    assert.deepEqual(await sellerRow(seller.id), { liquidity_minor: 3_500, reserved_minor: 3_500 });
    t.clock.advance(901_000);
    assert.equal(
      (await t.call('GET', `/v1/payments/${above.json().data.id}`, merchant.live)).json().data.status,
      'expired',
    );
    assert.deepEqual(await sellerRow(seller.id), { liquidity_minor: 3_500, reserved_minor: 0 });
  });

  it("no leg is worth 0 PAY: a tail too small to buy 1 micro-PAY at the next offer's rate is not covered by it", async () => {
    // 0.99 THB at 35 THB/PAY, then an offer at 20,000 THB/PAY where 0.01 THB buys 0.5 micro-PAY (rounded down: 0)
    const cheap = await t.createSeller(thbSeller(99, '35.00', '0888888881'));
    const dear = await t.createSeller(thbSeller(10_000, '20000.00', '0888888882'));
    const tail_worthless = await create({ amount: 100 });
    assert.equal(tail_worthless.statusCode, 409, tail_worthless.body);
    assert.equal(tail_worthless.json().error.code, 'PAYMENT_INSUFFICIENT_LIQUIDITY');
    assert.deepEqual(await sellerRow(cheap.id), { liquidity_minor: 99, reserved_minor: 0 });
    assert.deepEqual(await sellerRow(dear.id), { liquidity_minor: 10_000, reserved_minor: 0 });
    // 0.02 THB at 20,000 THB/PAY buys 1 micro-PAY: both legs are worth PAY
    const covered = await create({ amount: 101 });
    assert.equal(covered.statusCode, 201, covered.body);
    assert.deepEqual(
      covered
        .json()
        .data.match_details.map((leg: any) => [leg.seller_id, leg.allocated_fiat_amount, leg.amount_micro_pay]),
      [
        [cheap.id, 99, 28_285],
        [dear.id, 2, 1],
      ],
    );
    const worthless = await t.db
      .selectFrom('payment_legs')
      .select('payment_id')
      .where('amount_micro_pay', '<=', 0)
      .execute();
    assert.deepEqual(worthless, []);
  });

  it(`offers past the first ${OFFER_PAGE}: a payment they alone cover reads the next page, FIFO across pages, and later creates continue from there`, async () => {
    // created worst rate first, rates shared in pairs (the pair at positions 31 and 32 straddles the first page's end)
    const created = [];
    for (let i = OFFER_PAGE + 7; i >= 0; i--)
      created.push(
        await t.createSeller(thbSeller(1_000, (35 + Math.floor((i + 1) / 2) / 100).toFixed(2), `08${10_000_000 + i}`)),
      );
    const fifo = (
      await t.db
        .selectFrom('sellers')
        .select('id')
        .where(
          'id',
          'in',
          created.map((seller) => seller.id),
        )
        .orderBy('rate')
        .orderBy('created_at')
        .orderBy('id')
        .execute()
    ).map((row) => row.id);
    // 34,500: 34 whole offers and half of the 35th, two pages
    const wide = await create({ amount: 34_500 });
    assert.equal(wide.statusCode, 201, wide.body);
    assert.deepEqual(
      wide.json().data.match_details.map((leg: any) => [leg.seller_id, leg.allocated_fiat_amount]),
      [...fifo.slice(0, 34).map((id) => [id, 1_000]), [fifo[34]!, 500]],
    );
    // 5,500 is left: five of eight concurrent creates of 1,000 fit, each offer filled in FIFO order, none overbooked
    const responses = await Promise.all(Array.from({ length: 8 }, () => create({ amount: 1_000 })));
    assert.deepEqual(responses.map((r) => r.statusCode).sort(), [201, 201, 201, 201, 201, 409, 409, 409]);
    const rows = await t.db.selectFrom('sellers').select(['id', 'reserved_minor']).where('id', 'in', fifo).execute();
    const reserved = new Map(rows.map((row) => [row.id, row.reserved_minor]));
    assert.deepEqual(
      fifo.map((id) => reserved.get(id)),
      [...fifo.slice(0, -1).map(() => 1_000), 500],
    );
  });

  it('GET and list read the payment with its legs in one query, rates to the last stored digit', async () => {
    const first = await t.createSeller(thbSeller(1_000, '35.12345678', '0866666666'));
    const second = await t.createSeller(thbSeller(5_000, '35.5', '0877777777'));
    const created = await create({ amount: 1_500 });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id;
    const expected = [
      {
        seller_id: first.id,
        match_order: 1,
        allocated_fiat_amount: 1_000,
        rate: '35.12345678',
        amount_micro_pay: 284_710,
        proof: null,
      },
      {
        seller_id: second.id,
        match_order: 2,
        allocated_fiat_amount: 500,
        rate: '35.50',
        amount_micro_pay: 140_845,
        proof: null,
      },
    ];
    assert.deepEqual(created.json().data.match_details, expected);
    const read = await t.call('GET', `/v1/payments/${id}`, merchant.live);
    assert.deepEqual(read.json().data, created.json().data);
    const listed = await t.call('GET', '/v1/payments?limit=100', merchant.live);
    assert.deepEqual(
      listed.json().data.find((payment: { id: string }) => payment.id === id),
      created.json().data,
    );
    assert.ok(
      listed.json().data.every((payment: { match_details: unknown[] }) => Array.isArray(payment.match_details)),
    );
  });
});
