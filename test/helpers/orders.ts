import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { createInProcessLedger } from '../../src/modules/ledger/in-process.ts';
import { accounts, type Ledger, type TransferCommand } from '../../src/modules/ledger/port.ts';
import { AppError } from '../../src/lib/errors.ts';
import type { TestApp } from './app.ts';

export const MINT_SOURCE = 'treasury';
/** A payout receipt (base64) unlike any other: a receipt accepted for one cash leg is a duplicate on another. */
export const receipt = () => Buffer.from(`%PDF-1.4 payout receipt ${randomUUID()}`).toString('base64');
export const PAY = 1_000_000;

/** A merchant route call with the merchant JWT; POSTs get a fresh Idempotency-Key unless one is given (null: none). */
export function merchantCall(
  t: TestApp,
  jwt: string | null,
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
  key: string | null = randomUUID(),
) {
  const headers: Record<string, string> = {};
  if (jwt) headers['authorization'] = `Bearer ${jwt}`;
  if (method === 'POST' && key !== null) headers['idempotency-key'] = key;
  return t.request({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
}

export function expectError(response: LightMyRequestResponse, status: number, code: string): void {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.json().error.code, code, response.body);
}

/** Funds a merchant's available PAY the way an operator adjustment does (a mint from the adjustments account). */
export async function fund(
  t: TestApp,
  merchant_id: string,
  amount_micro_pay: number,
  is_sandbox = false,
): Promise<void> {
  await t.application.ledger.transfer({
    key: `test-fund:${randomUUID()}`,
    kind: 'mint',
    debit_account: accounts.adjustments(is_sandbox),
    credit_account: accounts.merchantAvailable(merchant_id, is_sandbox),
    amount_micro_pay,
  });
}

export interface ReconciliationDifference {
  cause: string;
  key: string;
  problem: string;
  actual: { transfer_id: string } | null;
  rows: { table: string; id: string }[];
}

/**
 * Every difference `GET /admin/ledger/supply` finds between the ledger and the business records; with
 * `except_test_funding`, leaving out the mints `fund` made straight through the ledger port (no business row) and
 * the adjustment supply they put out of step with the audited adjustments.
 */
export async function reconciliationDifferences(
  t: TestApp,
  { except_test_funding = false } = {},
): Promise<ReconciliationDifference[]> {
  const response = await t.admin('GET', '/admin/ledger/supply');
  assert.equal(response.statusCode, 200, response.body);
  const differences = response.json().data.differences as ReconciliationDifference[];
  return except_test_funding
    ? differences.filter((d) => !d.key.startsWith('test-fund:') && !/^identity:supply:\w+:adjustment$/.test(d.key))
    : differences;
}

export async function balancesOf(t: TestApp, merchant_id: string, is_sandbox = false) {
  const ledger = t.application.ledger;
  return {
    available: await ledger.balance(accounts.merchantAvailable(merchant_id, is_sandbox)),
    reserve: await ledger.balance(accounts.merchantReserve(merchant_id, is_sandbox)),
  };
}

/** A payout destination whose rail carries the currency (PromptPay for THB, PayID for AUD, a Thai bank account otherwise). */
export function destinationFor(currency: string) {
  if (currency === 'THB') return { rail: 'promptpay', promptpay_id: '0812345678' };
  if (currency === 'AUD') return { rail: 'payid', payid: 'seller@example.com.au' };
  return { rail: 'thai_bank', bank_code: '004', account_number: '1234567890', account_name: 'Seller Co' };
}

export const sellBody = (
  amount_micro_pay = 10 * PAY,
  target_currency = 'THB',
  target_fiat_amount = 35_000,
  payout_destination: object | null = destinationFor(target_currency),
) => ({
  amount_micro_pay,
  currency: 'PAY',
  target_currency,
  target_fiat_amount,
  ...(payout_destination ? { payout_destination } : {}),
});
export const buyBody = (amount_micro_pay = 10 * PAY, fiat_currency = 'THB', fiat_amount = 35_000) => ({
  amount_micro_pay,
  fiat_currency,
  fiat_amount,
});

export async function createSell(t: TestApp, jwt: string, body = sellBody()) {
  const response = await merchantCall(t, jwt, 'POST', '/v1/merchant-sell-orders', body);
  assert.equal(response.statusCode, 201, response.body);
  return response.json().data as { id: string; status: string; amount_micro_pay: number };
}

export async function createBuy(t: TestApp, jwt: string, body = buyBody()) {
  const response = await merchantCall(t, jwt, 'POST', '/v1/merchant-buy-orders', body);
  assert.equal(response.statusCode, 201, response.body);
  return response.json().data as { id: string; status: string };
}

/** Runs the matcher and the cash-leg instruction job, as the worker would. */
export async function matchAndInstruct(t: TestApp): Promise<number> {
  const { runMatcher } = await import('../../src/modules/payouts/matcher.ts');
  const { requestCashLegs } = await import('../../src/modules/sell-orders/cash-leg.ts');
  const pairs = await runMatcher(t.application.payouts.matcher);
  await requestCashLegs(t.application.payouts.sell_orders);
  return pairs;
}

/** A sell order of `seller` matched in full with a buy of `buyer` and in flight. */
export async function inFlightSell(t: TestApp, seller_jwt: string, buyer_jwt: string, amount_micro_pay = 10 * PAY) {
  // Price-time priority: the buy takes the oldest sell priced at or below it. At 1 satang for the whole amount, no
  // sell a test left pending at the usual prices qualifies, so this buy meets this sell.
  const sell = await createSell(t, seller_jwt, sellBody(amount_micro_pay, 'THB', 1));
  await createBuy(t, buyer_jwt, buyBody(amount_micro_pay, 'THB', 1));
  await matchAndInstruct(t);
  const read = await merchantCall(t, seller_jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`);
  assert.equal(read.json().data.status, 'cash_leg_in_flight', read.body);
  return read.json().data as { id: string; matched_buy_order_id: string; amount_micro_pay: number };
}

export async function eventTypes(t: TestApp, resource_id: string): Promise<string[]> {
  return (
    await t.db.selectFrom('events').select('type').where('resource_id', '=', resource_id).orderBy('seq').execute()
  ).map((e) => e.type);
}

export { scriptedValidator } from './validator.ts';

/**
 * The in-process ledger behind a switch: `down_for` makes transfers of those kinds fail with LEDGER_UNAVAILABLE, as
 * the HTTP adapter does when the ledger process is unreachable. `attach` binds it to the test app's database.
 */
export function switchableLedger(): Ledger & { down_for: Set<TransferCommand['kind']>; attach(t: TestApp): void } {
  let inner: Ledger | undefined;
  const down_for = new Set<TransferCommand['kind']>();
  const ready = () => {
    if (!inner) throw new Error('switchableLedger: attach() first');
    return inner;
  };
  return {
    kind: 'in_process',
    down_for,
    attach(t) {
      inner = createInProcessLedger({ db: t.db, clock: t.clock });
    },
    async transfer(command, options) {
      if (down_for.has(command.kind)) throw new AppError('LEDGER_UNAVAILABLE', 'ledger unreachable (test switch)');
      return ready().transfer(command, options);
    },
    async transferAll(commands, options) {
      if (commands.some((command) => down_for.has(command.kind)))
        throw new AppError('LEDGER_UNAVAILABLE', 'ledger unreachable (test switch)');
      return ready().transferAll(commands, options);
    },
    async transferBatch(commands, options) {
      if (commands.some((command) => down_for.has(command.kind)))
        throw new AppError('LEDGER_UNAVAILABLE', 'ledger unreachable (test switch)');
      return ready().transferBatch(commands, options);
    },
    balance: (account, options) => ready().balance(account, options),
    balances: (names, options) => ready().balances(names, options),
    creditedSince: (account, since, options) => ready().creditedSince(account, since, options),
    verify: () => ready().verify(),
  };
}
