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
    /** The seller key's SHA-256 and hint (migration 0271): null for synthetic sandbox sellers. */
    key_hash: ColumnType<string | null, string | null | undefined, string | null>;
    key_hint: ColumnType<string | null, string | null | undefined, string | null>;
    key_created_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    created_at: Date;
  };
}

export type SellerRow = Selectable<LiquidityTables['sellers']>;
