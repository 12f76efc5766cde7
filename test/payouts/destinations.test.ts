import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { balancesOf, expectError, fund, merchantCall, MINT_SOURCE, PAY, sellBody } from '../helpers/orders.ts';

/** Where a seller is paid: the payout destination of a sell order, per rail, and the merchant's default. */
describe('payout destinations', () => {
  let t: TestApp;
  let seller: TestMerchant;
  const create = (body: unknown, jwt = seller.jwt) => merchantCall(t, jwt, 'POST', '/v1/merchant-sell-orders', body);
  const fields = (response: { json(): { error: { details: { field: string }[] } } }) =>
    response
      .json()
      .error.details.map((detail) => detail.field)
      .sort();

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
    seller = await t.createMerchant('Seller Co');
    await fund(t, seller.id, 1_000 * PAY);
  });
  after(() => t.close());

  it('each rail is accepted for its currencies and stored normalised', async () => {
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      ['THB', { rail: 'promptpay', promptpay_id: '081-234-5678' }, { rail: 'promptpay', promptpay_id: '0812345678' }],
      [
        'THB',
        { rail: 'thai_bank', bank_code: 'KBANK', account_number: '123-4-56789-0', account_name: ' Seller Co ' },
        {
          rail: 'thai_bank',
          bank_code: '004',
          bank_name: 'Kasikornbank',
          account_number: '1234567890',
          account_name: 'Seller Co',
        },
      ],
      [
        'AUD',
        { rail: 'payid', payid: 'Payouts@Seller.example.com.au' },
        { rail: 'payid', payid: 'payouts@seller.example.com.au' },
      ],
      ['AUD', { rail: 'payid', payid: '0412 345 678' }, { rail: 'payid', payid: '0412345678' }],
      [
        'AUD',
        { rail: 'au_bank', bsb: '062-000', account_number: '12345678', account_name: 'Seller Pty Ltd' },
        { rail: 'au_bank', bsb: '062000', account_number: '12345678', account_name: 'Seller Pty Ltd' },
      ],
      [
        'USD',
        { rail: 'thai_bank', bank_code: '002', account_number: '9876543210', account_name: 'Seller Co' },
        {
          rail: 'thai_bank',
          bank_code: '002',
          bank_name: 'Bangkok Bank',
          account_number: '9876543210',
          account_name: 'Seller Co',
        },
      ],
      [
        'SGD',
        { rail: 'au_bank', bsb: '012003', account_number: '55555', account_name: 'Seller' },
        { rail: 'au_bank', bsb: '012003', account_number: '55555', account_name: 'Seller' },
      ],
    ];
    for (const [currency, destination, stored] of cases) {
      const response = await create(sellBody(PAY, currency, 3_500, destination));
      assert.equal(response.statusCode, 201, response.body);
      assert.deepEqual(response.json().data.payout_destination, stored);
      const read = await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${response.json().data.id}`);
      assert.deepEqual(read.json().data.payout_destination, stored);
    }
  });

  it('a rail that does not carry the currency is 400 naming the rail', async () => {
    for (const [currency, destination] of [
      ['AUD', { rail: 'promptpay', promptpay_id: '0812345678' }],
      ['THB', { rail: 'payid', payid: 'a@b.co' }],
      ['THB', { rail: 'au_bank', bsb: '062000', account_number: '12345678', account_name: 'X' }],
      ['USD', { rail: 'promptpay', promptpay_id: '0812345678' }],
      ['SGD', { rail: 'payid', payid: 'a@b.co' }],
    ] as const) {
      const response = await create(sellBody(PAY, currency, 3_500, destination));
      expectError(response, 400, 'VALIDATION_ERROR');
      assert.deepEqual(fields(response), ['body.payout_destination.rail'], `${currency} ${destination.rail}`);
    }
  });

  it('every bad field is named at once, per rail; nothing is reserved', async () => {
    const before_balances = await balancesOf(t, seller.id);
    const cases: [string, Record<string, string>, string[]][] = [
      ['THB', { rail: 'promptpay', promptpay_id: '12345' }, ['body.payout_destination.promptpay_id']],
      ['THB', { rail: 'promptpay' }, ['body.payout_destination.promptpay_id']],
      ['THB', { rail: 'promptpay', promptpay_id: '0812345678', bsb: '062000' }, ['body.payout_destination.bsb']],
      [
        'THB',
        { rail: 'thai_bank', bank_code: '999', account_number: '12ab', account_name: '  ' },
        [
          'body.payout_destination.account_name',
          'body.payout_destination.account_number',
          'body.payout_destination.bank_code',
        ],
      ],
      [
        'THB',
        { rail: 'thai_bank' },
        [
          'body.payout_destination.account_name',
          'body.payout_destination.account_number',
          'body.payout_destination.bank_code',
        ],
      ],
      ['AUD', { rail: 'payid', payid: 'not a payid' }, ['body.payout_destination.payid']],
      [
        'AUD',
        { rail: 'au_bank', bsb: '12345', account_number: '1234', account_name: 'X', promptpay_id: '0812345678' },
        [
          'body.payout_destination.account_number',
          'body.payout_destination.bsb',
          'body.payout_destination.promptpay_id',
        ],
      ],
      // the rail and the fields together
      [
        'AUD',
        { rail: 'thai_bank', bank_code: 'NOPE', account_number: '1', account_name: 'X' },
        ['body.payout_destination.account_number', 'body.payout_destination.bank_code', 'body.payout_destination.rail'],
      ],
      [
        'THB',
        { rail: 'au_bank', bsb: 'x', account_number: '12345678', account_name: 'X' },
        ['body.payout_destination.bsb', 'body.payout_destination.rail'],
      ],
    ];
    for (const [currency, destination, expected] of cases) {
      const response = await create(sellBody(PAY, currency, 3_500, destination));
      expectError(response, 400, 'VALIDATION_ERROR');
      assert.deepEqual(fields(response), expected, JSON.stringify(destination));
    }
    const unknown_rail = await create(sellBody(PAY, 'THB', 3_500, { rail: 'swift', promptpay_id: '0812345678' }));
    expectError(unknown_rail, 400, 'VALIDATION_ERROR');
    assert.deepEqual(fields(unknown_rail), ['body.payout_destination.rail']);
    assert.deepEqual(await balancesOf(t, seller.id), before_balances);
  });

  it('no destination and no default: 400 naming body.payout_destination, nothing kept', async () => {
    const fresh = await t.createMerchant('No Default');
    await fund(t, fresh.id, 5 * PAY);
    const response = await create(sellBody(PAY, 'THB', 3_500, null), fresh.jwt);
    expectError(response, 400, 'VALIDATION_ERROR');
    assert.deepEqual(fields(response), ['body.payout_destination']);
    assert.deepEqual(await balancesOf(t, fresh.id), { available: 5 * PAY, reserve: 0 });
    const listed = await merchantCall(t, fresh.jwt, 'GET', '/v1/merchant-sell-orders');
    assert.deepEqual(listed.json().data, []);
  });

  it('a default destination: 404 until set, PUT validates every field, then sell orders naming none use it', async () => {
    const m = await t.createMerchant('Defaulted');
    await fund(t, m.id, 10 * PAY);
    const url = '/v1/merchants/me/payout-destination';
    expectError(await merchantCall(t, m.jwt, 'GET', url), 404, 'NOT_FOUND');
    expectError(
      await t.request({ method: 'PUT', url, payload: { rail: 'promptpay', promptpay_id: '0812345678' } }),
      401,
      'UNAUTHORIZED',
    );
    const put = (payload: object) =>
      t.request({ method: 'PUT', url, headers: { authorization: `Bearer ${m.jwt}` }, payload });

    const bad = await put({ rail: 'thai_bank', bank_code: '000', account_number: 'x' });
    expectError(bad, 400, 'VALIDATION_ERROR');
    assert.deepEqual(fields(bad), ['body.account_name', 'body.account_number', 'body.bank_code']);
    expectError(await merchantCall(t, m.jwt, 'GET', url), 404, 'NOT_FOUND');

    const set = await put({
      rail: 'thai_bank',
      bank_code: '014',
      account_number: '111-2-33333-4',
      account_name: 'Defaulted Ltd',
    });
    assert.equal(set.statusCode, 200, set.body);
    const stored = {
      rail: 'thai_bank',
      bank_code: '014',
      bank_name: 'Siam Commercial Bank',
      account_number: '1112333334',
      account_name: 'Defaulted Ltd',
    };
    assert.deepEqual(set.json().data.destination, stored);
    assert.deepEqual((await merchantCall(t, m.jwt, 'GET', url)).json().data.destination, stored);
    // another merchant does not see it
    expectError(await merchantCall(t, seller.jwt, 'GET', url), 404, 'NOT_FOUND');

    const thb = await create(sellBody(PAY, 'THB', 3_500, null), m.jwt);
    assert.equal(thb.statusCode, 201, thb.body);
    assert.deepEqual(thb.json().data.payout_destination, stored);
    // A named destination wins over the default.
    const named = await create(sellBody(PAY, 'THB', 3_500, { rail: 'promptpay', promptpay_id: '0899999999' }), m.jwt);
    assert.deepEqual(named.json().data.payout_destination, { rail: 'promptpay', promptpay_id: '0899999999' });
    // A default whose rail does not carry the currency does not apply.
    const aud = await create(sellBody(PAY, 'AUD', 3_500, null), m.jwt);
    expectError(aud, 400, 'VALIDATION_ERROR');
    assert.deepEqual(fields(aud), ['body.payout_destination']);

    // Replacing the default changes new orders only.
    assert.equal((await put({ rail: 'promptpay', promptpay_id: '0811111111' })).statusCode, 200);
    const later = await create(sellBody(PAY, 'THB', 3_500, null), m.jwt);
    assert.deepEqual(later.json().data.payout_destination, { rail: 'promptpay', promptpay_id: '0811111111' });
    const first = await merchantCall(t, m.jwt, 'GET', `/v1/merchant-sell-orders/${thb.json().data.id}`);
    assert.deepEqual(first.json().data.payout_destination, stored);
  });

  it('the default is per mode: a sandbox credential has its own', async () => {
    const m = await t.createMerchant('Modes');
    const sandbox = await t.admin('POST', `/admin/merchants/${m.id}/tokens`, { mode: 'sandbox' });
    assert.equal(sandbox.statusCode, 201, sandbox.body);
    const sandbox_jwt = sandbox.json().data.jwt as string;
    const url = '/v1/merchants/me/payout-destination';
    const put = await t.request({
      method: 'PUT',
      url,
      headers: { authorization: `Bearer ${m.jwt}` },
      payload: { rail: 'payid', payid: '0412345678' },
    });
    assert.equal(put.statusCode, 200, put.body);
    expectError(await merchantCall(t, sandbox_jwt, 'GET', url), 404, 'NOT_FOUND');
    assert.equal((await merchantCall(t, m.jwt, 'GET', url)).json().data.destination.payid, '0412345678');
  });
});
