import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Payouts run buyer -> seller: a sell order names where its seller is paid (`payout_destination`), a merchant may keep
 * a default destination per mode, and each fill keeps what its buyer was told: its number on the buy order, whom to
 * pay (the seller's destination and name, as they were at the match) and the buyer's name the seller sees. A cash-leg
 * attempt names the fill (buy order) whose transfer its slip shows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table sell_orders add column payout_destination jsonb;

    create table merchant_payout_destinations (
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      destination jsonb not null,
      updated_at timestamptz not null,
      primary key (merchant_id, is_sandbox)
    );

    alter table order_fills add column buy_fill_number integer;
    update order_fills f set buy_fill_number = n.number
      from (select id, row_number() over (partition by buy_order_id order by created_at, id) as number from order_fills) n
      where n.id = f.id;
    alter table order_fills alter column buy_fill_number set not null;
    alter table order_fills add constraint order_fills_number_positive check (buy_fill_number > 0);
    create unique index order_fills_buy_number on order_fills (buy_order_id, buy_fill_number);
    alter table order_fills add column payee jsonb;
    alter table order_fills add column payer_name text;

    alter table sell_order_cash_leg_attempts add column buy_order_id uuid;
  `,
  );
}
