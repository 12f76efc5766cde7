import { randomUUID } from 'node:crypto';
import type { Trx } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import { fillReference, presentBuyOrder } from '../buy-orders/present.ts';
import type { BuyOrderRow, FillRow } from '../buy-orders/tables.ts';
import { presentDispute } from '../disputes/service.ts';
import type { DisputeRow } from '../disputes/tables.ts';
import { recordEvent, type EventEnvelope, type NewEvent } from '../events/outbox.ts';
import { presentPendingFunds } from '../pending-funds/present.ts';
import type { PendingFundsRow } from '../pending-funds/tables.ts';
import { presentSellOrder } from '../sell-orders/present.ts';
import type { SellOrderRow } from '../sell-orders/tables.ts';
import { presentSettlement } from '../settlements/present.ts';
import type { SettlementRow } from '../settlements/tables.ts';
import type { SyntheticEventType } from './event-types.ts';
import { sandboxKeysOnly } from './errors.ts';

/**
 * Sandbox events of the kinds the payment scenarios do not produce (sell orders, buy orders, disputes, pending funds,
 * settlements), so that `mpay sandbox trigger <type>` can exercise a webhook handler for every event type. No sandbox
 * flow reaches these resources, so each event describes a synthetic resource (a fresh UUID, as the resource's schema
 * requires, with no row behind it) shaped
 * by the owning module's own presenter, and is written to the outbox exactly as a real one: the same envelope, the
 * same delivery trigger, `sandbox: true`. Sandbox credentials only.
 */

const SAMPLE_MICRO_PAY = 10_000_000;
const SAMPLE_FIAT_MINOR = 35_000;
/** The synthetic seller's payout destination (a PromptPay mobile number of the sandbox). */
const SAMPLE_DESTINATION = { rail: 'promptpay', promptpay_id: '0812345678' } as const;
const HOUR_MS = 3600_000;

const syntheticId = () => randomUUID();

function sellOrder(merchant_id: string, now: Date, type: SyntheticEventType): SellOrderRow {
  const failed = type === 'sell_order.failed';
  const completed = type === 'sell_order.completed';
  return {
    id: syntheticId(),
    merchant_id,
    is_sandbox: true,
    status: failed ? 'failed' : completed ? 'completed' : 'cash_leg_in_flight',
    amount_micro_pay: SAMPLE_MICRO_PAY,
    currency: 'PAY',
    target_currency: 'THB',
    target_fiat_amount: SAMPLE_FIAT_MINOR,
    // Every synthetic sell order has been matched in full (its cash leg was requested).
    filled_micro_pay: SAMPLE_MICRO_PAY,
    filled_fiat_amount: SAMPLE_FIAT_MINOR,
    expires_at: new Date(now.getTime() + 24 * HOUR_MS),
    payout_destination: SAMPLE_DESTINATION,
    matched_buy_order_id: syntheticId(),
    mint_source_account: null,
    cash_leg_attempts: failed ? 5 : completed ? 1 : 0,
    cash_leg_retries_used: failed ? 5 : 0,
    last_cash_leg_attempt_at: failed || completed ? now : null,
    last_cash_leg_outcome: failed ? 'failed' : completed ? 'verified' : null,
    failure_reason: failed ? 'cash_leg_retry_exhausted' : null,
    held_by_dispute_id: null,
    refund_id: null,
    created_at: new Date(now.getTime() - HOUR_MS),
    matched_at: now,
    cash_leg_requested_at: now,
    completed_at: completed ? now : null,
    failed_at: failed ? now : null,
  };
}

