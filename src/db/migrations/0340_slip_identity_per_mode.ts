import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Slip identity per mode (DESIGN 3b "Slip identity"): a slip is known by (mode, sending bank, bank reference) when
 * the pair is known, else by its SHA-256 in that mode, so a sandbox slip never claims a live reference. Existing rows
 * take the mode of their owner (a payment, a pending fund, a sell order or a refund) and the identity
 * `<sending bank>:<reference>` or `sha256:<hex>`; the accepted-identity index becomes unique per mode.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table slips add column is_sandbox boolean not null default false;
    update slips set is_sandbox = payments.is_sandbox from payments
      where slips.owner like 'payment:%' and payments.id = split_part(slips.owner, ':', 2);
    update slips set is_sandbox = pending_funds.is_sandbox from pending_funds
      where slips.owner like 'pending_funds:%' and pending_funds.id::text = split_part(slips.owner, ':', 2);
    update slips set is_sandbox = sell_orders.is_sandbox from sell_orders
      where slips.owner like 'cash_leg:%' and sell_orders.id::text = split_part(slips.owner, ':', 2);
    update slips set is_sandbox = refunds.is_sandbox from refunds
      where slips.owner like 'refund:%' and refunds.id::text = split_part(slips.owner, ':', 2);
    update slips set identity = case
      when reference is not null and sending_bank is not null then sending_bank || ':' || reference
      else 'sha256:' || sha256 end;
    drop index slips_accepted_identity;
    create unique index slips_accepted_identity on slips (is_sandbox, identity) where accepted;
    drop index slips_accepted_sha256;
    create index slips_accepted_sha256 on slips (is_sandbox, sha256) where accepted;
  `,
  );
}
