import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Buy orders honour their price: the matcher fills a buy against the oldest pending sells of its fiat
 * currency priced at or below it, partially where the amounts differ. Each fill is a row (with the mint that paid the
 * buyer); each order keeps how much of it is filled, so a partially filled order stays `pending` for the rest.
 * A sell order can now feed several buys, so the one-buy-per-sell index goes; the buy book index no longer keys on the
 * amount (any amount may fill any other).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table order_fills (
      id uuid primary key,
      is_sandbox boolean not null,
      sell_order_id uuid not null references sell_orders(id),
      buy_order_id uuid not null references buy_orders(id),
      amount_micro_pay bigint not null check (amount_micro_pay > 0),
      fiat_amount bigint not null check (fiat_amount >= 0),
      mint_transfer_id uuid not null,
      created_at timestamptz not null,
      unique (sell_order_id, buy_order_id)
    );
    create index order_fills_buy on order_fills (buy_order_id);

    alter table sell_orders add column filled_micro_pay bigint not null default 0;
    alter table sell_orders add column filled_fiat_amount bigint not null default 0;
    alter table buy_orders add column filled_micro_pay bigint not null default 0;
    alter table buy_orders add column filled_fiat_amount bigint not null default 0;
    alter table sell_orders add constraint sell_orders_filled_within check (filled_micro_pay >= 0 and filled_micro_pay <= amount_micro_pay);
    alter table buy_orders add constraint buy_orders_filled_within check (filled_micro_pay >= 0 and filled_micro_pay <= amount_micro_pay);

    insert into order_fills (id, is_sandbox, sell_order_id, buy_order_id, amount_micro_pay, fiat_amount, mint_transfer_id, created_at)
      select gen_random_uuid(), b.is_sandbox, b.matched_sell_order_id, b.id, b.amount_micro_pay, s.target_fiat_amount, b.mint_transfer_id, coalesce(b.matched_at, b.created_at)
      from buy_orders b join sell_orders s on s.id = b.matched_sell_order_id
      where b.status = 'matched' and b.mint_transfer_id is not null;
    update sell_orders set filled_micro_pay = amount_micro_pay, filled_fiat_amount = target_fiat_amount where matched_buy_order_id is not null;
    update buy_orders set filled_micro_pay = amount_micro_pay, filled_fiat_amount = fiat_amount where status = 'matched';

    drop index buy_orders_one_per_sell;
    drop index buy_orders_pending_fifo;
    create index buy_orders_pending_book on buy_orders (is_sandbox, created_at, id) where status = 'pending';
    create index sell_orders_pending_book on sell_orders (is_sandbox, target_currency, created_at, id) where status = 'pending';
  `,
  );
}
