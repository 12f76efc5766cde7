/**
 * Account names as docs/ledger.md spells them, written here a second time on purpose: reconciliation never asks the
 * code that posts which account a transfer should touch, so a wrong name inside a builder shows as a difference
 * instead of being agreed with.
 */
const mode = (is_sandbox: boolean) => (is_sandbox ? 'sandbox' : 'live');

export const expectedAccount = {
  available: (merchant_id: string, is_sandbox: boolean) => `${mode(is_sandbox)}:merchant:${merchant_id}:available`,
  buffer: (merchant_id: string, is_sandbox: boolean) => `${mode(is_sandbox)}:merchant:${merchant_id}:buffer`,
  reserve: (merchant_id: string, is_sandbox: boolean) => `${mode(is_sandbox)}:merchant:${merchant_id}:reserve`,
  refundHold: (merchant_id: string, is_sandbox: boolean) => `${mode(is_sandbox)}:merchant:${merchant_id}:refund_hold`,
  seller: (seller_id: string, is_sandbox: boolean) => `${mode(is_sandbox)}:seller:${seller_id}`,
  world: (is_sandbox: boolean) => `${mode(is_sandbox)}:issuance:world`,
  adjustments: (is_sandbox: boolean) => `${mode(is_sandbox)}:issuance:adjustments`,
  disputes: (is_sandbox: boolean) => `${mode(is_sandbox)}:issuance:disputes`,
  fees: (is_sandbox: boolean) => `${mode(is_sandbox)}:fees`,
};

/** An issuance account of the given mode (`<mode>:issuance:<name>`): where a mint comes from and a burn goes. */
export function isIssuanceOf(account: string, is_sandbox: boolean): boolean {
  return new RegExp(`^${mode(is_sandbox)}:issuance:[A-Za-z0-9_.-]+$`).test(account);
}

/** Minor-unit exponents of the settled currencies (docs/payments.md): all four have cents. */
const EXPONENT: Record<string, bigint> = { THB: 2n, AUD: 2n, USD: 2n, SGD: 2n };

/**
 * Fiat minor units worth how many micro-PAY at `rate` (fiat per PAY, a decimal string), rounded down: the rule every
 * leg and fee follows (docs/settlements.md), computed here with its own arithmetic.
 */
export function microPayWorth(fiat_minor: number, currency: string, rate: string): number {
  const exponent = EXPONENT[currency];
  const match = /^(\d+)(?:\.(\d+))?$/.exec(rate);
  if (exponent === undefined || !match) return Number.NaN;
  const fraction = match[2] ?? '';
  const rate_scaled = BigInt(`${match[1]}${fraction}`);
  if (rate_scaled === 0n) return Number.NaN;
  // micro = fiat / 10^exponent / (rate_scaled / 10^fraction) * 10^6
  const numerator = BigInt(fiat_minor) * 1_000_000n * 10n ** BigInt(fraction.length);
  return Number(numerator / (rate_scaled * 10n ** exponent));
}

/** `floor(amount × bps / 10000)`, the fee rule, in its own arithmetic. */
export function basisPointsOf(amount: number, bps: number): number {
  return Number((BigInt(amount) * BigInt(bps)) / 10_000n);
}
