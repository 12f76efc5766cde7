import type { Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';

/**
 * Payment links (migration 0320). A link is never deleted: deactivation sets `deactivated_at`. `payments_completed`
 * is written by the trigger `payments_count_link_payment` (sql/mpay_count_link_payment.sql) when a payment made from
 * the link completes, in that payment's completing transaction.
 */
export interface PaymentLinkTables {
  payment_links: {
    id: string;
    merchant_id: string;
    is_sandbox: boolean;
    title: string;
    description: string | null;
    currency: string;
    /** A fixed amount (minor units), or null when the payer types one within the range. */
    amount_minor: number | null;
    amount_min_minor: number | null;
    amount_max_minor: number | null;
    reusable: boolean;
    max_payments: number | null;
    expires_at: Date | null;
    return_url: string | null;
    metadata: Json<Record<string, string>>;
    payments_completed: number;
    created_at: Date;
    deactivated_at: Date | null;
  };
}

export type PaymentLinkRow = Selectable<PaymentLinkTables['payment_links']>;
