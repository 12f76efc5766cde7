/**
 * The closed list of error codes. Domain code throws `AppError(code, message)`; the HTTP status of each
 * code lives in one map in `http/errors.ts`, never in the domain.
 */
export const ERROR_CODES = [
  // 400
  'VALIDATION_ERROR',
  'NOT_TH',
  'PROOF_UNSUPPORTED_TYPE',
  'RECEIVER_CONFIRM_CONTENT_TYPE_UNSUPPORTED',
  'RECEIVER_CONFIRM_MALFORMED_RECEIPT',
  'WEBHOOK_URL_FORBIDDEN',
  // 401
  'UNAUTHORIZED',
  // 403
  'FORBIDDEN',
  'SANDBOX_ONLY',
  'ADMIN_FORBIDDEN',
  'PENDING_FUNDS_NOT_RECEIVER',
  'SELL_ORDER_NOT_OWNER',
  'GATEWAY_DISPUTE_CROSS_MERCHANT',
  // 404
  'NOT_FOUND',
  // 409
  'PAYMENT_DUPLICATE_ORDER_ID',
  'PAYMENT_INSUFFICIENT_LIQUIDITY',
  'PAYMENT_BAD_STATE',
  'LEG_NOT_AWAITING_PAYEE',
  'PROOF_DUPLICATE',
  'IDEMPOTENCY_KEY_CONFLICT',
  'PENDING_FUNDS_TERMINAL',
  'PENDING_FUNDS_VALIDATION_UNVERIFIED',
  'SELL_ORDER_BAD_STATE',
  'SELL_ORDER_INSUFFICIENT_BALANCE',
  'BUY_ORDER_BAD_STATE',
  'DISPUTE_BAD_STATE',
  'LEDGER_INSUFFICIENT_FUNDS',
  'LEDGER_IDEMPOTENCY_CONFLICT',
  'QUOTE_LOCK_EXPIRED',
  'QUOTE_LOCK_USED',
  'QUOTE_LOCK_MISMATCH',
  'FX_PRICE_UNAVAILABLE',
  'SETTLEMENT_BAD_STATE',
  'WEBHOOK_ENDPOINT_NOT_SET',
  'MERCHANT_USER_EXISTS',
  'WEBHOOK_ENDPOINT_LIMIT',
  'REFUND_EXCEEDS_PAYMENT',
  'REFUND_BAD_STATE',
  'REFUND_INSUFFICIENT_BALANCE',
  // 405, 410, 413, 429
  'METHOD_NOT_ALLOWED',
  'GONE',
  'PAYLOAD_TOO_LARGE',
  'RATE_LIMITED',
  // 5xx
  'INTERNAL',
  'MATCHING_UNAVAILABLE',
  'PENDING_FUNDS_LEDGER_UNAVAILABLE',
  'SELL_ORDER_LEDGER_UNAVAILABLE',
  'LEDGER_UNAVAILABLE',
  'SERVICE_UNAVAILABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorDetail {
  field?: string;
  message: string;
  [key: string]: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];

  constructor(code: ErrorCode, message: string, details: ErrorDetail[] = []) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export function notFound(what: string): AppError {
  return new AppError('NOT_FOUND', `${what} not found`);
}

export function validation(message: string, field?: string): AppError {
  return new AppError('VALIDATION_ERROR', message, field ? [{ field, message }] : []);
}
