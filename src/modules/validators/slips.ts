import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Trx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import {
  normalizeBankCode,
  type ReceiptCheck,
  type ReceiptValidator,
  type SlipReading,
  type ValidatorVerdict,
} from './port.ts';
import { readSlip } from './read-slip.ts';
import type { SlipRow } from './tables.ts';

/**
 * The slips ledger (DESIGN 3a "Slip identity"): every receipt the gateway judges goes through `judgeSlip`, whatever
 * the route (payment leg proof, pending-funds intake and receiver-confirm, confirm-cash-leg).
 *
 * - A slip is known by (mode, sending bank, bank reference), the pair read locally from its slip-verification QR or
 *   returned by the provider (normalized alike), and otherwise by its SHA-256 in that mode (DESIGN 3b): a sandbox
 *   slip never claims a live reference. One accepted by another owner of the same mode is `duplicate_slip` without
 *   asking the validator; the partial unique index on accepted (mode, identity) is the second half of that check.
 * - The validator's answer is stored before the caller acts on it. A retry for the same owner (after a timeout, a
 *   5xx, a deadlock, a ledger outage) reuses a conclusive stored verdict, and re-asks an inconclusive one without the
 *   provider's duplicate flag, so the gateway's own earlier question never turns a paid slip into a duplicate.
 */

export interface SlipDeps {
  db: Db;
  clock: Clock;
  validator: ReceiptValidator;
}

export const slipOwner = {
  paymentLeg: (payment_id: string, match_order: number) => `payment:${payment_id}:leg:${match_order}`,
  pendingFunds: (id: string) => `pending_funds:${id}`,
  cashLeg: (sell_order_id: string) => `cash_leg:${sell_order_id}`,
};

export interface SlipQuestion {
  owner: string;
  /** The owner's mode: identities never cross modes. */
  is_sandbox: boolean;
  image: Uint8Array;
  content_type: string;
  /** What the slip must show (amount, currency, receiver), passed to the validator. */
  expect: Omit<ReceiptCheck, 'image' | 'content_type' | 'check_duplicate' | 'reading'>;
}

export interface SlipAnswer {
  verdict: ValidatorVerdict;
  sha256: string;
  /** The bank reference, when the slip's QR or the provider gave one. */
  reference: string | null;
  /** The sending bank's code, when the slip's QR or the provider gave one. */
  sending_bank: string | null;
  /** The verdict was stored by an earlier attempt for this owner and is reused (no validator call). */
  reused: boolean;
}

/** Did a provider check this verdict against the bank's record (amount and payee), or did nobody? */
export function checkedByProvider(verdict: ValidatorVerdict): boolean {
  return (
    verdict.outcome === 'verified' &&
    verdict.validator_kind === 'easyslip' &&
    (verdict.unverified_fields?.length ?? 0) === 0
  );
}

const CONCLUSIVE = new Set(['verified', 'failed']);
/** `<sending bank>:<reference>` when both are known, else `sha256:<hex>` (unique per mode among accepted slips). */
export const slipIdentity = (sending_bank: string | null, reference: string | null, sha256: string) =>
  sending_bank && reference ? `${sending_bank}:${reference}` : `sha256:${sha256}`;
const ownerKind = (owner: string) => owner.slice(0, owner.indexOf(':'));

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}

function storedVerdict(row: SlipRow): ValidatorVerdict {
  return {
    outcome: row.outcome ?? 'unverified',
    validator_kind: row.validator_kind ?? 'null_validator',
    ...(row.reason ? { reason: row.reason } : {}),
    ...(row.reference ? { reference: row.reference } : {}),
    ...(row.sending_bank ? { sending_bank: row.sending_bank } : {}),
    ...(row.unverified_fields.length ? { unverified_fields: row.unverified_fields } : {}),
    response: {
      ...(row.validator_response ?? {}),
      reused_verdict: { slip_id: row.id, judged_at: row.updated_at.toISOString() },
    },
  };
}

/** The accepted slip of another owner of this mode with this identity or these bytes, if any. */
async function acceptedElsewhere(
  db: Db,
  slip: { owner: string; is_sandbox: boolean; sha256: string },
  identity: string,
): Promise<SlipRow | undefined> {
  return db
    .selectFrom('slips')
    .selectAll()
    .where('accepted', '=', true)
    .where('is_sandbox', '=', slip.is_sandbox)
    .where('owner', '!=', slip.owner)
    .where((eb) => eb.or([eb('sha256', '=', slip.sha256), eb('identity', '=', identity)]))
    .executeTakeFirst();
}