function buyOrder(merchant_id: string, now: Date, type: SyntheticEventType): BuyOrderRow {
  const partial = type === 'buy_order.partially_filled';
  const status =
    type === 'buy_order.created' || partial
      ? 'pending'
      : (type.slice('buy_order.'.length) as 'matched' | 'cancelled' | 'expired');
  // A partial fill: 40 % of the amount, at the buy's own price.
  const filled_micro_pay = status === 'matched' ? SAMPLE_MICRO_PAY : partial ? (SAMPLE_MICRO_PAY * 2) / 5 : 0;
  return {
    id: syntheticId(),
    merchant_id,
    is_sandbox: true,
    status,
    amount_micro_pay: SAMPLE_MICRO_PAY,
    fiat_currency: 'THB',
    fiat_amount: SAMPLE_FIAT_MINOR,
    filled_micro_pay,
    filled_fiat_amount: (SAMPLE_FIAT_MINOR * filled_micro_pay) / SAMPLE_MICRO_PAY,
    expires_at: new Date(now.getTime() + 24 * HOUR_MS),
    matched_sell_order_id: filled_micro_pay > 0 ? syntheticId() : null,
    mint_transfer_id: null,
    created_at: now,
    matched_at: filled_micro_pay > 0 ? now : null,
    cancelled_at: status === 'cancelled' ? now : null,
    expired_at: status === 'expired' ? now : null,
  };
}

function dispute(merchant_id: string, now: Date, type: SyntheticEventType): DisputeRow {
  const status = type.slice('gateway.dispute.'.length) as 'opened' | 'escalated' | 'resolved';
  return {
    id: syntheticId(),
    merchant_id,
    is_sandbox: true,
    sell_order_id: syntheticId(),
    kind: 'merchant_dispute',
    status,
    notes: 'sandbox dispute',
    opened_by_user_id: 'sandbox',
    opened_by: 'seller',
    opened_by_merchant_id: merchant_id,
    outcome: status === 'resolved' ? 'no_action' : null,
    ledger_effect: status === 'resolved' ? 'none' : null,
    ledger_amount_micro_pay: null,
    ledger_transfer_id: null,
    created_at: now,
    investigating_at: null,
    escalated_at: status === 'escalated' ? now : null,
    resolved_at: status === 'resolved' ? now : null,
  };
}

function pendingFunds(merchant_id: string, now: Date, type: SyntheticEventType): PendingFundsRow {
  const kind = type.slice('pending_funds.'.length);
  const status =
    kind === 'validated' ? 'validated_pending_receiver_confirm' : (kind as 'confirmed' | 'failed' | 'expired');
  return {
    id: syntheticId(),
    receiver_merchant_id: merchant_id,
    is_sandbox: true,
    status,
    amount_minor: SAMPLE_MICRO_PAY,
    payer_reference: 'sbx-payer',
    fiat_amount_minor: SAMPLE_FIAT_MINOR,
    fiat_currency: 'THB',
    receiver_account: { promptpay_id: '0812345678' },
    receipt_sha256: '0'.repeat(64),
    content_type: 'image/png',
    validator_kind: 'null_validator',
    attempts: 1,
    unverified_attempts: 0,
    failure_reason: status === 'failed' ? 'sandbox_simulated_failure' : null,
    ledger_transfer_id: null,
    expires_at: new Date(now.getTime() + 72 * HOUR_MS),
    first_receiver_attempt_at: status === 'confirmed' ? now : null,
    receiver_window_expires_at: new Date(now.getTime() + 24 * HOUR_MS),
    created_at: new Date(now.getTime() - HOUR_MS),
    updated_at: now,
    validated_at: now,
    confirmed_at: status === 'confirmed' ? now : null,
    failed_at: status === 'failed' ? now : null,
    expired_at: status === 'expired' ? now : null,
    intake_attempts: 1,
    intake_next_attempt_at: null,
    intake_claimed_until: null,
  };
}

function settlement(merchant_id: string, now: Date, type: SyntheticEventType): SettlementRow {
  const failed = type === 'settlement.failed';
  const fee_minor = Math.floor((SAMPLE_FIAT_MINOR * 150) / 10_000);
  return {
    id: syntheticId(),
    merchant_id,
    is_sandbox: true,
    currency: 'THB',
    status: failed ? 'failed' : 'completed',
    fee_bps: 150,
    payment_count: 1,
    gross_minor: SAMPLE_FIAT_MINOR,
    fee_minor,
    fee_micro_pay: Math.floor((SAMPLE_MICRO_PAY * 150) / 10_000),
    adjustments_minor: 0,
    net_minor: SAMPLE_FIAT_MINOR - fee_minor,
    failure_reason: failed ? 'sandbox_simulated_failure' : null,
    retry_count: 0,
    created_at: now,
    completed_at: failed ? null : now,
    failed_at: failed ? now : null,
  };
}

