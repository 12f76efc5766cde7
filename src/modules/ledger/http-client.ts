import { AppError, type ErrorCode } from '../../lib/errors.ts';
import type { BatchItemResult, Ledger, LedgerVerification, TransferResult } from './port.ts';
import { checkCommand } from './rules.ts';
import { ledgerAnswered, ledgerUnreachable } from './errors.ts';

/** Codes the ledger server answers that mean something to the caller; anything else is "unavailable". */
const PASSED_THROUGH: readonly ErrorCode[] = [
  'LEDGER_INSUFFICIENT_FUNDS',
  'LEDGER_IDEMPOTENCY_CONFLICT',
  'VALIDATION_ERROR',
];

/**
 * The ledger over HTTP (`LEDGER_URL`, served by a process with `ROLES=ledger` under `/internal/ledger/*`). It
 * cannot join the caller's transaction: its writes commit on their own. Callers call it last inside their
 * transaction, so a ledger failure rolls their rows back; when their commit fails after the ledger committed,
 * the retry sends the same key and the ledger replays the first result instead of moving PAY twice.
 * Network errors, timeouts and 5xx answers are LEDGER_UNAVAILABLE.
 */
export function createHttpLedger(options: { base_url: string; token: string; timeout_ms: number }): Ledger {
  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${options.base_url}/internal/ledger${path}`, {
        method,
        headers: {
          authorization: `Bearer ${options.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.timeout_ms),
      });
    } catch (error) {
      throw ledgerUnreachable(options.base_url, (error as Error).message);
    }
    const text = await response.text().catch(() => '');
    let parsed: { data?: T; error?: { code?: string; message?: string; details?: unknown[] } } | undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (response.ok && parsed && 'data' in parsed) return parsed.data as T;
    const code = parsed?.error?.code as ErrorCode | undefined;
    if (response.status < 500 && code && PASSED_THROUGH.includes(code)) {
      throw new AppError(code, parsed?.error?.message ?? code, (parsed?.error?.details ?? []) as never);
    }
    throw ledgerAnswered(response.status, code);
  }

  return {
    kind: 'http',
    async transfer(command) {
      checkCommand(command);
      return call<TransferResult>('POST', '/transfers', command);
    },
    async transferAll(commands) {
      commands.forEach(checkCommand);
      return (await call<{ transfers: TransferResult[] }>('POST', '/transactions', { postings: commands })).transfers;
    },
    async transferBatch(commands) {
      return (await call<{ results: BatchItemResult[] }>('POST', '/transfers/batch', { transfers: commands })).results;
    },
    async balance(account) {
      const data = await call<{ balances: Record<string, number | null> }>('POST', '/balances', {
        accounts: [account],
      });
      return data.balances[account] ?? 0;
    },
    async balances(accounts) {
      const data = await call<{ balances: Record<string, number | null> }>('POST', '/balances', { accounts });
      return new Map(accounts.map((account) => [account, data.balances[account] ?? null]));
    },
    async creditedSince(account, since) {
      const data = await call<{ credited_micro_pay: number }>('POST', '/credited', {
        account,
        since: since.toISOString(),
      });
      return data.credited_micro_pay;
    },
    verify: () => call<LedgerVerification>('GET', '/verify'),
  };
}