function duplicateVerdict(validator: ReceiptValidator, first: SlipRow): ValidatorVerdict {
  return {
    outcome: 'failed',
    reason: 'duplicate_slip',
    validator_kind: validator.kind,
    ...(first.reference ? { reference: first.reference } : {}),
    response: {
      gateway: 'slips',
      duplicate_slip: { accepted_for: ownerKind(first.owner), accepted_at: first.updated_at.toISOString() },
    },
  };
}

async function store(
  db: Db,
  at: Date,
  row: { owner: string; is_sandbox: boolean; sha256: string; reference: string | null; sending_bank: string | null },
  verdict: ValidatorVerdict | null,
  asked: boolean,
) {
  const identity = slipIdentity(row.sending_bank, row.reference, row.sha256);
  const accepted = verdict?.outcome === 'verified';
  const judged = verdict
    ? {
        outcome: verdict.outcome,
        reason: verdict.reason ?? null,
        validator_kind: verdict.validator_kind,
        validator_response: JSON.stringify(verdict.response),
        unverified_fields: JSON.stringify(verdict.unverified_fields ?? []),
        accepted,
      }
    : {};
  await db
    .insertInto('slips')
    .values({
      id: randomUUID(),
      ...row,
      identity,
      ...judged,
      provider_asks: asked ? 1 : 0,
      created_at: at,
      updated_at: at,
    })
    .onConflict((conflict) =>
      conflict
        .constraint('slips_owner_sha256_unique')
        .doUpdateSet((eb) => ({
          ...judged,
          reference: row.reference,
          sending_bank: row.sending_bank,
          identity,
          provider_asks: asked ? eb('slips.provider_asks', '+', 1) : eb.ref('slips.provider_asks'),
          updated_at: at,
        }))
        // An accepted verdict is never overwritten by a later check (DESIGN 3b "Slip identity").
        .where('slips.accepted', '=', false),
    )
    .execute();
}

/** This owner's accepted row for these bytes, if a concurrent check accepted it first. */
async function acceptedMine(db: Db, owner: string, sha256: string): Promise<SlipRow | undefined> {
  return db
    .selectFrom('slips')
    .selectAll()
    .where('owner', '=', owner)
    .where('sha256', '=', sha256)
    .where('accepted', '=', true)
    .executeTakeFirst();
}

/**
 * Judges one receipt for one owner: a stored conclusive verdict of this owner for the same slip (same bytes or same
 * reference) is reused; a slip accepted by another owner is `duplicate_slip`; otherwise the validator is asked (the
 * ask counted first, so a crash or timeout after the provider answered makes the retry re-ask without its duplicate
 * flag) and its verdict stored, a `verified` one marking the slip accepted for this owner alone.
 */
