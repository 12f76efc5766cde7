import type { Trx } from '../../db/database.ts';
import { AppError } from '../../lib/errors.ts';
import { isCurrency, minorToDecimal, type Currency } from '../../lib/money.ts';
import { merchantNames } from '../merchants/service.ts';
import { confirmRefundPayoutByPayee, findRefundPayouts, lockRefundPayout } from '../sell-orders/refund-payouts.ts';
import type { SellOrderRow } from '../sell-orders/tables.ts';
import {
  parsePayoutDestination,
  PAYOUT_RAILS_BY_CURRENCY,
  type PayoutDestinationInput,
  type PayoutRail,
} from '../reference/payout-destinations.ts';
import { emitRefundEvents, maskDestination, type RefundView } from './present.ts';
import { followRefundPayout, inRefundTerms, payoutDeps, startRefundPayout } from './payout.ts';
import { endRefund, succeedRefund, type RefundsDeps } from './service.ts';
import { lockRefundByToken, transition } from './state.ts';
import type { RefundRow } from './tables.ts';

/**
 * The buyer's side of a refund, behind its claim link (the unguessable token is the credential): name a destination
 * while the refund `requires_action`, then say whether the money arrived when the merchant's slip could not be
 * checked by a provider.
 */

/** What the page shows at each point of the refund's life. */
export type ClaimStage = 'claim' | 'waiting' | 'confirm' | 'succeeded' | 'ended';

export interface ClaimView {
  stage: ClaimStage;
  merchant_name: string;
  order_id: string;
  amount_decimal: string;
  currency: string;
  rails: readonly PayoutRail[];
  claim_expires_at: Date;
  destination: RefundView['destination_details'];
  failure_reason: string | null;
  is_sandbox: boolean;
  /** A pay_balance refund: paid by the payout network's payers, not by the merchant's own transfer. */
  through_network: boolean;
}

export const claimNotFound = () => new AppError('NOT_FOUND', 'Refund claim link not found');
const claimClosed = (message: string) => new AppError('REFUND_BAD_STATE', message);

/** A pay_balance refund asks its buyer once a payer has been told to pay them (its sell order's cash leg is in flight). */
function stageOf(refund: RefundRow, now: Date, payout: SellOrderRow | undefined): ClaimStage {
  if (refund.status === 'requires_action') return refund.claim_expires_at > now ? 'claim' : 'ended';
  if (refund.status === 'pending' && payout) return payout.status === 'cash_leg_in_flight' ? 'confirm' : 'waiting';
  if (refund.status === 'pending') return refund.awaiting_buyer_since ? 'confirm' : 'waiting';
  return refund.status === 'succeeded' ? 'succeeded' : 'ended';
}

async function viewOf(trx: Trx | RefundsDeps['db'], refund: RefundRow, now: Date): Promise<ClaimView> {
  const payment = await trx
    .selectFrom('payments')
    .select(['order_id'])
    .where('id', '=', refund.payment_id)
    .executeTakeFirstOrThrow();
  const names = await merchantNames(trx, [refund.merchant_id]);
  const currency = refund.currency as Currency;
  const [payout] = await findRefundPayouts(trx, refund.sell_order_id ? [refund.sell_order_id] : []);
  return {
    stage: stageOf(refund, now, payout),
    merchant_name: names.get(refund.merchant_id) ?? '',
    order_id: payment.order_id,
    amount_decimal: minorToDecimal(Number(refund.amount_minor), currency),
    currency: refund.currency,
    rails: isCurrency(refund.currency) ? PAYOUT_RAILS_BY_CURRENCY[refund.currency] : [],
    claim_expires_at: refund.claim_expires_at,
    destination: refund.destination ? maskDestination(refund.destination) : null,
    failure_reason: refund.failure_reason,
    is_sandbox: refund.is_sandbox,
    through_network: refund.funding === 'pay_balance',
  };
}

const reread = (trx: Trx, id: string) =>
  trx.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

const TOKEN = /^[A-Za-z0-9]{20,64}$/;

/** The claim page's view of the refund behind a token; an unknown token is 404. */
export async function openClaim(deps: RefundsDeps, token: string): Promise<ClaimView> {
  if (!TOKEN.test(token)) throw claimNotFound();
  const refund = await deps.db.selectFrom('refunds').selectAll().where('claim_token', '=', token).executeTakeFirst();
  if (!refund) throw claimNotFound();
  return viewOf(deps.db, refund, deps.clock.now());
}

