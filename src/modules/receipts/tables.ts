/**
 * The receipt counters (migration 0321): the last receipt number given per merchant, mode and kind. Written only by
 * the trigger `payments_assign_receipt` (sql/mpay_assign_receipt.sql), which also sets the payment's
 * `receipt_number` and `receipt_token` in the transaction that completes it.
 */
export interface ReceiptTables {
  receipt_sequences: {
    merchant_id: string;
    is_sandbox: boolean;
    kind: 'payment' | 'refund';
    last_number: number;
  };
}
