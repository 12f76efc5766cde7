import type { ReceiptCheck, ReceiptValidator, ValidatorVerdict } from './port.ts';

/**
 * EasySlip (Thai bank-slip verification) over HTTP: `POST <base>/api/v1/verify` with the slip as base64 and
 * `checkDuplicate` (true unless the gateway asked about this slip before: see ReceiptCheck.check_duplicate). On a readable slip we check, in this order, the amount (when expected) and the receiver
 * account (masked numbers such as `xxx-x-x5678-x` match when their visible digits do). Mapping:
 * - a slip problem the provider reports (`duplicate_slip`, `slip_not_found`, `invalid_payload`, `invalid_image`,
 *   `image_size_too_large`) or a failed check: `failed` with that reason;
 * - a problem on our side of the provider (`quota_exceeded`, `unauthorized`, `access_denied`, expired or
 *   deactivated application, 429), a 5xx, a network error or an unreadable answer: `unverified` (the slip was not
 *   judged, so the payer is not failed for it; the caller retries);
 * - no answer within the timeout: `timeout`.
 * The provider's full answer is returned in `response` for the audit row.
 */
const SLIP_FAILURES = new Set([
  'duplicate_slip',
  'slip_not_found',
  'invalid_payload',
  'invalid_image',
  'image_size_too_large',
  'invalid_check_duplicate',
]);

export interface EasySlipOptions {
  base_url: string;
  api_key: string;
  timeout_ms: number;
}

interface EasySlipAccount {
  name?: { th?: string; en?: string };
  bank?: { type?: string; account?: string };
  proxy?: { type?: string; account?: string };
}

interface EasySlipData {
  transRef?: string;
  date?: string;
  amount?: { amount?: number; local?: { amount?: number; currency?: string } };
  sender?: { bank?: { id?: string; name?: string; short?: string }; account?: EasySlipAccount };
  receiver?: { bank?: { id?: string; name?: string; short?: string }; account?: EasySlipAccount };
}

/** Visible digit runs of a masked number must appear, in order, in the full number. */
export function maskedMatches(masked: string, full: string): boolean {
  const digits = full.replace(/\D/g, '');
  const runs = masked
    .toLowerCase()
    .replace(/[^0-9x]/g, '')
    .split(/x+/)
    .filter(Boolean);
  if (runs.length === 0 || digits.length === 0) return false;
  const compact = masked.toLowerCase().replace(/[^0-9x]/g, '');
  // Same length: position by position.
  if (compact.length === digits.length)
    return [...compact].every((char, index) => char === 'x' || char === digits[index]);
  let from = 0;
  for (const run of runs) {
    const at = digits.indexOf(run, from);
    if (at < 0) return false;
    from = at + run.length;
  }
  return true;
}

function receiverMatches(
  expected: NonNullable<ReceiptCheck['receiver']>,
  account: EasySlipAccount | undefined,
): boolean | undefined {
  const candidates: [string | undefined, string | undefined][] = [
    [expected.account_number, account?.bank?.account],
    [expected.promptpay_id, account?.proxy?.account],
  ];
  let checked = false;
  for (const [full, masked] of candidates) {
    if (!full) continue;
    if (masked && maskedMatches(masked, full)) return true;
    checked = true;
  }
  return checked ? false : undefined;
}

export function createEasySlipValidator(options: EasySlipOptions): ReceiptValidator {
  const base = options.base_url.replace(/\/+$/, '');
  return {
    kind: 'easyslip',
    async validate(check): Promise<ValidatorVerdict> {
      const verdict = (
        outcome: ValidatorVerdict['outcome'],
        response: Record<string, unknown>,
        extra: Partial<ValidatorVerdict> = {},
      ): ValidatorVerdict => ({
        outcome,
        validator_kind: 'easyslip',
        response,
        ...extra,
      });
      let http: Response;
      let text: string;
      try {
        http = await fetch(`${base}/api/v1/verify`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.api_key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            image: Buffer.from(check.image).toString('base64'),
            checkDuplicate: check.check_duplicate ?? true,
          }),
          signal: AbortSignal.timeout(options.timeout_ms),
        });
        text = await http.text();
      } catch (error) {
        const name = (error as Error).name;
        if (name === 'TimeoutError' || name === 'AbortError') {
          return verdict(
            'timeout',
            { error: 'timeout', timeout_ms: options.timeout_ms },
            { reason: 'provider_timeout' },
          );
        }
        return verdict(
          'unverified',
          { error: 'network', message: (error as Error).message },
          { reason: 'provider_unreachable' },
        );
      }
      let body: { status?: number; message?: string; data?: EasySlipData } | undefined;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const response: Record<string, unknown> =
        body && typeof body === 'object'
          ? { http_status: http.status, ...body }
          : { http_status: http.status, body: text.slice(0, 2000) };
      if (http.status >= 500 || !body) return verdict('unverified', response, { reason: 'provider_error' });
      if (http.status !== 200 || !body.data) {
        const message = typeof body.message === 'string' ? body.message : `http_${http.status}`;
        return SLIP_FAILURES.has(message)
          ? verdict('failed', response, { reason: message })
          : verdict('unverified', response, { reason: message });
      }

      const data = body.data;
      const amount_major = data.amount?.amount;
      const observed_amount_minor = typeof amount_major === 'number' ? Math.round(amount_major * 100) : undefined;
      const extra: Partial<ValidatorVerdict> = {
        ...(observed_amount_minor !== undefined ? { observed_amount_minor } : {}),
        ...(data.transRef ? { reference: data.transRef } : {}),
        ...(data.sender?.bank?.id ? { sending_bank: data.sender.bank.id } : {}),
      };
      if (check.expected_amount_minor !== undefined && observed_amount_minor !== check.expected_amount_minor) {
        return verdict('failed', response, { ...extra, reason: 'amount_mismatch' });
      }
      if (check.receiver && receiverMatches(check.receiver, data.receiver?.account) === false) {
        return verdict('failed', response, { ...extra, reason: 'receiver_mismatch' });
      }
      return verdict('verified', response, extra);
    },
  };
}
