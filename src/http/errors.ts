import type { FastifyError, FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isDatabaseUnavailable } from '../db/resilience.ts';
import { AppError, type ErrorCode } from '../lib/errors.ts';
import { formatValidationIssues } from './validation.ts';

export const ERROR_STATUS: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  NOT_TH: 400,
  PROOF_UNSUPPORTED_TYPE: 400,
  RECEIVER_CONFIRM_CONTENT_TYPE_UNSUPPORTED: 400,
  RECEIVER_CONFIRM_MALFORMED_RECEIPT: 400,
  WEBHOOK_URL_FORBIDDEN: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  SANDBOX_ONLY: 403,
  ADMIN_FORBIDDEN: 403,
  PENDING_FUNDS_NOT_RECEIVER: 403,
  SELL_ORDER_NOT_OWNER: 403,
  GATEWAY_DISPUTE_CROSS_MERCHANT: 403,
  NOT_FOUND: 404,
  PAYMENT_DUPLICATE_ORDER_ID: 409,
  PAYMENT_INSUFFICIENT_LIQUIDITY: 409,
  PAYMENT_BAD_STATE: 409,
  LEG_NOT_AWAITING_PAYEE: 409,
  PROOF_DUPLICATE: 409,
  IDEMPOTENCY_KEY_CONFLICT: 409,
  PENDING_FUNDS_TERMINAL: 409,
  PENDING_FUNDS_VALIDATION_UNVERIFIED: 409,
  SELL_ORDER_BAD_STATE: 409,
  SELL_ORDER_INSUFFICIENT_BALANCE: 409,
  BUY_ORDER_BAD_STATE: 409,
  DISPUTE_BAD_STATE: 409,
  LEDGER_INSUFFICIENT_FUNDS: 409,
  LEDGER_IDEMPOTENCY_CONFLICT: 409,
  QUOTE_LOCK_EXPIRED: 409,
  QUOTE_LOCK_USED: 409,
  QUOTE_LOCK_MISMATCH: 409,
  FX_PRICE_UNAVAILABLE: 409,
  SETTLEMENT_BAD_STATE: 409,
  WEBHOOK_ENDPOINT_NOT_SET: 409,
  MERCHANT_USER_EXISTS: 409,
  WEBHOOK_ENDPOINT_LIMIT: 409,
  REFUND_EXCEEDS_PAYMENT: 409,
  REFUND_BAD_STATE: 409,
  REFUND_INSUFFICIENT_BALANCE: 409,
  METHOD_NOT_ALLOWED: 405,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  MATCHING_UNAVAILABLE: 500,
  PENDING_FUNDS_LEDGER_UNAVAILABLE: 502,
  SELL_ORDER_LEDGER_UNAVAILABLE: 502,
  LEDGER_UNAVAILABLE: 502,
  SERVICE_UNAVAILABLE: 503,
};

export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.String({ description: 'Machine-readable code from the closed list' }),
      message: Type.String(),
      details: Type.Array(Type.Object({}, { additionalProperties: true })),
    }),
  },
  { $id: 'ErrorBody', description: 'Every non-2xx response' },
);

export function errorBody(code: ErrorCode, message: string, details: unknown[] = []) {
  return { success: false as const, error: { code, message, details } };
}

/** What a 503 for an unavailable or too slow database asks the client to wait. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** One error handler renders every failure: domain errors by their code, Fastify's own by kind, the rest as 500. */
export function installErrorHandler(
  app: FastifyInstance,
  options: { allowedMethods?: (path: string) => string[] } = {},
): void {
  app.setErrorHandler(async (caught: FastifyError | AppError | Error, request, reply) => {
    let error = caught;
    // A cached credential on a route whose statement carries the credential epoch is checked by that statement; a
    // request that fails before it (bad input, a rate limit) or apart from it is checked now, so a credential revoked
    // meanwhile gets its 401 and nothing else.
    if (request.credential_epoch !== undefined && !(error instanceof AppError && error.code === 'UNAUTHORIZED')) {
      try {
        await request.reauthenticate(reply);
      } catch (refused) {
        error = refused as Error;
      }
    }
    if (error instanceof AppError) {
      const status = ERROR_STATUS[error.code];
      if (status >= 500) request.log.error({ err: error }, 'dependency failure');
      return reply.status(status).send(errorBody(error.code, error.message, error.details));
    }
    const fastify_error = error as FastifyError;
    if (fastify_error.validation) {
      const context = fastify_error.validationContext ?? 'body';
      const details = formatValidationIssues(fastify_error.validation, context);
      return reply
        .status(400)
        .send(
          errorBody(
            'VALIDATION_ERROR',
            `Invalid request ${context}: ${details.map((detail) => detail.message).join('; ')}`,
            details,
          ),
        );
    }
    const status = fastify_error.statusCode ?? 500;
    if (status === 413 || fastify_error.code === 'FST_REQ_FILE_TOO_LARGE') {
      return reply.status(413).send(errorBody('PAYLOAD_TOO_LARGE', 'Request body is too large'));
    }
    if (status === 415) {
      return reply.status(400).send(errorBody('VALIDATION_ERROR', fastify_error.message));
    }
    if (status >= 400 && status < 500) {
      return reply.status(400).send(errorBody('VALIDATION_ERROR', fastify_error.message));
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      reply.header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      return reply
        .status(503)
        .send(errorBody('SERVICE_UNAVAILABLE', 'The database is unavailable or too slow right now; retry shortly'));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send(errorBody('INTERNAL', 'Internal server error'));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = options.allowedMethods?.(path) ?? [];
    if (allowed.length > 0) {
      return reply
        .status(405)
        .header('Allow', allowed.join(', '))
        .send(
          errorBody(
            'METHOD_NOT_ALLOWED',
            `${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`,
          ),
        );
    }
    reply.status(404).send(errorBody('NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`));
  });
}
