import type { ColumnType, Insertable, Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';
import type { PayoutDestination } from '../reference/payout-destinations.ts';

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
    /** PAY of this order filled so far (sum of its fills); the order is `matched` when it equals amount_micro_pay. */
    filled_micro_pay: number;
    /** Fiat owed for the filled part, at each fill's sell price (never above this order's own price). */
    filled_fiat_amount: number;
    expires_at: Date;
    matched_sell_order_id: string | null;
    mint_transfer_id: string | null;
    created_at: Date;
    matched_at: Date | null;
    cancelled_at: Date | null;
    expired_at: Date | null;
  };
  /** One fill of a buy order against a sell order: the PAY minted to the buyer and the fiat it costs at the sell's price. */
  order_fills: {
    id: string;
    is_sandbox: boolean;
    sell_order_id: string;
    buy_order_id: string;
    amount_micro_pay: number;
    fiat_amount: number;
    mint_transfer_id: string;
    /** 1, 2, … in the order the buy order's fills were made (the QR route's `n`). */
    buy_fill_number: number;
    /** Whom the buyer pays for this fill, as the seller's destination and name were at the match. */
    payee: Json<FillPayee | null>;
    /** The buyer's name as the seller is shown it. */
    payer_name: string | null;
    created_at: Date;
    /**
     * Set when the fill's own cash leg is confirmed (the seller's verified slip for this buyer, the order's completion,
     * or a dispute resolved for the buyer); until then, and unless reversed, its PAY cannot be cashed out.
     */
    confirmed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    /** Set when the sell order's cash leg failed and the fill was taken back (migration 0221). */
    reversed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    /** PAY burned back from the buyer to the mint source. */
    reversed_micro_pay: ColumnType<number, number | undefined, number>;
    /** PAY the buyer had already spent: its deficit, not an overdraft. reversed + shortfall = amount. */
    shortfall_micro_pay: ColumnType<number, number | undefined, number>;
  };
}

export interface FillPayee {
  display_name: string;
  destination: PayoutDestination;
}

export type BuyOrderRow = Selectable<BuyOrderTables['buy_orders']>;

export type FillRow = Selectable<BuyOrderTables['order_fills']>;
/** A fill as the matcher writes it (not reversed). */
export type NewFill = Insertable<BuyOrderTables['order_fills']>;
