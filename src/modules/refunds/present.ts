import type { Executor, Trx } from '../../db/database.ts';
import { iso } from '../../http/schemas.ts';
import { minorToDecimal, type Currency } from '../../lib/money.ts';
import { eventAbout, recordEvent } from '../events/outbox.ts';
import type { PayoutDestination } from '../reference/payout-destinations.ts';
import type { RefundView } from './schema.ts';
import type { RefundProofRow, RefundRow } from './tables.ts';

export type { RefundView } from './schema.ts';

/** The proof columns a view needs (not the image). */
export type ProofSummary = Pick<
  RefundProofRow,
  'id' | 'refund_id' | 'outcome' | 'reason' | 'reference' | 'checked_by_provider' | 'created_at'
>;

const lastFour = (digits: string) => `${'x'.repeat(Math.max(0, digits.length - 4))}${digits.slice(-4)}`;

/** A destination as a refund shows it: the number's last 4 digits, or an email's first letter and domain. */
export function maskDestination(destination: PayoutDestination): RefundView['destination_details'] {
  switch (destination.rail) {
    case 'promptpay':
      return { rail: 'promptpay', masked: lastFour(destination.promptpay_id) };
    case 'thai_bank':
      return {
        rail: 'thai_bank',
        masked: lastFour(destination.account_number),
        bank_code: destination.bank_code,
        bank_name: destination.bank_name,
      };
    case 'au_bank':
      return { rail: 'au_bank', masked: lastFour(destination.account_number) };
    case 'payid': {
      const at = destination.payid.indexOf('@');
      return {
        rail: 'payid',
        masked: at > 0 ? `${destination.payid[0]}***${destination.payid.slice(at)}` : lastFour(destination.payid),
      };
    }
  }
}

export const claimUrl = (public_base_url: string, token: string) => `${public_base_url}/refunds/claim/${token}`;

function proofState(proof: ProofSummary | undefined): RefundView['proof'] {
  if (!proof) return null;
  const status =
    proof.outcome === 'failed' ? 'rejected' : proof.checked_by_provider ? 'verified' : ('awaiting_buyer' as const);
  return {
    id: proof.id,
    status,
    reason: status === 'rejected' ? proof.reason : null,
    reference: proof.reference,
    received_at: iso(proof.created_at),
  };
}

export function presentRefund(row: RefundRow, public_base_url: string, latest_proof?: ProofSummary): RefundView {
  const claim_url = claimUrl(public_base_url, row.claim_token);
  return {
    id: row.id,
    merchant_id: row.merchant_id,
    payment_id: row.payment_id,
    amount: Number(row.amount_minor),
    amount_decimal: minorToDecimal(Number(row.amount_minor), row.currency as Currency),
    currency: row.currency,
    status: row.status,
    reason: row.reason,
    funding: row.funding,
    destination_details: row.destination ? maskDestination(row.destination) : null,
    next_action:
      row.status === 'requires_action' ? { type: 'claim', claim_url, expires_at: iso(row.claim_expires_at) } : null,
    claim_url,
    failure_reason: row.failure_reason,
    proof: proofState(latest_proof),
    amount_micro_pay: row.hold_micro_pay === null ? null : Number(row.hold_micro_pay),
    sell_order_id: row.sell_order_id,
    receipt_url:
      row.status === 'succeeded' && row.receipt_token ? `${public_base_url}/receipts/${row.receipt_token}` : null,
    metadata: row.metadata,
    is_sandbox: row.is_sandbox,
    created_at: iso(row.created_at),
    succeeded_at: iso(row.succeeded_at),
    failed_at: iso(row.failed_at),
    canceled_at: iso(row.canceled_at),
  };
}

/** The latest slip of each refund, for views. */
export async function latestProofs(
  executor: Executor,
  refund_ids: readonly string[],
): Promise<Map<string, ProofSummary>> {
  const latest = new Map<string, ProofSummary>();
  if (refund_ids.length === 0) return latest;
  const rows = await executor
    .selectFrom('refund_proofs')
    .select(['id', 'refund_id', 'outcome', 'reason', 'reference', 'checked_by_provider', 'created_at'])
    .where('refund_id', 'in', refund_ids)
    .orderBy('seq', 'asc')
    .execute();
  for (const row of rows) latest.set(row.refund_id, row);
  return latest;
}

export async function viewOfRefund(executor: Executor, row: RefundRow, public_base_url: string): Promise<RefundView> {
  return presentRefund(row, public_base_url, (await latestProofs(executor, [row.id])).get(row.id));
}

/** What a refund event's `type` says beside `refund.updated`: the end it reached, if any. */
const END_EVENTS: Partial<Record<RefundRow['status'], string>> = {
  succeeded: 'refund.succeeded',
  failed: 'refund.failed',
  canceled: 'refund.canceled',
};

/**
 * Records the events of a refund that just moved (in the mover's transaction): `refund.updated` for every status
 * change (and a staying move that changed what the merchant must do), then `refund.succeeded`, `.failed` or
 * `.canceled` at an end. `refund.created` on creation.
 */
export async function emitRefundEvents(
  trx: Trx,
  at: Date,
  public_base_url: string,
  row: RefundRow,
  kind: 'created' | 'moved',
): Promise<RefundView> {
  const view = await viewOfRefund(trx, row, public_base_url);
  const types =
    kind === 'created'
      ? ['refund.created']
      : ['refund.updated', ...(END_EVENTS[row.status] ? [END_EVENTS[row.status]!] : [])];
  for (const type of types)
    await recordEvent(trx, at, {
      ...eventAbout('refund', row),
      type,
      data: view as unknown as Record<string, unknown>,
    });
  return view;
}
