import { isCurrency, minorToDecimal } from '../../lib/money.ts';
import { present } from '../../lib/assert.ts';

/** Minor units as a decimal with the currency code ("1,250.50 THB"). */
export function money(minor: number, currency: string): string {
  const decimal = isCurrency(currency) ? minorToDecimal(minor, currency) : String(minor);
  const [whole, fraction] = decimal.split('.');
  const grouped = present(whole, 'split gives at least one part').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${grouped}${fraction ? `.${fraction}` : ''} ${currency}`;
}

/** micro-PAY as PAY with six decimals, exact (no float). */
export function pay(micro_pay: number): string {
  const negative = micro_pay < 0;
  const digits = String(Math.abs(micro_pay)).padStart(7, '0');
  const whole = digits.slice(0, -6).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${whole}.${digits.slice(-6)}`;
}

/** "2026-11-22 14:03 UTC": the dashboard shows UTC so every user reads the same time. */
export function when(timestamp: string | null | undefined): string {
  if (!timestamp) return '—';
  return `${timestamp.slice(0, 10)} ${timestamp.slice(11, 16)} UTC`;
}

/** A decimal string in major units ("100.00", "100", "1,250.00" grouped by thousands) to minor units, or null. */
export function majorToMinor(value: string, exponent = 2): number | null {
  const trimmed = value.trim();
  const plain = /^\d{1,3}(,\d{3})+(\.\d*)?$/.test(trimmed) ? trimmed.replaceAll(',', '') : trimmed;
  const match = /^(\d{1,15})(?:\.(\d+))?$/.exec(plain);
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > exponent) return null;
  return Number(match[1]) * 10 ** exponent + Number(fraction.padEnd(exponent, '0') || '0');
}

/** A PAY amount ("12.5") to micro-PAY, or null. */
export function payToMicro(value: string): number | null {
  const minor = majorToMinor(value, 6);
  return minor !== null && Number.isSafeInteger(minor) ? minor : null;
}
