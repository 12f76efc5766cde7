import { randomUUID } from 'node:crypto';
import type { Db, Trx } from '../../db/database.ts';
import { OWNERSHIP, ofMerchant, owned } from '../../http/ownership.ts';
import { listPage, type PageQuery } from '../../http/pagination.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { iso } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { randomBase62 } from '../../lib/crypto.ts';
import { AppError, notFound, validation } from '../../lib/errors.ts';
import { decimalToMinor, minorToDecimal, type Currency } from '../../lib/money.ts';
import { eventAbout, recordEvent } from '../events/outbox.ts';
import { createPayment, toMinor, type PaymentsDeps } from '../payments/service.ts';
import type { PaymentView } from '../payments/present.ts';
import type { CreatePaymentLinkInput, LinkState, PaymentLinkView } from './schema.ts';
import type { PaymentLinkRow } from './tables.ts';

export interface PaymentLinksDeps {
  db: Db;
  clock: Clock;
  public_base_url: string;
  payments: PaymentsDeps;
}

export const newLinkId = (): string => `plink_${randomUUID().replace(/-/g, '')}`;

/** How many completed payments use a link up: one for a single-use link, `max_payments` (or none) for a reusable one. */
export function completionLimit(link: Pick<PaymentLinkRow, 'reusable' | 'max_payments'>): number | null {
  return link.reusable ? link.max_payments : 1;
}

/** Whether the link's page takes a payment at `now`, and if not, why (deactivation first, then expiry, then the limit). */
export function linkState(
  link: Pick<PaymentLinkRow, 'deactivated_at' | 'expires_at' | 'reusable' | 'max_payments' | 'payments_completed'>,
  now: Date,
): LinkState {
  if (link.deactivated_at) return 'inactive';
  if (link.expires_at && link.expires_at.getTime() <= now.getTime()) return 'expired';
  const limit = completionLimit(link);
  if (limit !== null && link.payments_completed >= limit) return 'used_up';
  return 'open';
}

export const linkUrl = (public_base_url: string, id: string): string => `${public_base_url}/pay/${id}`;

export function presentLink(link: PaymentLinkRow, now: Date, public_base_url: string): PaymentLinkView {
  const currency = link.currency as Currency;
  const amount = link.amount_minor === null ? null : Number(link.amount_minor);
  const min = link.amount_min_minor === null ? null : Number(link.amount_min_minor);
  const max = link.amount_max_minor === null ? null : Number(link.amount_max_minor);
  return {
    id: link.id,
    url: linkUrl(public_base_url, link.id),
    title: link.title,
    description: link.description,
    currency: link.currency,
    amount,
    amount_decimal: amount === null ? null : minorToDecimal(amount, currency),
    amount_range:
      min === null || max === null
        ? null
        : { min, max, min_decimal: minorToDecimal(min, currency), max_decimal: minorToDecimal(max, currency) },
    reusable: link.reusable,
    max_payments: link.max_payments,
    payments_completed: link.payments_completed,
    active: link.deactivated_at === null,
    state: linkState(link, now),
    expires_at: iso(link.expires_at),
    return_url: link.return_url,
    metadata: link.metadata,
    is_sandbox: link.is_sandbox,
    created_at: iso(link.created_at),
    deactivated_at: iso(link.deactivated_at),
  };
}

function linkEvent(type: 'payment_link.created' | 'payment_link.updated', link: PaymentLinkRow, view: PaymentLinkView) {
  return {
    ...eventAbout('payment_link', link),
    type,
    data: view as unknown as Record<string, unknown>,
  };
}

/**
 * Creates a link in the caller's mode, with `payment_link.created`, inside the request's (idempotent) transaction.
 * Exactly one of `amount` (fixed) and `amount_range` (the payer types it); a single-use link takes no `max_payments`;
 * `expires_at` lies ahead. Anything else is 400 VALIDATION_ERROR and nothing is written.
 */
export async function createLink(
  deps: PaymentLinksDeps,
  trx: Trx,
  scope: MerchantScope,
  input: CreatePaymentLinkInput,
): Promise<PaymentLinkView> {
  const now = deps.clock.now();
  if ((input.amount === undefined) === (input.amount_range === undefined))
    throw validation(
      'Give exactly one of amount (a fixed amount) and amount_range (the payer types it)',
      'body.amount',
    );
  const amount_minor = input.amount === undefined ? null : toMinor(input.amount, input.currency);
  let range: { min: number; max: number } | null = null;
  if (input.amount_range) {
    const min = rangeBound(input.amount_range.min, input.currency, 'min');
    const max = rangeBound(input.amount_range.max, input.currency, 'max');
    if (min > max) throw validation('amount_range.min must not exceed amount_range.max', 'body.amount_range');
    range = { min, max };
  }
  const reusable = input.reusable ?? false;
  if (!reusable && input.max_payments !== undefined)
    throw validation('max_payments needs reusable: true (a single-use link takes one payment)', 'body.max_payments');
  const expires_at = input.expires_at === undefined ? null : new Date(input.expires_at);
  if (expires_at && expires_at.getTime() <= now.getTime())
    throw validation('expires_at must be in the future', 'body.expires_at');
  const row: PaymentLinkRow = {
    id: newLinkId(),
    merchant_id: scope.merchant_id,
    is_sandbox: scope.is_sandbox,
    title: input.title,
    description: input.description ?? null,
    currency: input.currency,
    amount_minor,
    amount_min_minor: range?.min ?? null,
    amount_max_minor: range?.max ?? null,
    reusable,
    max_payments: input.max_payments ?? null,
    expires_at,
    return_url: input.return_url ?? null,
    metadata: input.metadata ?? {},
    payments_completed: 0,
    created_at: now,
    deactivated_at: null,
  };
  await trx
    .insertInto('payment_links')
    .values({ ...row, metadata: JSON.stringify(row.metadata) })
    .execute();
  const view = presentLink(row, now, deps.public_base_url);
  await recordEvent(trx, now, linkEvent('payment_link.created', row, view));
  return view;
}