const RAIL_FIELDS: Record<PayoutRail, readonly (keyof PayoutDestinationInput)[]> = {
  promptpay: ['promptpay_id'],
  thai_bank: ['bank_code', 'account_number', 'account_name'],
  payid: ['payid'],
  au_bank: ['bsb', 'account_number', 'account_name'],
};

/** A claim form's fields as a destination: its rail's fields only (the page shows every rail's form). */
function destinationOfForm(form: Record<string, string>, currency: Currency): PayoutDestinationInput {
  const rail = form['rail'] as PayoutRail;
  if (!PAYOUT_RAILS_BY_CURRENCY[currency].includes(rail))
    throw new AppError('VALIDATION_ERROR', 'Choose how you want to be paid', [
      { field: 'form.rail', message: 'unknown' },
    ]);
  const input: PayoutDestinationInput = { rail };
  for (const field of RAIL_FIELDS[rail]) input[field] = (form[field] ?? '').slice(0, 254) as never;
  return input;
}

export type ClaimAction = 'destination' | 'received' | 'not_received';

/**
 * The claim form's post, in one transaction under the refund's lock: `destination` (requires_action -> pending, the
 * masked destination shown from then on), `received` (the buyer confirms the merchant's slip: succeeded) or
 * `not_received` (the buyer denies it: still pending, `failure_reason: buyer_not_received`, for another slip).
 */
export async function submitClaim(
  deps: RefundsDeps,
  token: string,
  form: Record<string, string>,
): Promise<{ view: ClaimView }> {
  if (!TOKEN.test(token)) throw claimNotFound();
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    // A refund's sell order is locked before the refund, as every path that ends the order takes them.
    const seen = await trx
      .selectFrom('refunds')
      .select('sell_order_id')
      .where('claim_token', '=', token)
      .executeTakeFirst();
    const payout = seen?.sell_order_id ? await lockRefundPayout(trx, seen.sell_order_id) : null;
    const refund = await lockRefundByToken(trx, token);
    if (!refund) throw claimNotFound();
    const action = form['action'] as ClaimAction | undefined;
    if (action === 'destination') {
      if (refund.status !== 'requires_action') throw claimClosed('This refund already knows where to go');
      if (refund.claim_expires_at <= now) {
        // Expired on the way (the sweeper would have): canceled, and the page says so.
        const ended = await endRefund(deps, trx, refund, now, 'canceled', 'claim_expired');
        return { view: await viewOf(trx, await reread(trx, ended.id), now) };
      }
      const currency = refund.currency as Currency;
      const destination = await parsePayoutDestination(destinationOfForm(form, currency), {
        banks: deps.banks,
        currency,
        prefix: 'form',
        executor: trx,
      });
      const moved = await transition(trx, refund, 'pending', now, { destination: JSON.stringify(destination) });
      const paying = await startRefundPayout(deps, trx, moved, now);
      await emitRefundEvents(trx, now, deps.public_base_url, paying, 'moved');
      if (paying.sell_order_id !== null) deps.onDestinationKnown?.();
      return { view: await viewOf(trx, paying, now) };
    }
    if ((action === 'received' || action === 'not_received') && refund.sell_order_id !== null) {
      // A pay_balance refund's payout: the buyer is the payee of its cash leg and vouches for it (DESIGN 3b).
      if (refund.status !== 'pending' || payout?.id !== refund.sell_order_id || payout.status !== 'cash_leg_in_flight')
        throw claimClosed('There is nothing to confirm for this refund now');
      if (action === 'received') {
        const completed = await inRefundTerms(() =>
          confirmRefundPayoutByPayee(payoutDeps(deps).sell_orders, trx, payout, now),
        );
        await followRefundPayout(deps, trx, completed, now);
      } else {
        const denied = await transition(trx, refund, 'pending', now, { failure_reason: 'buyer_not_received' });
        await emitRefundEvents(trx, now, deps.public_base_url, denied, 'moved');
      }
      return { view: await viewOf(trx, await reread(trx, refund.id), now) };
    }
    if (action === 'received' || action === 'not_received') {
      if (refund.status !== 'pending' || refund.awaiting_buyer_since === null)
        throw claimClosed('There is nothing to confirm for this refund now');
      if (action === 'received') {
        await succeedRefund(deps, trx, refund, now);
      } else {
        const denied = await transition(trx, refund, 'pending', now, {
          failure_reason: 'buyer_not_received',
          awaiting_buyer_since: null,
        });
        await emitRefundEvents(trx, now, deps.public_base_url, denied, 'moved');
      }
      return { view: await viewOf(trx, await reread(trx, refund.id), now) };
    }
    throw new AppError('VALIDATION_ERROR', 'Unknown action', [{ field: 'form.action', message: 'unknown' }]);
  });
}
