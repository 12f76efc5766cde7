import type { ColumnType, Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';

export interface SellerPayee {
  promptpay_id?: string;
  payid?: string;
  bank?: { code: string; account_number: string; account_name: string };
}

/** The liquidity module's table: seller offers (live, and synthetic sandbox ones), their liquidity and reservations. */
export interface LiquidityTables {
  sellers: {
    id: string;
    is_sandbox: boolean;
    synthetic: boolean;
    display_name: string;
    currency: string;
    payment_method: string;
    rate: string;
    liquidity_minor: number;
    reserved_minor: number;
    payee: Json<SellerPayee>;
    active: boolean;
    /** Out of matching since the ledger refused a completion for lack of its PAY (migration 0222); null otherwise. */
    suspended_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    suspension_reason: ColumnType<string | null, string | null | undefined, string | null>;
    created_at: Date;
  };
}

export type SellerRow = Selectable<LiquidityTables['sellers']>;
