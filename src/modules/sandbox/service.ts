import { randomUUID } from 'node:crypto';
import type { Trx } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Currency, PaymentMethod } from '../../lib/money.ts';
import { allocateSynthetic } from '../liquidity/service.ts';
import { presentPayment, type PaymentView } from '../payments/present.ts';
import {
  emitPaymentEvent,
  insertPayment,
  loadLegs,
  recordSyntheticMatch,
  resolvePaymentMethod,
} from '../payments/service.ts';
import { transition } from '../payments/state.ts';
import type { PaymentCompletionPort } from '../payments/ports.ts';
import type { LegRow } from '../payments/tables.ts';
import { settleSandboxPayment } from '../settlements/service.ts';
import { orderDeliveriesAfter } from '../webhooks/dispatcher.ts';
import { present } from '../../lib/assert.ts';
import { sandboxKeysOnly, tooSmallToSplit } from './errors.ts';

/** The contract's five scenarios (section 4.4), exactly. */
export const SCENARIOS = [
  'matched_then_completed',
  'matched_then_failed',
  'expired',
  'settlement_cycle',
  'matched_partial_fill',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export const DEFAULT_AMOUNT_MINOR = 10_000;
export const DEFAULT_CURRENCY: Currency = 'THB';
/** The first leg of a partial fill takes 65 %, rounded down to a whole minor unit; the second the remainder. */
export const PARTIAL_FILL_FIRST_LEG_PERCENT = 65;
export const SIMULATED_FAILURE_REASON = 'sandbox_simulated_failure';
const DEFAULT_RETURN_URL = 'https://merchant.example/return';
const SIMULATED_EXPIRY_SECONDS = 900;

export interface SandboxDeps {
  clock: Clock;
  public_base_url: string;
  settlement_fee_bps: number;
  /** The payments module's completion: a simulated completion posts its legs and fee on the sandbox ledger too. */
  completion: PaymentCompletionPort;
}

export interface SimulateInput {
  scenario: Scenario;
  amount?: number | undefined;
  currency?: Currency | undefined;
  payment_method?: PaymentMethod | undefined;
  order_id?: string | undefined;
  return_url?: string | undefined;
}

export interface SimulateResult {
  scenario: Scenario;
  payment: PaymentView;
}

function splitParts(scenario: Scenario, amount_minor: number): number[] {
  if (scenario !== 'matched_partial_fill') return [amount_minor];
  const first = Math.floor((amount_minor * PARTIAL_FILL_FIRST_LEG_PERCENT) / 100);
  if (first < 1) {
    throw tooSmallToSplit();
  }
  return [first, amount_minor - first];
}

/**
 * Plays one scenario in the caller's transaction over the synthetic sandbox sellers and returns the terminal view.
 * Every step goes through the payments state machine, and every event is written to the outbox in order, so the
 * webhooks follow from the same dispatcher as live ones. Never calls the receipt validator, never touches live
 * sellers, live accounts or live rows; a completion posts on the sandbox ledger like a live one.
 */
export async function simulatePayment(
  deps: SandboxDeps,
  trx: Trx,
  scope: MerchantScope,
  input: SimulateInput,
): Promise<SimulateResult> {
  if (!scope.is_sandbox) throw sandboxKeysOnly();
  const now = deps.clock.now();
  const currency = input.currency ?? DEFAULT_CURRENCY;
  const amount_minor = input.amount ?? DEFAULT_AMOUNT_MINOR;
  const payment_method = resolvePaymentMethod(currency, input.payment_method);
  const parts = splitParts(input.scenario, amount_minor);
  const id = `sbx_${randomUUID()}`;
  const created = await insertPayment(trx, {
    id,
    scope,
    order_id: input.order_id ?? `sbx_order_${randomUUID()}`,
    amount_minor,
    currency,
    payment_method,
    return_url: input.return_url ?? DEFAULT_RETURN_URL,
    metadata: { sandbox_scenario: input.scenario },
    quote_lock_id: null,
    // The expired scenario's deadline is now; the others keep a normal checkout window.
    expires_at: input.scenario === 'expired' ? now : new Date(now.getTime() + SIMULATED_EXPIRY_SECONDS * 1000),
    created_at: now,
  });

  if (input.scenario === 'expired') {
    // No match, no funds: a single payment.expired.
    const expired = await transition(trx, created, 'expired', now);
    const view = await emitPaymentEvent(trx, now, deps, expired, [], 'payment.expired');
    return { scenario: input.scenario, payment: view };
  }

  const matching = await transition(trx, created, 'matching', now);
  const legs = await allocateSynthetic(trx, { is_sandbox: true, currency, payment_method }, parts);
  const leg_rows: LegRow[] = legs.map((leg) => ({ payment_id: id, ...leg }));
  await recordSyntheticMatch(trx, id, leg_rows, syntheticMatch(leg_rows));
  const matched = await transition(trx, matching, 'matched', now);
  await emitPaymentEvent(trx, now, deps, matched, leg_rows, 'payment.matched');

  if (input.scenario === 'matched_then_failed') {
    const failed = await transition(trx, matched, 'failed', now, { failure_reason: SIMULATED_FAILURE_REASON });
    return {
      scenario: input.scenario,
      payment: await emitPaymentEvent(trx, now, deps, failed, leg_rows, 'payment.failed'),
    };
  }

  // Completed as a live payment is: its synthetic sellers' legs and the fee posted on the sandbox ledger, the fee
  // recorded on the payment, so the sandbox statement and the sandbox ledger agree like live ones.
  const completed = await deps.completion.onCompleted(
    trx,
    await transition(trx, matched, 'completed', now, { amount_received_minor: matched.amount_minor }),
    leg_rows,
  );
  const completed_view = await emitPaymentEvent(trx, now, deps, completed, leg_rows, 'payment.completed');
  if (input.scenario !== 'settlement_cycle') return { scenario: input.scenario, payment: completed_view };

  const { settlement_id } = await settleSandboxPayment(trx, now, completed, deps.settlement_fee_bps);
  // The contract lists settlement.completed after the payment's events: deliver it in line behind them.
  await orderDeliveriesAfter(trx, settlement_id, id);
  const settled = await trx.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return { scenario: input.scenario, payment: presentPayment(settled, await loadLegs(trx, id), deps.public_base_url) };
}

/**
 * The contract's `synthetic_match.tokens`: the PAY amount chosen for the whole payment (in PAY, a number), the first
 * leg's rate, the number of legs as `match_order` of the last leg, and the match status.
 */
function syntheticMatch(legs: readonly LegRow[]): Record<string, unknown> {
  const micro_pay = legs.reduce((sum, leg) => sum + leg.amount_micro_pay, 0);
  return {
    tokens: {
      chosen_amount: micro_pay / 1_000_000,
      rate: Number(present(legs[0], 'a matched sandbox payment has legs').rate),
      match_order: present(legs.at(-1), 'a matched sandbox payment has legs').match_order,
      status: 'matched',
    },
  };
}