function rangeBound(value: number | string, currency: Currency, bound: 'min' | 'max'): number {
  try {
    return toMinor(value, currency);
  } catch {
    throw validation(
      `amount_range.${bound} must be a positive integer in minor units or a decimal string with at most 2 decimals`,
      `body.amount_range.${bound}`,
    );
  }
}

const readLink = (db: Db | Trx, id: string) =>
  db.selectFrom('payment_links').selectAll().where('id', '=', id).executeTakeFirst();

/** One of the caller's links in its mode; another merchant's or mode's is 404. */
export async function getLink(deps: PaymentLinksDeps, scope: MerchantScope, id: string): Promise<PaymentLinkView> {
  const link = owned(await readLink(deps.db, id), scope, OWNERSHIP.payment_link);
  return presentLink(link, deps.clock.now(), deps.public_base_url);
}

export interface ListLinksQuery extends PageQuery {
  active?: boolean | undefined;
}

/** The caller's links in its mode, newest first (cursor pages); `active` filters on deactivation. */
export async function listLinks(deps: PaymentLinksDeps, scope: MerchantScope, query: ListLinksQuery) {
  const now = deps.clock.now();
  let select = deps.db.selectFrom('payment_links').selectAll().where(ofMerchant(scope));
  if (query.active !== undefined) select = select.where('deactivated_at', query.active ? 'is' : 'is not', null);
  return listPage(select, query, (row) => presentLink(row, now, deps.public_base_url), {
    id_format: 'payment_link_id',
  });
}

/**
 * Deactivates a link for good (it is never deleted): its page answers 410 from now on, payments already made from
 * it go on. `payment_link.updated` on the change; deactivating an inactive link changes nothing and answers it.
 */
export async function deactivateLink(
  deps: PaymentLinksDeps,
  trx: Trx,
  scope: MerchantScope,
  id: string,
): Promise<PaymentLinkView> {
  const now = deps.clock.now();
  const link = owned(
    await trx.selectFrom('payment_links').selectAll().where('id', '=', id).forUpdate().executeTakeFirst(),
    scope,
    OWNERSHIP.payment_link,
  );
  if (link.deactivated_at) return presentLink(link, now, deps.public_base_url);
  const updated = await trx
    .updateTable('payment_links')
    .set({ deactivated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = presentLink(updated, now, deps.public_base_url);
  await recordEvent(trx, now, linkEvent('payment_link.updated', updated, view));
  return view;
}

/** A link by id alone, for its public page (the id is in the URL the merchant shares). */
export async function findLink(deps: PaymentLinksDeps, id: string): Promise<PaymentLinkRow> {
  const link = await readLink(deps.db, id);
  if (!link) throw notFound('Payment link');
  return link;
}

/** Thrown by a use of a link whose page takes no payment (410 on the page). */
export class LinkUnavailable extends Error {
  readonly state: Exclude<LinkState, 'open'>;
  constructor(state: Exclude<LinkState, 'open'>) {
    super(`payment link is ${state}`);
    this.state = state;
  }
}

/**
 * One use of a link from its page: a new payment in the link's mode for the fixed amount, or for the payer's amount
 * (`amount_major`, a decimal in major units) within the link's range, carrying `payment_link_id` and the link's
 * metadata, through the payments module's create. A link that is used up, expired or inactive makes no payment
 * (LinkUnavailable). Its limit counts completed payments, so two payers may both start on a single-use link; the
 * second payment to complete still completes and is the merchant's (the link's count passes its limit).
 */
export async function useLink(
  deps: PaymentLinksDeps,
  id: string,
  amount_major: string | undefined,
): Promise<PaymentView> {
  const link = await findLink(deps, id);
  const state = linkState(link, deps.clock.now());
  if (state !== 'open') throw new LinkUnavailable(state);
  const currency = link.currency as Currency;
  let amount_minor: number;
  if (link.amount_minor !== null) amount_minor = Number(link.amount_minor);
  else {
    const typed = (amount_major ?? '').trim().replace(/,/g, '');
    const parsed = /^\d{1,15}(\.\d+)?$/.test(typed) ? decimalToMinor(typed, currency) : null;
    if (parsed === null || parsed <= 0)
      throw new AppError('VALIDATION_ERROR', 'Enter an amount, like 150 or 150.50', [
        { field: 'amount', message: 'not an amount' },
      ]);
    if (parsed < Number(link.amount_min_minor) || parsed > Number(link.amount_max_minor))
      throw new AppError('VALIDATION_ERROR', 'The amount is outside the range this link takes', [
        { field: 'amount', message: 'out of range' },
      ]);
    amount_minor = parsed;
  }
  return createPayment(
    deps.payments,
    { merchant_id: link.merchant_id, is_sandbox: link.is_sandbox },
    {
      order_id: `${link.id}-${randomBase62(16)}`,
      amount: amount_minor,
      currency,
      return_url: link.return_url ?? linkUrl(deps.public_base_url, link.id),
      metadata: link.metadata,
      payment_link_id: link.id,
    },
  );
}
