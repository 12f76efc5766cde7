import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

const BANKS_CSV = new URL('../../modules/reference/thai-banks.csv', import.meta.url);

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table sellers (
      id uuid primary key,
      is_sandbox boolean not null,
      -- synthetic sandbox sellers have unbounded liquidity and are never reserved or locked
      synthetic boolean not null default false,
      display_name text not null,
      currency text not null,
      payment_method text not null,
      rate numeric(20, 8) not null check (rate > 0),
      liquidity_minor bigint not null check (liquidity_minor >= 0),
      reserved_minor bigint not null default 0 check (reserved_minor >= 0 and reserved_minor <= liquidity_minor),
      payee jsonb not null,
      active boolean not null default true,
      created_at timestamptz not null
    );
    create index sellers_offers on sellers (is_sandbox, currency, payment_method, rate, created_at, id) where active;

    create table payments (
      id text primary key,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      order_id text not null,
      amount_minor bigint not null check (amount_minor > 0),
      currency text not null,
      payment_method text not null,
      return_url text not null,
      status text not null check (status in ('created', 'matching', 'matched', 'payment_pending', 'confirming', 'completed', 'failed', 'expired', 'cancelled', 'settled')),
      metadata jsonb not null default '{}',
      quote_lock_id text,
      failure_reason text,
      synthetic_match jsonb,
      settlement_id uuid,
      expires_at timestamptz not null,
      created_at timestamptz not null,
      matched_at timestamptz,
      checkout_opened_at timestamptz,
      confirming_at timestamptz,
      completed_at timestamptz,
      failed_at timestamptz,
      expired_at timestamptz,
      cancelled_at timestamptz,
      settled_at timestamptz,
      constraint payments_order_id_unique unique (merchant_id, is_sandbox, order_id),
      check ((id like 'sbx\\_%') = is_sandbox)
    );
    create index payments_list on payments (merchant_id, is_sandbox, created_at desc, id desc);
    create index payments_open_by_expiry on payments (expires_at) where status in ('matched', 'payment_pending');

    create table payment_legs (
      payment_id text not null references payments(id),
      match_order integer not null check (match_order >= 1),
      seller_id uuid not null references sellers(id),
      allocated_fiat_amount bigint not null check (allocated_fiat_amount > 0),
      rate numeric(20, 8) not null,
      amount_micro_pay bigint not null check (amount_micro_pay >= 0),
      primary key (payment_id, match_order)
    );

    create table payment_proofs (
      id uuid primary key,
      payment_id text not null references payments(id),
      is_sandbox boolean not null,
      sha256 text not null,
      content_type text not null,
      size_bytes integer not null,
      data bytea not null,
      verdict text check (verdict in ('verified', 'failed', 'unverified', 'timeout')),
      verdict_reason text,
      validator_kind text,
      validator_response jsonb,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      claimed_until timestamptz,
      created_at timestamptz not null
    );
    create index payment_proofs_by_hash on payment_proofs (sha256, is_sandbox);
    create index payment_proofs_payment on payment_proofs (payment_id);
    create index payment_proofs_pending on payment_proofs (next_attempt_at) where verdict is null or verdict in ('unverified', 'timeout');

    create table thai_banks (
      code text primary key,
      short_code text not null,
      swift_bic text not null,
      name_en text not null,
      name_th text not null,
      promptpay_member boolean not null
    );
  `,
  );

  const [, ...lines] = readFileSync(BANKS_CSV, 'utf8').trim().split(/\r?\n/);
  for (const line of lines) {
    const [code, short_code, swift_bic, name_en, name_th, promptpay_member] = line.split(',');
    await sql`insert into thai_banks values (${code}, ${short_code}, ${swift_bic}, ${name_en}, ${name_th}, ${promptpay_member === 'true'})`.execute(
      db,
    );
  }

  // Synthetic sandbox sellers: sandbox payments match against these and never touch live liquidity.
  const synthetic: [string, string, string, string, Record<string, unknown>][] = [
    ['9a1b0000-0000-4000-8000-000000000001', 'THB', 'promptpay', '35.00', { promptpay_id: '0812345678' }],
    ['9a1b0000-0000-4000-8000-000000000002', 'THB', 'promptpay', '35.10', { promptpay_id: '0898765432' }],
    [
      '9a1b0000-0000-4000-8000-000000000003',
      'THB',
      'bank_transfer',
      '35.00',
      { bank: { code: '004', account_number: '1234567890', account_name: 'Sandbox Seller A' } },
    ],
    [
      '9a1b0000-0000-4000-8000-000000000004',
      'THB',
      'bank_transfer',
      '35.10',
      { bank: { code: '014', account_number: '9876543210', account_name: 'Sandbox Seller B' } },
    ],
    ['9a1b0000-0000-4000-8000-000000000005', 'AUD', 'payid', '1.50', { payid: 'seller-a@sandbox.example' }],
    ['9a1b0000-0000-4000-8000-000000000006', 'AUD', 'payid', '1.51', { payid: 'seller-b@sandbox.example' }],
    [
      '9a1b0000-0000-4000-8000-000000000007',
      'AUD',
      'bank_transfer',
      '1.50',
      { bank: { code: '062-000', account_number: '12345678', account_name: 'Sandbox Seller A' } },
    ],
    [
      '9a1b0000-0000-4000-8000-000000000008',
      'AUD',
      'bank_transfer',
      '1.51',
      { bank: { code: '033-000', account_number: '87654321', account_name: 'Sandbox Seller B' } },
    ],
    [
      '9a1b0000-0000-4000-8000-000000000009',
      'USD',
      'bank_transfer',
      '1.00',
      { bank: { code: '026009593', account_number: '000123456789', account_name: 'Sandbox Seller A' } },
    ],
    [
      '9a1b0000-0000-4000-8000-00000000000a',
      'USD',
      'bank_transfer',
      '1.01',
      { bank: { code: '021000021', account_number: '000987654321', account_name: 'Sandbox Seller B' } },
    ],
    [
      '9a1b0000-0000-4000-8000-00000000000b',
      'SGD',
      'bank_transfer',
      '1.35',
      { bank: { code: '7171', account_number: '0123456789', account_name: 'Sandbox Seller A' } },
    ],
    [
      '9a1b0000-0000-4000-8000-00000000000c',
      'SGD',
      'bank_transfer',
      '1.36',
      { bank: { code: '7339', account_number: '9876543210', account_name: 'Sandbox Seller B' } },
    ],
  ];
  for (const [id, currency, method, rate, payee] of synthetic) {
    const name = `Sandbox ${currency} ${method} ${id.endsWith('1') || /[13579b]$/.test(id) ? 'A' : 'B'}`;
    await sql`
      insert into sellers (id, is_sandbox, synthetic, display_name, currency, payment_method, rate, liquidity_minor, reserved_minor, payee, created_at)
      values (${id}, true, true, ${name}, ${currency}, ${method}, ${rate}, 0, 0, ${JSON.stringify(payee)}, '2026-01-01T00:00:00Z')
    `.execute(db);
  }
}
