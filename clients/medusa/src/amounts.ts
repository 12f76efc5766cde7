/**
 * Medusa counts money in major units (BigNumber: `250`, `"250.5"`, `{ value: "250.50000", precision: 20 }`); the
 * gateway in integer minor units (`25050`). Both directions go through decimal strings and BigInt, never through a
 * floating-point product, and an amount that does not fit the currency exactly is refused, never rounded.
 */
import type { BigNumberInput } from '@medusajs/framework/types';
import { MathBN, MedusaError } from '@medusajs/framework/utils';

/** The gateway's currencies and their minor-unit exponents. */
export const CURRENCY_EXPONENT: Readonly<Record<string, number>> = { THB: 2, AUD: 2, USD: 2, SGD: 2 };

export function currencyExponent(currency: string): number {
  const exponent = CURRENCY_EXPONENT[currency.toUpperCase()];
  if (exponent === undefined) {
    throw new MedusaError(
      MedusaError.Types.INVALID_DATA,
      `mpay takes ${Object.keys(CURRENCY_EXPONENT).join(', ')}; this payment is in ${currency.toUpperCase()}`,
    );
  }
  return exponent;
}

/** A Medusa amount as a plain decimal string ("250.5"), exactly, whatever form it came in. */
export function decimalString(amount: BigNumberInput): string {
  const value = MathBN.convert(amount);
  if (!value.isFinite())
    throw new MedusaError(MedusaError.Types.INVALID_DATA, `Amount ${String(amount)} is not a number`);
  return value.toFixed();
}

/** Major units (Medusa) to integer minor units (the gateway): 250.5 THB -> 25050. More decimals than the currency has is an error. */
export function toMinorUnits(amount: BigNumberInput, currency: string): number {
  const exponent = currencyExponent(currency);
  const text = decimalString(amount);
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) {
    throw new MedusaError(MedusaError.Types.INVALID_DATA, `Amount ${text} must be a positive decimal`);
  }
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) {
    throw new MedusaError(
      MedusaError.Types.INVALID_DATA,
      `Amount ${text} has more decimals than ${currency.toUpperCase()} allows (${exponent})`,
    );
  }
  const minor = BigInt(match[1] ?? '0') * 10n ** BigInt(exponent) + BigInt(fraction.padEnd(exponent, '0') || '0');
  if (minor <= 0n || minor > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new MedusaError(MedusaError.Types.INVALID_DATA, `Amount ${text} is out of range`);
  }
  return Number(minor);
}

/** Integer minor units (the gateway) to a decimal string in major units (Medusa): 25050 THB -> "250.50". */
export function fromMinorUnits(minor: number | string | bigint, currency: string): string {
  const exponent = currencyExponent(currency);
  const text = String(minor);
  if (!/^\d+$/.test(text))
    throw new MedusaError(MedusaError.Types.UNEXPECTED_STATE, `Minor units ${text} are not an integer`);
  const value = BigInt(text);
  if (exponent === 0) return value.toString();
  const base = 10n ** BigInt(exponent);
  return `${value / base}.${(value % base).toString().padStart(exponent, '0')}`;
}
