import assert from 'node:assert/strict';
import { processProofVerdicts } from '../../src/modules/payments/verdicts.ts';
import type { SettlementsDeps } from '../../src/modules/settlements/service.ts';
import type { TestApp } from './app.ts';
import { multipartParts } from './files.ts';
import { newSlip } from './slips.ts';

type Slip = ReturnType<typeof newSlip>;

/**
 * Uploads a proof of the payment: `slips`, or one new slip per leg (each with a new bank reference; the default
 * validator reads its slip-verification QR). Answers the slips it sent.
 */
export async function uploadProof(
  t: TestApp,
  key: string,
  payment_id: string,
  slips?: readonly Slip[],
): Promise<readonly Slip[]> {
  const legs = slips
    ? 0
    : ((await t.call('GET', `/v1/payments/${payment_id}`, key)).json().data.match_details.length as number);
  const sent = slips ?? Array.from({ length: Math.max(1, legs) }, () => newSlip());
  const { payload, headers } = multipartParts(sent.map((slip) => ({ name: 'proof', value: slip.bytes })));
  const response = await t.request({
    method: 'POST',
    url: `/v1/payments/${payment_id}/proof`,
    headers: { 'x-api-key': key, ...headers },
    payload,
  });
  assert.equal(response.statusCode, 200, response.body);
  return sent;
}

/** Runs the verdict worker (with the application's settings) until it has nothing left. */
export async function drainVerdicts(t: TestApp): Promise<void> {
  while ((await processProofVerdicts(t.application.verdicts)) > 0) {
    // keep going
  }
}

/**
 * The payee's word on every leg waiting for it (DESIGN 3b): an operator confirms each for its seller through
 * `POST /admin/payments/{id}/legs/{n}/confirm`, as a seller who saw the money arrive would. Returns how many.
 */
export async function confirmAwaitingLegs(t: TestApp, payment_ids?: readonly string[]): Promise<number> {
  let query = t.db
    .selectFrom('payment_proofs')
    .select(['payment_id', 'match_order'])
    .where('verdict', '=', 'awaiting_payee')
    .orderBy('payment_id')
    .orderBy('match_order');
  if (payment_ids) query = query.where('payment_id', 'in', payment_ids.length ? payment_ids : ['-']);
  const waiting = await query.execute();
  for (const leg of waiting) {
    const response = await t.admin('POST', `/admin/payments/${leg.payment_id}/legs/${leg.match_order}/confirm`);
    assert.equal(response.statusCode, 200, response.body);
  }
  return waiting.length;
}

/** Creates trades and takes them through proof and verdict to `completed`; returns their ids in order. */
export async function completedPayments(
  t: TestApp,
  key: string,
  specs: { order_id: string; amount: number; currency?: string }[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const spec of specs) {
    const created = await t.call('POST', '/v1/trades', key, {
      order_id: spec.order_id,
      amount: spec.amount,
      currency: spec.currency ?? 'THB',
      return_url: 'https://shop.example/return',
    });
    assert.equal(created.statusCode, 201, created.body);
    ids.push(created.json().data.id);
    await uploadProof(t, key, created.json().data.id);
  }
  await drainVerdicts(t);
  // The local slip check is no evidence for live money: each seller confirms its leg.
  await confirmAwaitingLegs(t, ids);
  for (const id of ids) {
    const read = await t.call('GET', `/v1/payments/${id}`, key);
    assert.equal(read.json().data.status, 'completed', `payment ${id}`);
  }
  return ids;
}

export function settlementDeps(t: TestApp, extra: Partial<SettlementsDeps> = {}): SettlementsDeps {
  return { db: t.db, clock: t.clock, fee_bps: t.application.config.settlement_fee_bps, ...extra };
}

export function usdSeller(liquidity_minor = 10_000_000, rate = '1.00') {
  return {
    currency: 'USD',
    payment_method: 'bank_transfer',
    display_name: 'USD seller',
    liquidity_minor,
    rate,
    bank: { code: '026009593', account_number: '000123456789', account_name: 'Seller' },
  };
}
