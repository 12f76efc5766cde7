import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table fx_reference_prices (
      base text not null,
      quote text not null,
      -- quote-currency major units per 1 base unit, e.g. PAY/THB 35.00; same precision as seller rates
      price numeric(20, 8) not null check (price > 0),
      updated_at timestamptz not null,
      updated_by text not null,
      primary key (base, quote)
    );
    -- PAY's reference value is 1 USD (DESIGN.md): a fixed peg, not an operator setting.
    insert into fx_reference_prices (base, quote, price, updated_at, updated_by) values ('PAY', 'USD', 1, '2026-01-01T00:00:00Z', 'system');

    create table fx_quote_locks (
      id uuid primary key,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      base text not null,
      quote text not null,
      rate numeric(20, 8) not null check (rate > 0),
      expires_at timestamptz not null,
      created_at timestamptz not null,
      used_at timestamptz,
      used_by_payment_id text,
      check ((used_at is null) = (used_by_payment_id is null))
    );
    create index fx_quote_locks_merchant on fx_quote_locks (merchant_id, is_sandbox, created_at desc);
  `,
  );
}