/** Writes one synthetic sandbox event of `type` to the outbox in the caller's transaction; returns its envelope. */
export async function emitSyntheticEvent(
  deps: { clock: Clock },
  trx: Trx,
  scope: MerchantScope,
  type: SyntheticEventType,
): Promise<EventEnvelope> {
  if (!scope.is_sandbox) throw sandboxKeysOnly();
  const now = deps.clock.now();
  return recordEvent(trx, now, {
    merchant_id: scope.merchant_id,
    is_sandbox: true,
    type,
    ...syntheticSubject(scope.merchant_id, now, type),
  });
}

type Subject = Pick<NewEvent, 'resource_type' | 'resource_id' | 'data' | 'flat'>;

const about = (resource_type: string, resource_id: string, data: object): Subject => ({
  resource_type,
  resource_id,
  data: data as Record<string, unknown>,
});

/** The synthetic resource an event of `type` is about, as its webhook shows it. */
function syntheticSubject(merchant_id: string, now: Date, type: SyntheticEventType): Subject {
  const resource = type.startsWith('gateway.dispute.') ? 'dispute' : type.slice(0, type.indexOf('.'));
  switch (resource) {
    case 'sell_order': {
      const row = sellOrder(merchant_id, now, type);
      // What the seller is told to expect: one synthetic buyer's transfer into its destination.
      const cash_leg = {
        direction: 'buyers_pay_you',
        buy_order_id: row.matched_buy_order_id,
        fiat_currency: row.target_currency,
        fiat_amount: row.filled_fiat_amount,
        amount_micro_pay: row.filled_micro_pay,
        to: row.payout_destination,
        fills: [
          {
            buy_order_id: row.matched_buy_order_id,
            payer_name: 'Sandbox Buyer',
            reference: fillReference(syntheticId()),
            amount_micro_pay: row.filled_micro_pay,
            fiat_amount: row.filled_fiat_amount,
          },
        ],
      };
      const data = { ...presentSellOrder(row), ...(type === 'sell_order.cash_leg_requested' ? { cash_leg } : {}) };
      return about('sell_order', row.id, data);
    }
    case 'buy_order': {
      const row = buyOrder(merchant_id, now, type);
      // A filled synthetic order: one fill paying the sandbox seller by PromptPay.
      const fills: FillRow[] =
        row.filled_micro_pay > 0 && row.matched_sell_order_id
          ? [
              {
                id: syntheticId(),
                is_sandbox: true,
                sell_order_id: row.matched_sell_order_id,
                buy_order_id: row.id,
                amount_micro_pay: row.filled_micro_pay,
                fiat_amount: row.filled_fiat_amount,
                mint_transfer_id: syntheticId(),
                buy_fill_number: 1,
                payee: { display_name: 'Sandbox Seller', destination: SAMPLE_DESTINATION },
                payer_name: null,
                created_at: now,
                confirmed_at: null,
                reversed_at: null,
                reversed_micro_pay: 0,
                shortfall_micro_pay: 0,
              },
            ]
          : [];
      return about('buy_order', row.id, presentBuyOrder(row, fills));
    }
    case 'dispute': {
      const row = dispute(merchant_id, now, type);
      return about('dispute', row.id, { ...presentDispute(row), actor_user_id: 'sandbox' });
    }
    case 'pending_funds': {
      const row = pendingFunds(merchant_id, now, type);
      return about('pending_funds', row.id, presentPendingFunds(row));
    }
    default: {
      const row = settlement(merchant_id, now, type);
      const { id: settlement_id, net_minor: amount, currency, status, payment_count } = row;
      return {
        ...about('settlement', row.id, presentSettlement(row)),
        flat: { settlement_id, amount, currency, status, payment_count },
      };
    }
  }
}