export async function judgeSlip(deps: SlipDeps, question: SlipQuestion): Promise<SlipAnswer> {
  const { db, validator } = deps;
  const is_sandbox = question.is_sandbox;
  const sha256 = sha256Hex(question.image);
  const reading: SlipReading = await readSlip(question.image);
  const local = reading.kind === 'slip' ? reading.slip : null;
  const local_reference = local?.reference ?? null;
  const local_bank = local ? normalizeBankCode(local.sending_bank) : null;
  const identity = slipIdentity(local_bank, local_reference, sha256);
  // One read for both questions: this owner's rows for the slip, and the slip accepted by another owner of the mode.
  const seen = await db
    .selectFrom('slips')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb.and([
          eb('owner', '=', question.owner),
          local_reference
            ? eb.or([eb('sha256', '=', sha256), eb('reference', '=', local_reference)])
            : eb('sha256', '=', sha256),
        ]),
        eb.and([
          // literal, so the planner uses the partial indexes on accepted slips
          eb('accepted', '=', sql.lit(true)),
          eb('is_sandbox', '=', is_sandbox),
          eb('owner', '!=', question.owner),
          eb.or([eb('sha256', '=', sha256), eb('identity', '=', identity)]),
        ]),
      ]),
    )
    .orderBy('accepted', 'desc')
    .execute();
  const mine = seen.filter((row) => row.owner === question.owner);
  const known = mine.find((row) => row.outcome !== null && CONCLUSIVE.has(row.outcome));
  if (known)
    return {
      verdict: storedVerdict(known),
      sha256,
      reference: known.reference,
      sending_bank: known.sending_bank,
      reused: true,
    };

  const slip = { owner: question.owner, is_sandbox, sha256, reference: local_reference, sending_bank: local_bank };
  const first = seen.find((row) => row.owner !== question.owner);
  if (first) {
    const verdict = duplicateVerdict(validator, first);
    await store(db, deps.clock.now(), slip, verdict, false);
    return { verdict, sha256, reference: local_reference, sending_bank: local_bank, reused: false };
  }

  const asked_before = mine.some((row) => row.provider_asks > 0);
  await store(db, deps.clock.now(), slip, null, true);
  let verdict: ValidatorVerdict;
  const ask = (check_duplicate: boolean) =>
    validator.validate({
      ...question.expect,
      image: question.image,
      content_type: question.content_type,
      check_duplicate,
      reading,
    });
  try {
    // A sandbox check never asks for the provider's duplicate flag: it must not be refused for a live slip.
    verdict = await ask(!asked_before && !is_sandbox);
    // The provider remembers every slip its account was asked about, sandbox checks and refused slips included; this
    // ledger decides duplicates per mode (below), so a live slip the provider calls a duplicate is asked once more
    // without the flag for the provider's check of amount and payee.
    if (verdict.outcome === 'failed' && verdict.reason === 'duplicate_slip' && validator.kind === 'easyslip')
      verdict = await ask(false);
  } catch (error) {
    // A validator bug is not the payer's fault: unverified, asked again later.
    verdict = {
      outcome: 'unverified',
      validator_kind: validator.kind,
      reason: 'validator_error',
      response: { error: (error as Error).message },
    };
  }
  // The QR's pair when the slip carries one; else the provider's, normalized the same way.
  const reference = local_reference ?? verdict.reference ?? null;
  const sending_bank = local_reference
    ? local_bank
    : verdict.sending_bank
      ? normalizeBankCode(verdict.sending_bank)
      : null;
  const judged = { ...slip, reference, sending_bank };
  if (verdict.outcome === 'verified' && reference && !local_reference) {
    const taken = await acceptedElsewhere(db, judged, slipIdentity(sending_bank, reference, sha256));
    if (taken)
      verdict = {
        ...duplicateVerdict(validator, taken),
        response: { ...verdict.response, ...duplicateVerdict(validator, taken).response },
      };
  }
  try {
    await store(db, deps.clock.now(), judged, verdict, false);
    // A concurrent check of this owner accepted the slip first: its verdict stands, and is the answer.
    const accepted = verdict.outcome === 'verified' ? undefined : await acceptedMine(db, question.owner, sha256);
    if (accepted)
      return {
        verdict: storedVerdict(accepted),
        sha256,
        reference: accepted.reference,
        sending_bank: accepted.sending_bank,
        reused: true,
      };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // Another owner's slip with this identity was accepted meanwhile (or this owner's other photo of it).
    const winner = await db
      .selectFrom('slips')
      .selectAll()
      .where('accepted', '=', true)
      .where('is_sandbox', '=', is_sandbox)
      .where('identity', '=', slipIdentity(sending_bank, reference, sha256))
      .executeTakeFirstOrThrow();
    if (winner.owner === question.owner)
      return { verdict: storedVerdict(winner), sha256, reference, sending_bank, reused: true };
    verdict = duplicateVerdict(validator, winner);
    await store(db, deps.clock.now(), judged, verdict, false);
  }
  return { verdict, sha256, reference, sending_bank, reused: false };
}

/** The stored slips of some owners (a payment's legs), for views. */
export async function slipsOf(db: Db, owners: readonly string[]): Promise<SlipRow[]> {
  if (owners.length === 0) return [];
  return db.selectFrom('slips').selectAll().where('owner', 'in', owners).orderBy('updated_at', 'desc').execute();
}

/**
 * The payee said the money of this owner's slip never arrived (DESIGN 3b): the slip is no longer accepted (its
 * reference is free again, and no receipt shows it as paid) and records the payee's refusal. In the caller's
 * transaction.
 */
export async function refuseSlipByPayee(trx: Trx, owner: string, at: Date): Promise<void> {
  await trx
    .updateTable('slips')
    .set({ accepted: false, outcome: 'failed', reason: 'payee_rejected', updated_at: at })
    .where('owner', '=', owner)
    .where('accepted', '=', true)
    .execute();
}
