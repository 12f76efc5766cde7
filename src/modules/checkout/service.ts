import { buildCheckoutView, type CheckoutView } from './view.ts';
import {
  findPaymentById,
  markCheckoutOpened,
  uploadProof,
  type PaymentsDeps,
  type ProofUpload,
  type ProofUploadResult,
} from '../payments/service.ts';
import type { BankDirectory } from '../reference/banks.ts';
import { qrPng } from '../reference/promptpay.ts';

export type CheckoutDeps = PaymentsDeps & { banks: BankDirectory };

/**
 * The buyer opens the hosted page: a matched payment becomes payment_pending (once), a due one expires on the way,
 * and the page is built from the same view-model as `GET /v1/payments/{id}/checkout`. Unknown ids are 404.
 */
export async function openCheckout(
  deps: CheckoutDeps,
  id: string,
): Promise<{ view: CheckoutView; qr_data_urls: Map<number, string> }> {
  await markCheckoutOpened(deps, id);
  const { payment, legs } = await findPaymentById(deps, id);
  const view = await buildCheckoutView(deps, payment, legs);
  const qr_data_urls = new Map<number, string>();
  if (view.status === 'matched' || view.status === 'payment_pending' || view.status === 'confirming') {
    for (const leg of view.legs) {
      if (leg.payee.type === 'promptpay' && !leg.proof)
        qr_data_urls.set(
          leg.match_order,
          `data:image/png;base64,${(await qrPng(leg.payee.qr_payload)).toString('base64')}`,
        );
    }
  }
  return { view, qr_data_urls };
}

export interface CheckoutStatus {
  payment_id: string;
  status: string;
  awaiting_payee: boolean;
  seconds_remaining: number;
  failure_reason: string | null;
  return_redirect_url: string;
}

/** What the page polls: the status alone (lazily expiring a due payment), never the payee details. */
export async function checkoutStatus(deps: CheckoutDeps, id: string): Promise<CheckoutStatus> {
  const { payment, legs } = await findPaymentById(deps, id);
  const view = await buildCheckoutView(deps, payment, legs);
  return {
    payment_id: view.payment_id,
    status: view.status,
    awaiting_payee: view.legs.some((leg) => leg.proof?.status === 'awaiting_payee'),
    seconds_remaining: view.seconds_remaining,
    failure_reason: view.failure_reason,
    return_redirect_url: view.return_redirect_url,
  };
}

/** The buyer's upload: public, scoped to this payment and to its status (matched or payment_pending only). */
export async function uploadFromCheckout(
  deps: CheckoutDeps,
  id: string,
  upload: ProofUpload,
): Promise<ProofUploadResult> {
  return uploadProof(deps, null, id, upload);
}
