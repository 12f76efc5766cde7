import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_STATUS } from '../../http/errors.ts';
import { MONEY_ROLES } from '../../http/principal.ts';
import { constantTimeEqual, randomBase62 } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { DashboardError } from './errors.ts';
import { DEFAULT_TIME_ZONE } from './format.ts';
import { html } from './html.ts';
import { pickLang, translator } from './i18n.ts';
import { page, type PageContext } from './layout.ts';
import type { DashboardRole } from './tables.ts';
import { ERROR_WORDS_TH, FIELD_WORDS, REASON_WORDS, wordOf } from './words.ts';
import { resumeSession, type DashboardSession, type UsersDeps } from './users.ts';

export const SESSION_COOKIE = 'mpay_session';
export const LANG_COOKIE = 'mpay_lang';

/** What each role may change (everyone signed in may read every page). */
export type Permission = 'keys' | 'webhooks' | 'simulate' | 'money' | 'team';
export const PERMISSIONS: Record<Permission, readonly DashboardRole[]> = {
  keys: ['owner', 'developer'],
  webhooks: ['owner', 'developer'],
  simulate: ['owner', 'developer'],
  money: MONEY_ROLES as readonly DashboardRole[],
  team: ['owner'],
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
  return {
    lang,
    t: translator(lang),
    session,
    url: request.url,
    time_zone: session?.merchant.time_zone ?? DEFAULT_TIME_ZONE,
  };
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

export function errorPage(context: PageContext, status: number, message: string, back = '/dashboard'): string {
  const { t } = context;
  const title = status === 403 ? t('forbidden_title') : status === 404 ? t('not_found_title') : t('error_title');
  return page(context, {
    title,
    section: null,
    body: html`<h1>${title}</h1><div class="error" role="alert" id="error-message">${message}</div>
<p><a href="${back}" id="error-back">← ${t('back')}</a>${back === '/dashboard' ? '' : html` · <a href="/dashboard">${t('home')}</a>`}</p>`,
  });
}

/** Where an error page links back to: the page the person came from when it is a dashboard page, else home. */
export function backOf(request: FastifyRequest): string {
  const referer = request.headers.referer;
  if (!referer) return '/dashboard';
  try {
    const url = new URL(referer);
    if (url.host !== request.headers.host) return '/dashboard';
    const back = `${url.pathname}${url.search}`;
    return /^\/dashboard(\/[\w\-./?=&%]*)?$/.test(back) ? back : '/dashboard';
  } catch {
    return '/dashboard';
  }
}

/** An AppError in the page's language: the dashboard's own errors carry their Thai; others by code and fields. */
export function errorText(context: PageContext, error: AppError): string {
  if (context.lang === 'en') return error.message;
  if (error instanceof DashboardError) return error.thai;
  const sentence = ERROR_WORDS_TH[error.code] ?? context.t('error_title');
  const fields = error.details
    .filter((detail) => typeof detail.field === 'string')
    .map((detail) => {
      const name = String(detail.field).replace(/^(body|querystring|params|headers)\./, '');
      const reason = REASON_WORDS[detail.message] ? wordOf(REASON_WORDS, detail.message, 'th') : 'ไม่ถูกต้อง';
      return `${wordOf(FIELD_WORDS, name, 'th')} ${reason}`;
    });
  return fields.length ? `${sentence}: ${fields.join(', ')}` : sentence;
}

/**
 * Domain errors and the framework's refusals of a request (unreadable body, too large, unsupported type) become a
 * status and a message in the page's language; anything else is not known here and propagates.
 */
export function statusOfError(error: unknown, context: PageContext): { status: number; message: string } | null {
  if (error instanceof AppError) return { status: ERROR_STATUS[error.code], message: errorText(context, error) };
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const key = status === 413 ? 'request_too_large' : status === 429 ? 'too_many_requests' : 'request_unreadable';
    return { status, message: context.t(key) };
  }
  return null;
}

/** A fresh idempotency key for each rendered form, so a double submit replays instead of acting twice. */
export function formKey(): string {
  const hex = Buffer.from(randomBase62(16)).toString('hex').slice(0, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
