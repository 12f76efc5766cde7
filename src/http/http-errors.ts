import { AppError, type ErrorDetail } from '../lib/errors.ts';

/**
 * The HTTP layer's own errors (authentication, rate limits, idempotency keys, cursors, input screening), one named
 * factory each, so a message is written once and a reader finds every refusal of the layer here. Module errors live
 * in each module's `errors.ts`; codes and their statuses in `lib/errors.ts` and `http/errors.ts`.
 */

// authentication
export const missingApiKey = (presented_jwt = false) =>
  new AppError(
    'UNAUTHORIZED',
    presented_jwt
      ? 'This route takes a secret API key (svc_live_…, svc_test_… or svc_sandbox_…), not a JWT'
      : 'Missing or invalid API key (send X-API-Key or Authorization: Bearer)',
  );
export const missingMerchantCredential = () =>
  new AppError('UNAUTHORIZED', 'Missing or invalid merchant token or session');
export const missingKeyOrMerchantCredential = () =>
  new AppError('UNAUTHORIZED', 'Missing or invalid credential (send a secret API key, a merchant JWT or a session)');
export const missingAdminToken = () => new AppError('UNAUTHORIZED', 'Missing or invalid admin service token');
export const missingInternalToken = () => new AppError('UNAUTHORIZED', 'Missing or invalid internal service token');
export const sandboxKeysOnly = () => new AppError('SANDBOX_ONLY', 'This endpoint accepts test or sandbox keys only');
export const missingSellerKey = () =>
  new AppError('UNAUTHORIZED', 'This route takes a seller key (sel_live_…) as X-API-Key or Authorization: Bearer');
export const merchantKeyOnSellerRoute = () =>
  new AppError('FORBIDDEN', "Merchant keys cannot use seller routes: send the seller's own key (sel_live_…)");
export const sellerKeyOnMerchantRoute = () =>
  new AppError('FORBIDDEN', 'Seller keys cannot use merchant routes: they reach only /v1/seller/*');
export const liveKeysOnly = () =>
  new AppError('SANDBOX_ONLY', 'This endpoint moves live value and accepts live keys only');
export const roleMayNotMoveMoney = () =>
  new AppError('FORBIDDEN', "This dashboard user's role may read but not move money (owner or finance only)");
export const adminRoleRequired = () =>
  new AppError('ADMIN_FORBIDDEN', 'Admin routes require X-Actor-Role: super_admin');
export const adminActorRequired = () => new AppError('ADMIN_FORBIDDEN', 'Admin routes require X-Actor-User-Id');

// rate limits
export const tooManyFailedAuthentications = (retry_after_seconds: number) =>
  new AppError(
    'RATE_LIMITED',
    `Too many failed authentications from this address; retry after ${retry_after_seconds}s`,
  );
export const rateLimited = (per_second: number, retry_after_seconds: number) =>
  new AppError(
    'RATE_LIMITED',
    `Rate limit of ${per_second} requests per second exceeded; retry after ${retry_after_seconds}s`,
  );

// idempotency keys
export const idempotencyKeyRequired = () =>
  new AppError('VALIDATION_ERROR', 'Idempotency-Key header (a UUID) is required', [
    { field: 'headers.idempotency-key', message: 'required' },
  ]);
export const idempotencyKeyMalformed = (uuid_required: boolean) =>
  new AppError(
    'VALIDATION_ERROR',
    uuid_required ? 'Idempotency-Key must be a UUID' : 'Idempotency-Key must be 1 to 255 visible ASCII characters',
    [{ field: 'headers.idempotency-key', message: 'invalid' }],
  );
export const idempotencyKeyConflict = () =>
  new AppError('IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was already used with a different request body');

// request input
export const invalidCursor = () =>
  new AppError('VALIDATION_ERROR', 'cursor is not a cursor this API returned', [
    { field: 'querystring.cursor', message: 'invalid cursor' },
  ]);
export const hostileInput = (part: string, found: ErrorDetail & { field: string }) =>
  new AppError('VALIDATION_ERROR', `Invalid request ${part}: ${found.field} ${found.message}`, [found]);

// multipart uploads
export const uploadTooLarge = (max_bytes: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `Uploads may be at most ${max_bytes} bytes (Content-Length)`);
export const uploadCsrfInvalid = () =>
  new AppError('FORBIDDEN', "The X-CSRF-Token header is not this session's security token");
export const proofNotMultipart = () =>
  new AppError('VALIDATION_ERROR', 'Send multipart/form-data with a file field `proof`', [
    { field: 'body.proof', message: 'required' },
  ]);
export const proofPartsOverLegs = (legs: number) =>
  new AppError('VALIDATION_ERROR', `At most ${legs} \`proof\` part(s): one per leg of the payment`, [
    { field: 'body.proof', message: 'more parts than legs' },
  ]);
export const proofLegMalformed = () =>
  new AppError('VALIDATION_ERROR', '`leg` must be a leg number (match_order)', [
    { field: 'body.leg', message: 'not a leg number' },
  ]);
export const proofMultipartMalformed = (reason: string) =>
  new AppError('VALIDATION_ERROR', `Malformed multipart/form-data body: ${reason}`, [
    { field: 'body', message: 'malformed multipart body' },
  ]);
