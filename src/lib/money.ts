import { present } from './assert.ts';

/** Fiat currencies the gateway settles, with their minor-unit exponent. */
export const CURRENCIES = ['THB', 'AUD', 'USD', 'SGD'] as const;
export type Currency = (typeof CURRENCIES)[number];

export const CURRENCY_EXPONENT: Record<Currency, number> = { THB: 2, AUD: 2, USD: 2, SGD: 2 };

export const PAYMENT_METHODS = ['promptpay', 'payid', 'bank_transfer'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** Which rails each currency supports; the first is the default. */
export const METHODS_BY_CURRENCY: Record<Currency, readonly PaymentMethod[]> = {
  THB: ['promptpay', 'bank_transfer'],
  AUD: ['payid', 'bank_transfer'],
  USD: ['bank_transfer'],
  SGD: ['bank_transfer'],
};

export const MICRO_PAY_PER_PAY = 1_000_000n;

export function isCurrency(value: string): value is Currency {
  return (CURRENCIES as readonly string[]).includes(value);
}

/**
 * Parses a decimal string in major units ("100.00") into integer minor units.
 * Returns null when the string is not a plain non-negative decimal or has more decimals than the currency.
 */
export function decimalToMinor(decimal: string, currency: Currency): number | null {
  const exponent = CURRENCY_EXPONENT[currency];
  const match = /^(\d{1,15})(?:\.(\d+))?$/.exec(decimal.trim());
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > exponent) return null;
  const minor =
    BigInt(present(match[1], 'the pattern has a whole part')) * 10n ** BigInt(exponent) +
    BigInt(fraction.padEnd(exponent, '0') || '0');
  return toSafeNumber(minor);
}

export function minorToDecimal(minor: number | bigint, currency: Currency): string {
  const exponent = CURRENCY_EXPONENT[currency];
  const value = BigInt(minor);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const base = 10n ** BigInt(exponent);
  const whole = abs / base;
  const fraction = (abs % base).toString().padStart(exponent, '0');
  return `${negative ? '-' : ''}${whole}${exponent > 0 ? `.${fraction}` : ''}`;
}

/** A decimal string ("35.125") as an exact fraction numerator / 10^scale. */
export function parseDecimal(decimal: string): { numerator: bigint; scale: number } {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(decimal.trim());
  if (!match) throw new Error(`not a decimal: ${decimal}`);
  const fraction = match[3] ?? '';
  const numerator = BigInt(`${match[2]}${fraction}`) * (match[1] === '-' ? -1n : 1n);
  return { numerator, scale: fraction.length };
}

/**
 * Micro-PAY bought by `fiat_minor` at `rate` (fiat major units per 1 PAY), rounded down:
 * the seller never gives more PAY than the fiat paid covers.
 */
export function fiatMinorToMicroPay(fiat_minor: number, currency: Currency, rate: string): number {
  const { numerator, scale } = parseDecimal(rate);
  if (numerator <= 0n) throw new Error('rate must be positive');
  const exponent = BigInt(CURRENCY_EXPONENT[currency]);
  const micro = (BigInt(fiat_minor) * MICRO_PAY_PER_PAY * 10n ** BigInt(scale)) / (numerator * 10n ** exponent);
  return toSafeNumber(micro);
}

export function toSafeNumber(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RangeError(`integer ${value} is outside the exact range of JSON numbers`);
  }
  return Number(value);
}
