import { isCurrency, minorToDecimal } from '../../lib/money.ts';
import { present } from '../../lib/assert.ts';

/** Minor units as a decimal with the currency code ("1,250.50 THB"). */
export function money(minor: number, currency: string): string {
  const decimal = isCurrency(currency) ? minorToDecimal(minor, currency) : String(minor);
  const [whole, fraction] = decimal.split('.');
  const grouped = present(whole, 'split gives at least one part').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${grouped}${fraction ? `.${fraction}` : ''} ${currency}`;
}

/** micro-PAY as PAY for people: grouped, two decimals, more only where they are not zero ("1,234.50", "0.125"). Exact. */
export function pay(micro_pay: number): string {
  const negative = micro_pay < 0;
  const digits = String(Math.abs(micro_pay)).padStart(7, '0');
  const whole = digits.slice(0, -6).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = digits.slice(-6).replace(/0{1,4}$/, '');
  return `${negative ? '-' : ''}${whole}.${fraction.padEnd(2, '0')}`;
}

export const DEFAULT_TIME_ZONE = 'Asia/Bangkok';

const TIME_FORMATS = new Map<string, Intl.DateTimeFormat>();

/** "2026-11-22 21:03 GMT+7": a time in the merchant's zone, the zone named so a reader never guesses. */
export function when(context: { time_zone: string }, timestamp: string | null | undefined): string {
  if (!timestamp) return '—';
  const at = new Date(timestamp);
  if (Number.isNaN(at.getTime())) return '—';
  let format = TIME_FORMATS.get(context.time_zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone: context.time_zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    TIME_FORMATS.set(context.time_zone, format);
  }
  const part = Object.fromEntries(format.formatToParts(at).map((item) => [item.type, item.value]));
  return `${part['year']}-${part['month']}-${part['day']} ${part['hour']}:${part['minute']} ${part['timeZoneName']}`;
}

/** Whether a name is an IANA time zone this runtime knows. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return name.length <= 64;
  } catch {
    return false;
  }
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
