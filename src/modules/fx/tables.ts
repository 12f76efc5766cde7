import type { Selectable } from 'kysely';

export interface FxTables {
  fx_reference_prices: {
    base: string;
    quote: string;
    price: string;
    updated_at: Date;
    updated_by: string;
  };
  fx_quote_locks: {
    id: string;
    merchant_id: string;
    is_sandbox: boolean;
    base: string;
    quote: string;
    rate: string;
    expires_at: Date;
    created_at: Date;
    used_at: Date | null;
    used_by_payment_id: string | null;
  };
}

export type ReferencePriceRow = Selectable<FxTables['fx_reference_prices']>;
export type QuoteLockRow = Selectable<FxTables['fx_quote_locks']>;
