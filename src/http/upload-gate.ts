import type { FastifyInstance, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../lib/crypto.ts';
import { sessionCookie } from './auth.ts';
import { missingMerchantCredential, roleMayNotMoveMoney, uploadCsrfInvalid, uploadTooLarge } from './http-errors.ts';
import type { Authenticator } from './principal.ts';

/** Room for the multipart framing and the small fields beside the file. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export interface UploadGateOptions {
  /** The largest file an upload may carry (PROOF_MAX_BYTES). */
  file_max_bytes: number;
  authenticator: Authenticator;
  /** The CSRF token of a dashboard session, from its cookie value. */
  csrfTokenFor: (session_token: string) => string;
}

function isMultipart(request: FastifyRequest): boolean {
  return /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '');
}

/**
 * Refuses an upload from its headers, before a byte of its body is read: a Content-Length over the limit (413), and
 * on dashboard uploads (all of which move money) no live session (401), an `X-CSRF-Token` that is not the session's
 * (403) or a role that may not move money (403). API routes have their credential checked by the auth hook before
 * this one; a form's `_csrf` field, in the body, is checked by the page after reading it.
 */
export function installUploadGate(app: FastifyInstance, options: UploadGateOptions): void {
  const max_bytes = options.file_max_bytes + MULTIPART_OVERHEAD_BYTES;
  app.addHook('onRequest', async (request) => {
    if (!isMultipart(request) && request.routeOptions.config.multipart_body === undefined) return;
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > max_bytes) throw uploadTooLarge(max_bytes);
    if (!request.url.startsWith('/dashboard/') || request.method === 'GET' || request.method === 'HEAD') return;
    const token = sessionCookie(request);
    const principal = token && token.length <= 128 ? await options.authenticator.bySession(token) : null;
    if (!token || !principal) throw missingMerchantCredential();
    const header = request.headers['x-csrf-token'];
    const csrf = Array.isArray(header) ? header[0] : header;
    if (csrf !== undefined && !constantTimeEqual(csrf, options.csrfTokenFor(token))) throw uploadCsrfInvalid();
    if (!principal.may_move_money) throw roleMayNotMoveMoney();
  });
}
