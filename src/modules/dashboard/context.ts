import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_STATUS } from '../../http/errors.ts';
import { MONEY_ROLES } from '../../http/principal.ts';
import { constantTimeEqual, randomBase62 } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { html } from './html.ts';
import { pickLang, translator } from './i18n.ts';
import { page, type PageContext } from './layout.ts';
import type { DashboardRole } from './tables.ts';
import { resumeSession, type DashboardSession, type UsersDeps } from './users.ts';

export const SESSION_COOKIE = 'mpay_session';
export const LANG_COOKIE = 'mpay_lang';

/** What each role may change (everyone signed in may read every page). */
export type Permission = 'keys' | 'webhooks' | 'simulate' | 'money';
export const PERMISSIONS: Record<Permission, readonly DashboardRole[]> = {
  keys: ['owner', 'developer'],
  webhooks: ['owner', 'developer'],
  simulate: ['owner', 'developer'],
  money: MONEY_ROLES as readonly DashboardRole[],
};

export function can(session: DashboardSession, permission: Permission): boolean {
  return PERMISSIONS[permission].includes(session.user.role);
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) {
      try {
        return decodeURIComponent(value.join('='));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The page context of a request: language and, when signed in, the session. */
export function contextOf(request: FastifyRequest, session: DashboardSession | null): PageContext {
  const lang = pickLang(readCookie(request, LANG_COOKIE), request.headers['accept-language']);
  return { lang, t: translator(lang), session, url: request.url };
}

/** Security headers of every dashboard response: scripts only from this origin, no framing, no caching. */
export function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'same-origin')
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .header(
      'Content-Security-Policy',
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
}

export function sendPage(reply: FastifyReply, body: string, status = 200): FastifyReply {
  return securityHeaders(reply).status(status).type('text/html; charset=utf-8').send(body);
}

export function sessionCookie(token: string, options: { secure: boolean; max_age_seconds: number }): string {
  return `${SESSION_COOKIE}=${token}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${options.max_age_seconds}${options.secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}

/** Resolves the session cookie, or null (the caller redirects to sign-in). */
export async function currentSession(deps: UsersDeps, request: FastifyRequest): Promise<DashboardSession | null> {
  const token = readCookie(request, SESSION_COOKIE);
  if (!token || token.length > 128) return null;
  return resumeSession(deps, token);
}

/** The synchronizer-token check of every state-changing request: the form field `_csrf` or the `X-CSRF-Token` header. */
export function checkCsrf(session: DashboardSession, supplied: unknown): boolean {
  return typeof supplied === 'string' && constantTimeEqual(supplied, session.csrf_token);
}

export function errorPage(context: PageContext, status: number, message: string): string {
  const title = status === 403 ? context.t('forbidden_title') : status === 404 ? context.t('not_found_title') : context.t('error_title');
  return page(context, { title, section: null, body: html`<h1>${title}</h1><div class="error" role="alert" id="error-message">${message}</div><p><a href="/dashboard">${context.t('home')}</a></p>` });
}

/** Domain errors become a page with their message and the status the API would give; anything else propagates (500). */
export function statusOfError(error: unknown): { status: number; message: string } | null {
  if (error instanceof AppError) return { status: ERROR_STATUS[error.code], message: error.message };
  return null;
}

/** A fresh idempotency key for each rendered form, so a double submit replays instead of acting twice. */
export function formKey(): string {
  const hex = Buffer.from(randomBase62(16)).toString('hex').slice(0, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
