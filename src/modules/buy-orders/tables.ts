import type { Selectable } from 'kysely';

export type BuyOrderStatus = 'pending' | 'matched' | 'cancelled' | 'expired';

export interface BuyOrderTables {
  buy_orders: {
    id: string;
    merchant_id: string;
    is_sandbox: boolean;
    status: BuyOrderStatus;
    amount_micro_pay: number;
    fiat_currency: string;
    fiat_amount: number;
    expires_at: Date;
    matched_sell_order_id: string | null;
    mint_transfer_id: string | null;
    created_at: Date;
    matched_at: Date | null;
    cancelled_at: Date | null;
    expired_at: Date | null;
  };
}

export type BuyOrderRow = Selectable<BuyOrderTables['buy_orders']>;
