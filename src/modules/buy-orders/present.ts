import { iso, viewOf } from '../../http/schemas.ts';
import { promptpayPayload } from '../reference/promptpay.ts';
import { BuyOrderSchema, type BuyOrderFillView, type BuyOrderView } from './schema.ts';
import type { BuyOrderRow, FillRow } from './tables.ts';

/** What a buyer writes on its transfer for a fill: short enough for any rail's memo field, unique per fill. */
export function fillReference(fill_id: string): string {
  return `PAY${fill_id.replace(/-/g, '').slice(0, 9).toUpperCase()}`;
}

export const fillQrPath = (buy_order_id: string, number: number) =>
  `/v1/merchant-buy-orders/${buy_order_id}/fills/${number}/qr.png`;

/** A PromptPay payload for the fill's exact amount when the seller is paid by PromptPay (THB). */
export function fillPromptpayPayload(fill: FillRow, currency: string): string | null {
  const destination = fill.payee?.destination;
  return destination?.rail === 'promptpay' && currency === 'THB'
    ? promptpayPayload(destination.promptpay_id, fill.fiat_amount)
    : null;
}

export function presentFill(fill: FillRow, currency: string): BuyOrderFillView {
  const payload = fillPromptpayPayload(fill, currency);
  return {
    number: fill.buy_fill_number,
    sell_order_id: fill.sell_order_id,
    amount_micro_pay: fill.amount_micro_pay,
    fiat_currency: currency,
    fiat_amount: fill.fiat_amount,
    reference: fillReference(fill.id),
    pay_to: fill.payee,
    promptpay_payload: payload,
    qr_url: payload ? fillQrPath(fill.buy_order_id, fill.buy_fill_number) : null,
    created_at: iso(fill.created_at),
  };
}

export function presentBuyOrder(row: BuyOrderRow, fills: readonly FillRow[] = []): BuyOrderView {
  return viewOf(BuyOrderSchema, { ...row, fills: fills.map((fill) => presentFill(fill, row.fiat_currency)) });
}
