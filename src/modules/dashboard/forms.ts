import type { FastifyRequest } from 'fastify';
import { formFields } from '../../http/multipart.ts';
import { CURRENCIES, isCurrency, type Currency } from '../../lib/money.ts';
import { fiatAmountInvalid, fieldNotOneOf, fieldRequired, pageNotFound, payAmountInvalid } from './errors.ts';
import { majorToMinor, payToMicro } from './format.ts';
import { PAYOUT_RAILS, type PayoutDestinationInput, type PayoutRail } from '../reference/payout-destinations.ts';

/** A dashboard form's text fields, by name. */
export type Form = Record<string, string>;

const DAY_MS = 24 * 3600 * 1000;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function requireField(form: Form, name: string): string {
  const value = form[name]?.trim();
  if (!value) throw fieldRequired(name);
  return value;
}

export function currencyField(form: Form, name: string): Currency {
  const value = requireField(form, name);
  if (!isCurrency(value)) throw fieldNotOneOf(name, CURRENCIES);
  return value;
}

export function minorField(form: Form, name: string): number {
  const minor = majorToMinor(requireField(form, name));
  if (minor === null || minor <= 0) throw fiatAmountInvalid(name);
  return minor;
}

export function microPayField(form: Form, name: string): number {
  const micro = payToMicro(requireField(form, name));
  if (micro === null || micro <= 0) throw payAmountInvalid(name);
  return micro;
}

/** The sell form's payout destination: its rail and the fields filled in; no rail is the merchant's default. */
export function payoutDestinationField(form: Form): PayoutDestinationInput | undefined {
  const rail = form['payout_rail']?.trim();
  if (!rail) return undefined;
  if (!(PAYOUT_RAILS as readonly string[]).includes(rail)) throw fieldNotOneOf('payout_rail', PAYOUT_RAILS);
  const fields = ['promptpay_id', 'bank_code', 'account_number', 'account_name', 'payid', 'bsb'] as const;
  const filled = Object.fromEntries(
    fields.filter((name) => form[name]?.trim()).map((name) => [name, form[name]!.trim()]),
  );
  return { rail: rail as PayoutRail, ...filled };
}

/** Runs a dashboard form through the API's idempotency mechanism, keyed by the form's one-time `_key`. */
export function withFormKey(request: FastifyRequest, form: Form): void {
  const key = form['_key'];
  if (key) request.headers['idempotency-key'] = key;
}

/** `back` targets stay inside the dashboard (no open redirect). */
export function safeBack(value: string | undefined, fallback: string): string {
  return value && /^\/dashboard(\/[\w\-./#?=&%]*)?$/.test(value) && !value.startsWith('//') ? value : fallback;
}

/** A `YYYY-MM-DD` filter as the ISO time of that day's start (plus some days), or undefined when it is not a date. */
export function isoDay(value: string | undefined, plus_days = 0): string | undefined {
  if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const at = new Date(`${value}T00:00:00.000Z`);
  if (Number.isNaN(at.getTime())) return undefined;
  return new Date(at.getTime() + plus_days * DAY_MS).toISOString();
}

/**
 * The `:id` of a dashboard route's path. Dashboard pages are HTML forms without a params schema (Fastify's router
 * guarantees the segment is there, not its shape); each handler checks the id's form where it matters.
 */
export function pathId(request: FastifyRequest, pattern: RegExp = UUID): string {
  const id = (request.params as { id: string }).id;
  if (!pattern.test(id)) throw pageNotFound();
  return id;
}

/** The query of a page: its string values only (a repeated name keeps its first). */
export function queryOf(request: FastifyRequest): Record<string, string | undefined> {
  return formFields(request.query);
}
