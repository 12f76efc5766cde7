import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Receipts: a completed or partly paid payment has a `receipt_number`, sequential per merchant and mode without gaps,
 * and an unguessable `receipt_token` (its page is `/receipts/<token>`). The trigger `payments_assign_receipt`
 * (receipts/sql/mpay_assign_receipt.sql) takes the next number from `receipt_sequences` in the transaction that
 * completes the payment, so a rolled-back completion gives its number back. Payments completed before this migration
 * are numbered here, in the order they completed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table receipt_sequences (
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      kind text not null check (kind in ('payment', 'refund')),
      last_number integer not null check (last_number > 0),
      primary key (merchant_id, is_sandbox, kind)
    );
    alter table payments add column receipt_number integer, add column receipt_token text;
    create unique index payments_receipt_number on payments (merchant_id, is_sandbox, receipt_number) where receipt_number is not null;
    create unique index payments_receipt_token on payments (receipt_token) where receipt_token is not null;
    with numbered as (
      select id, row_number() over (partition by merchant_id, is_sandbox order by completed_at, created_at, id) as n
      from payments where status in ('completed', 'settled'))
    update payments p
      set receipt_number = numbered.n,
          receipt_token = replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '')
      from numbered where p.id = numbered.id;
    insert into receipt_sequences (merchant_id, is_sandbox, kind, last_number)
      select merchant_id, is_sandbox, 'payment', max(receipt_number) from payments
      where receipt_number is not null group by merchant_id, is_sandbox;
  `,
  );
}
