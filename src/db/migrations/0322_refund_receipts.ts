import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * A succeeded refund has its own receipt: an unguessable `receipt_token` (its page is `/receipts/<token>`, like a
 * payment's), set by the trigger `refunds_assign_receipt` (receipts/sql/mpay_assign_refund_receipt.sql) in the
 * transaction that makes the refund succeed. Refunds that succeeded before this migration get theirs here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table refunds add column receipt_token text;
    create unique index refunds_receipt_token on refunds (receipt_token) where receipt_token is not null;
    update refunds set receipt_token = replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '')
      where status = 'succeeded';
  `,
  );
}
