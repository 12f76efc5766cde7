import type { MerchantScope } from '../../http/principal.ts';
import { notFound } from '../../lib/errors.ts';
import { minorToDecimal, type Currency } from '../../lib/money.ts';
import { sellerPayees } from '../liquidity/service.ts';
import type { BankDirectory } from '../reference/banks.ts';
import { promptpayPayload, qrPng } from '../reference/promptpay.ts';
import {
  amountReceived,
  findPaymentById,
  getPayment,
  legsWithProofs,
  type LegRow,
  type PaymentRow,
  type PaymentsDeps,
} from '../payments/service.ts';
import { legNotPromptPay, promptPayQrThbOnly } from './errors.ts';
import type { CheckoutLeg, CheckoutPayee, CheckoutView } from './schema.ts';

export type { CheckoutLeg, CheckoutPayee, CheckoutView } from './schema.ts';

/** `return_url` with `payment_id` and `status` added, keeping the merchant's own query. */
export function returnRedirectUrl(return_url: string, payment_id: string, status: string): string {
  const url = new URL(return_url);
  url.searchParams.set('payment_id', payment_id);
  url.searchParams.set('status', status);
  return url.toString();
}

/** The view-model behind both `GET /v1/payments/{id}/checkout` and the hosted page. */
export async function buildCheckoutView(
  deps: PaymentsDeps & { banks: BankDirectory },
  payment: PaymentRow,
  leg_rows: readonly LegRow[],
): Promise<CheckoutView> {
  const legs = await legsWithProofs(deps.db, payment, leg_rows);
  const payees = await sellerPayees(
    deps.db,
    legs.map((leg) => leg.seller_id),
  );
  const currency = payment.currency as Currency;
  const base = deps.public_base_url;
  const view_legs: CheckoutLeg[] = [];
  for (const leg of legs) {
    const seller = payees.get(leg.seller_id);
    const display_name = seller?.display_name ?? 'Seller';
    let payee: CheckoutPayee;
    if (seller?.payee.promptpay_id) {
      payee = {
        type: 'promptpay',
        promptpay_id: seller.payee.promptpay_id,
        display_name,
        qr_payload: promptpayPayload(seller.payee.promptpay_id, leg.allocated_fiat_amount),
        qr_image_url: `${base}/v1/payments/${payment.id}/promptpay-qr?leg=${leg.match_order}`,
      };
    } else if (seller?.payee.payid) {
      payee = { type: 'payid', payid: seller.payee.payid, display_name };
    } else {
      const bank = seller?.payee.bank;
      payee = {
        type: 'bank_transfer',
        bank_code: bank?.code ?? '',
        bank_name: bank && currency === 'THB' ? ((await deps.banks.byCode(bank.code))?.name_en ?? null) : null,
        account_number: bank?.account_number ?? '',
        account_name: bank?.account_name ?? display_name,
        display_name,
      };
    }
    view_legs.push({
      match_order: leg.match_order,
      amount: leg.allocated_fiat_amount,
      amount_decimal: minorToDecimal(leg.allocated_fiat_amount, currency),
      payment_method: payment.payment_method,
      payee,
      proof: leg.proof ?? null,
    });
  }
  const now_ms = deps.clock.now().getTime();
  return {
    payment_id: payment.id,
    order_id: payment.order_id,
    status: payment.status,
    amount: payment.amount_minor,
    amount_decimal: minorToDecimal(payment.amount_minor, currency),
    amount_received: amountReceived(payment),
    amount_received_decimal: minorToDecimal(amountReceived(payment), currency),
    currency: payment.currency,
    payment_method: payment.payment_method,
    is_sandbox: payment.is_sandbox,
    expires_at: payment.expires_at.toISOString(),
    seconds_remaining: Math.max(0, Math.floor((payment.expires_at.getTime() - now_ms) / 1000)),
    checkout_url: `${base}/checkout/${payment.id}`,
    proof_upload_url: `${base}/checkout/${payment.id}/proof`,
    return_url: payment.return_url,
    return_redirect_url: returnRedirectUrl(payment.return_url, payment.id, payment.status),
    failure_reason: payment.failure_reason,
    legs: view_legs,
  };
}

/** The merchant's view of its own payment's checkout (404 for another merchant's or another mode's). */
export async function getCheckoutForMerchant(
  deps: PaymentsDeps & { banks: BankDirectory },
  scope: MerchantScope,
  id: string,
): Promise<CheckoutView> {
  await getPayment(deps, scope, id);
  const { payment, legs } = await findPaymentById(deps, id);
  return buildCheckoutView(deps, payment, legs);
}

/**
 * PNG QR of a THB leg's PromptPay payload: `leg` (match_order) or by default the first leg. Public: the payment
 * id is the credential. A non-THB payment is 400 NOT_TH.
 */
export async function promptpayQrForPayment(
  deps: PaymentsDeps,
  id: string,
  leg_number: number | undefined,
): Promise<Buffer> {
  const { payment, legs } = await findPaymentById(deps, id);
  if (payment.currency !== 'THB') throw promptPayQrThbOnly(payment.currency);
  const leg = leg_number === undefined ? legs[0] : legs.find((candidate) => candidate.match_order === leg_number);
  if (!leg) throw notFound('Payment leg');
  const payees = await sellerPayees(deps.db, [leg.seller_id]);
  const promptpay_id = payees.get(leg.seller_id)?.payee.promptpay_id;
  if (!promptpay_id) throw legNotPromptPay();
  return qrPng(promptpayPayload(promptpay_id, leg.allocated_fiat_amount));
}
