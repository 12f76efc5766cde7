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

/** A unique index refused a write (PostgreSQL's 23505). */
export function isUniqueViolation(error: unknown): boolean {
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
  db: Db | Trx,
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

/** The columns a verdict is stored in; a `verified` one accepts the slip for its owner. */
function verdictColumns(verdict: ValidatorVerdict) {
  return {
    outcome: verdict.outcome,
    reason: verdict.reason ?? null,
    validator_kind: verdict.validator_kind,
    validator_response: JSON.stringify(verdict.response),
    unverified_fields: JSON.stringify(verdict.unverified_fields ?? []),
    accepted: verdict.outcome === 'verified',
  };
}

/** A validator that threw: not the payer's fault, so unverified, and asked again later. */
function validatorErrorVerdict(validator: ReceiptValidator, error: unknown): ValidatorVerdict {
  return {
    outcome: 'unverified',
    validator_kind: validator.kind,
    reason: 'validator_error',
    response: { error: (error as Error).message },
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
  const judged = verdict ? verdictColumns(verdict) : {};
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

/** What the slips ledger reads off a question before any database read: the bytes' hash, the slip's QR, its identity. */
export interface ReadQuestion {
  question: SlipQuestion;
  is_sandbox: boolean;
  sha256: string;
  reading: SlipReading;
  local_reference: string | null;
  local_bank: string | null;
  identity: string;
}

/** Reads a question's receipt (its hash and its QR), with no database read: a batch's questions are read beforehand. */
export async function readQuestion(question: SlipQuestion): Promise<ReadQuestion> {
  const sha256 = sha256Hex(question.image);
  const reading: SlipReading = await readSlip(question.image);
  const local = reading.kind === 'slip' ? reading.slip : null;
  const local_reference = local?.reference ?? null;
  const local_bank = local ? normalizeBankCode(local.sending_bank) : null;
  const identity = slipIdentity(local_bank, local_reference, sha256);
  return { question, is_sandbox: question.is_sandbox, sha256, reading, local_reference, local_bank, identity };
}

/**
 * Among stored slips, this owner's rows for the slip (same bytes, or the same QR reference), the conclusive verdict
 * among them to reuse, and else the slip accepted by another owner of the mode (same bytes or same identity).
 */
function priorVerdict(
  read: ReadQuestion,
  seen: readonly SlipRow[],
): { mine: SlipRow[]; known: SlipRow | undefined; first: SlipRow | undefined } {
  const { owner } = read.question;
  const mine = seen.filter(
    (row) =>
      row.owner === owner &&
      (row.sha256 === read.sha256 || (read.local_reference !== null && row.reference === read.local_reference)),
  );
  const known = mine.find((row) => row.outcome !== null && CONCLUSIVE.has(row.outcome));
  const first = seen.find(
    (row) =>
      row.accepted &&
      row.is_sandbox === read.is_sandbox &&
      row.owner !== owner &&
      (row.sha256 === read.sha256 || row.identity === read.identity),
  );
  return { mine, known, first };
}

/**
 * Judges one receipt for one owner: a stored conclusive verdict of this owner for the same slip (same bytes or same
 * reference) is reused; a slip accepted by another owner is `duplicate_slip`; otherwise the validator is asked (the
 * ask counted first, so a crash or timeout after the provider answered makes the retry re-ask without its duplicate
 * flag) and its verdict stored, a `verified` one marking the slip accepted for this owner alone.
 */
export async function judgeSlip(deps: SlipDeps, question: SlipQuestion): Promise<SlipAnswer> {
  const { db, validator } = deps;
  const read = await readQuestion(question);
  const { is_sandbox, sha256, reading, local_reference, local_bank, identity } = read;
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
  const { mine, known, first } = priorVerdict(read, seen);
  if (known)
    return {
      verdict: storedVerdict(known),
      sha256,
      reference: known.reference,
      sending_bank: known.sending_bank,
      reused: true,
    };

  const slip = { owner: question.owner, is_sandbox, sha256, reference: local_reference, sending_bank: local_bank };
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
    verdict = validatorErrorVerdict(validator, error);
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

/** Does this validator ask a provider (whose asks are counted before each call), or read the receipt locally? */
export function asksProvider(validator: ReceiptValidator): boolean {
  return validator.kind === 'easyslip';
}

/** A verdict judged by `judgeSlipsLocally`, written by `storeSlips` in the transaction that acts on it. */
export interface SlipWrite {
  id: string;
  owner: string;
  is_sandbox: boolean;
  sha256: string;
  reference: string | null;
  sending_bank: string | null;
  verdict: ValidatorVerdict;
}

/** A question's answer, and its verdict to write (null when a stored verdict of this owner is reused). */
export interface LocalJudgement {
  answer: SlipAnswer;
  write: SlipWrite | null;
}

/**
 * Judges many receipts (read by `readQuestion`) at once for a validator that asks no provider, by `judgeSlip`'s
 * rules: one read finds every question's stored rows, the validator is asked (in question order) only where no
 * conclusive verdict of the owner is stored and no other owner of the mode accepted the slip, and each question sees
 * the verdicts of the questions before it (a slip an earlier question of another owner accepted is `duplicate_slip`;
 * a second question of the same owner reuses the first's conclusive verdict). Nothing is written here: the caller
 * writes the verdicts with `storeSlips` in the transaction that acts on them, so a verdict and its effect commit
 * together, and a batch that rolls back leaves nothing for its retry to reuse (the local validator answers the retry
 * alike); `db` may be that transaction, so the reads go with its other statements. A verdict that names a reference
 * the slip's own QR did not give is checked against that reference's acceptance elsewhere, as `judgeSlip` checks it.
 */
export async function judgeSlipsLocally(
  deps: SlipDeps,
  reads: readonly ReadQuestion[],
  db: Db | Trx = deps.db,
): Promise<LocalJudgement[]> {
  const { validator } = deps;
  if (reads.length === 0) return [];
  if (asksProvider(validator)) throw new Error('judgeSlipsLocally is for validators that ask no provider');
  const owners = [...new Set(reads.map((read) => read.question.owner))];
  const shas = [...new Set(reads.map((read) => read.sha256))];
  const references = [...new Set(reads.flatMap((read) => (read.local_reference ? [read.local_reference] : [])))];
  const identities = [...new Set(reads.map((read) => read.identity))];
  const modes = [...new Set(reads.map((read) => read.is_sandbox))];
  // A superset of every question's rows, each branch on its own index; priorVerdict keeps each question's own.
  const seen: SlipRow[] = (
    await sql<SlipRow>`
      select * from slips where id in (
        select id from slips where owner = any(${owners}::text[]) and sha256 = any(${shas}::text[])
        union all
        select id from slips where owner = any(${owners}::text[]) and reference = any(${references}::text[])
        union all
        select id from slips where accepted and is_sandbox = any(${modes}::boolean[]) and sha256 = any(${shas}::text[])
        union all
        select id from slips where accepted and is_sandbox = any(${modes}::boolean[]) and identity = any(${identities}::text[])
      )
      order by accepted desc`.execute(db)
  ).rows;
  // The validator is asked up front, in question order, for every question the stored rows leave open.
  const asked = reads.map((read) => {
    const { mine, known, first } = priorVerdict(read, seen);
    if (known || first) return null;
    return validator
      .validate({
        check_duplicate: !read.is_sandbox && !mine.some((row) => row.provider_asks > 0),
        ...read.question.expect,
        image: read.question.image,
        content_type: read.question.content_type,
        reading: read.reading,
      })
      .catch((error: unknown) => validatorErrorVerdict(validator, error));
  });
  const judged: LocalJudgement[] = [];
  const at = deps.clock.now();
  for (const [index, read] of reads.entries()) {
    const { known, first } = priorVerdict(read, seen);
    const { sha256 } = read;
    if (known) {
      judged.push({
        answer: {
          verdict: storedVerdict(known),
          sha256,
          reference: known.reference,
          sending_bank: known.sending_bank,
          reused: true,
        },
        write: null,
      });
      continue;
    }
    let verdict = first ? duplicateVerdict(validator, first) : await (asked[index] as Promise<ValidatorVerdict>);
    // The QR's pair when the slip carries one; else the validator's, normalized the same way (as judgeSlip).
    let reference = read.local_reference;
    let sending_bank = read.local_bank;
    if (!first && !reference && verdict.reference) {
      reference = verdict.reference;
      sending_bank = verdict.sending_bank ? normalizeBankCode(verdict.sending_bank) : null;
      const identity = slipIdentity(sending_bank, reference, sha256);
      const slip = { owner: read.question.owner, is_sandbox: read.is_sandbox, sha256 };
      const taken =
        verdict.outcome === 'verified'
          ? (seen.find(
              (row) =>
                row.accepted &&
                row.is_sandbox === read.is_sandbox &&
                row.owner !== read.question.owner &&
                row.identity === identity,
            ) ?? (await acceptedElsewhere(db, slip, identity)))
          : undefined;
      if (taken)
        verdict = {
          ...duplicateVerdict(validator, taken),
          response: { ...verdict.response, ...duplicateVerdict(validator, taken).response },
        };
    }
    const write: SlipWrite = {
      id: randomUUID(),
      owner: read.question.owner,
      is_sandbox: read.is_sandbox,
      sha256,
      reference,
      sending_bank,
      verdict,
    };
    judged.push({ answer: { verdict, sha256, reference, sending_bank, reused: false }, write });
    // what the questions after this one see: this owner's row for the slip as the batch will write it
    seen.push(slipRowOf(write, at));
  }
  return judged;
}

/** The row `storeSlips` writes for a verdict, as the later questions of one batch see it. */
function slipRowOf(write: SlipWrite, at: Date): SlipRow {
  const { verdict } = write;
  return {
    id: write.id,
    owner: write.owner,
    is_sandbox: write.is_sandbox,
    sha256: write.sha256,
    reference: write.reference,
    sending_bank: write.sending_bank,
    identity: slipIdentity(write.sending_bank, write.reference, write.sha256),
    outcome: verdict.outcome,
    reason: verdict.reason ?? null,
    validator_kind: verdict.validator_kind,
    validator_response: verdict.response,
    unverified_fields: verdict.unverified_fields ?? [],
    accepted: verdict.outcome === 'verified',
    provider_asks: 0,
    created_at: at,
    updated_at: at,
  };
}

/**
 * Writes verdicts judged by `judgeSlipsLocally` in one statement, in the caller's transaction: each (owner, bytes)
 * once (the batch's last verdict for it), in key order, never overwriting an accepted verdict. A slip another owner
 * of the mode accepted meanwhile fails the statement on the accepted-identity index (23505): the caller's
 * transaction rolls back and the slip is judged again.
 */
export async function storeSlips(trx: Trx, at: Date, writes: readonly SlipWrite[]): Promise<void> {
  const last = new Map<string, SlipWrite>();
  for (const write of writes) last.set(`${write.owner}\u0000${write.sha256}`, write);
  if (last.size === 0) return;
  const values = [...last.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, { verdict, ...slip }]) => ({
      ...slip,
      identity: slipIdentity(slip.sending_bank, slip.reference, slip.sha256),
      ...verdictColumns(verdict),
      provider_asks: 0,
      created_at: at,
      updated_at: at,
    }));
  await trx
    .insertInto('slips')
    .values(values)
    .onConflict((conflict) =>
      conflict
        .constraint('slips_owner_sha256_unique')
        .doUpdateSet((eb) => ({
          outcome: eb.ref('excluded.outcome'),
          reason: eb.ref('excluded.reason'),
          validator_kind: eb.ref('excluded.validator_kind'),
          validator_response: eb.ref('excluded.validator_response'),
          unverified_fields: eb.ref('excluded.unverified_fields'),
          accepted: eb.ref('excluded.accepted'),
          reference: eb.ref('excluded.reference'),
          sending_bank: eb.ref('excluded.sending_bank'),
          identity: eb.ref('excluded.identity'),
          updated_at: eb.ref('excluded.updated_at'),
        }))
        // An accepted verdict is never overwritten by a later check (DESIGN 3b "Slip identity").
        .where('slips.accepted', '=', false),
    )
    .execute();
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
