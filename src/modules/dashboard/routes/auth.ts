import { Type } from 'typebox';
import { formFields } from '../../../http/multipart.ts';
import { asset } from '../assets.ts';
import {
  clearedSessionCookie,
  contextOf,
  currentSession,
  errorPage,
  errorText,
  LANG_COOKIE,
  sendPage,
  sessionCookie,
  statusOfError,
} from '../context.ts';
import { crossSiteSignIn } from '../errors.ts';
import { safeBack } from '../forms.ts';
import { accountPage, invitePage, signInPage } from '../pages/auth.ts';
import { noticeOf, PAGE_SCHEMA, redirect, type PageRouter } from '../routing.ts';
import {
  acceptInvitation,
  changePassword,
  checkSignIn,
  findInvitation,
  openSession,
  SESSION_ABSOLUTE_MS,
  setSessionMode,
  signOut,
} from '../users.ts';

/** Assets, language, sign-in and out, invitations, the live/sandbox switch and the account page. */
export function authRoutes({ app, deps, get, post }: PageRouter): void {
  const cookie_options = { secure: deps.secure_cookies, max_age_seconds: Math.floor(SESSION_ABSOLUTE_MS / 1000) };

  app.get(
    '/dashboard/assets/:name',
    {
      config: { auth: 'public', rate_limit: false, errors: [404] },
      schema: {
        hide: true,
        tags: ['dashboard'],
        summary: 'Dashboard scripts and styles (htmx and Chart.js from the package, no CDN)',
        params: Type.Object({ name: Type.String({ maxLength: 64 }) }),
      },
    },
    async (request, reply) => {
      const file = asset(request.params.name);
      if (!file) return reply.status(404).type('text/plain').send('not found');
      return reply
        .header('Cache-Control', 'public, max-age=3600')
        .header('X-Content-Type-Options', 'nosniff')
        .type(file.type)
        .send(file.body);
    },
  );

  app.get(
    '/dashboard/lang',
    {
      config: { auth: 'public' },
      schema: {
        ...PAGE_SCHEMA('Switch the dashboard language (cookie) and go back'),
        querystring: Type.Object({
          to: Type.Optional(Type.String({ maxLength: 4 })),
          back: Type.Optional(Type.String({ maxLength: 2048 })),
        }),
      },
    },
    async (request, reply) => {
      const lang = request.query.to === 'th' ? 'th' : 'en';
      reply.header(
        'Set-Cookie',
        `${LANG_COOKIE}=${lang}; Path=/dashboard; SameSite=Lax; Max-Age=31536000${deps.secure_cookies ? '; Secure' : ''}`,
      );
      return redirect(reply, safeBack(request.query.back, '/dashboard'));
    },
  );

  app.get(
    '/dashboard/sign-in',
    { config: { auth: 'public' }, schema: PAGE_SCHEMA('Sign-in page') },
    async (request, reply) => {
      if (await currentSession(deps.users, request)) return redirect(reply, '/dashboard');
      return sendPage(
        reply,
        signInPage(contextOf(request, null), { notice: noticeOf(contextOf(request, null), request.query) }),
      );
    },
  );

  app.post(
    '/dashboard/sign-in',
    {
      config: { auth: 'public', errors: [401, 403, 429] },
      schema: {
        ...PAGE_SCHEMA(
          'Sign in with email and password (form post); repeated failures are refused per address and slowed per email',
        ),
        consumes: ['application/x-www-form-urlencoded'],
      },
    },
    async (request, reply) => {
      const context = contextOf(request, null);
      // No session yet, so no synchronizer token: a cross-site sign-in post is refused by its Origin instead.
      const origin = request.headers.origin;
      if (
        origin &&
        origin !== `${request.protocol}://${request.headers.host}` &&
        origin !== new URL(deps.users.public_base_url).origin
      ) {
        return sendPage(
          reply,
          errorPage(context, 403, errorText(context, crossSiteSignIn()), '/dashboard/sign-in'),
          403,
        );
      }
      const form = formFields(request.body);
      const email = (form['email'] ?? '').slice(0, 320);
      const outcome = await checkSignIn(deps.users, email, form['password'] ?? '', request.ip);
      if (!outcome.ok) {
        if (outcome.reason === 'limited') {
          reply.header('Retry-After', String(outcome.retry_after_seconds));
          const minutes = String(Math.ceil(outcome.retry_after_seconds / 60));
          return sendPage(reply, signInPage(context, { email, error: context.t('sign_in_limited', { minutes }) }), 429);
        }
        return sendPage(reply, signInPage(context, { email, error: context.t('invalid_credentials') }), 401);
      }
      const { token } = await openSession(deps.users, outcome.user_id);
      reply.header('Set-Cookie', sessionCookie(token, cookie_options));
      return redirect(reply, '/dashboard');
    },
  );

  const TokenParams = Type.Object({ token: Type.String({ maxLength: 128 }) });

  app.get(
    '/dashboard/invite/:token',
    { config: { auth: 'public' }, schema: { ...PAGE_SCHEMA('Invitation: set a password'), params: TokenParams } },
    async (request, reply) => {
      const invitation = await findInvitation(deps.users, request.params.token);
      return sendPage(
        reply,
        invitePage(contextOf(request, null), { token: request.params.token, email: invitation?.email ?? null }),
        invitation ? 200 : 404,
      );
    },
  );

  app.post(
    '/dashboard/invite/:token',
    {
      config: { auth: 'public', errors: [401, 404] },
      schema: {
        ...PAGE_SCHEMA('Invitation: set the password (one use) and sign in'),
        params: TokenParams,
        consumes: ['application/x-www-form-urlencoded'],
      },
    },
    async (request, reply) => {
      const context = contextOf(request, null);
      const invitation = await findInvitation(deps.users, request.params.token);
      if (!invitation) return sendPage(reply, invitePage(context, { token: request.params.token, email: null }), 404);
      try {
        const { user_id } = await acceptInvitation(
          deps.users,
          request.params.token,
          formFields(request.body)['password'] ?? '',
        );
        const { token } = await openSession(deps.users, user_id);
        reply.header('Set-Cookie', sessionCookie(token, cookie_options));
        return redirect(reply, '/dashboard');
      } catch (error) {
        const known = statusOfError(error, context);
        if (!known) throw error;
        return sendPage(
          reply,
          invitePage(context, { token: request.params.token, email: invitation.email, error: known.message }),
          known.status,
        );
      }
    },
  );

  post('/dashboard/sign-out', 'Sign out (ends the session)', {}, async ({ reply, session }) => {
    await signOut(deps.users, session.session_id);
    reply.header('Set-Cookie', clearedSessionCookie(deps.secure_cookies));
    return redirect(reply, '/dashboard/sign-in');
  });

  post(
    '/dashboard/mode',
    'Switch the session between the live and the sandbox view',
    {},
    async ({ reply, session, form }) => {
      await setSessionMode(deps.users, session.session_id, form['mode'] === 'sandbox' ? 'sandbox' : 'live');
      return redirect(reply, '/dashboard');
    },
  );

  get('/dashboard/account', 'Account: change password', {}, async ({ request, reply, context }) =>
    sendPage(reply, accountPage(context, { notice: noticeOf(context, request.query) })),
  );

  post(
    '/dashboard/account/password',
    'Change the password (other sessions end)',
    {},
    async ({ reply, session, context, form }) => {
      try {
        await changePassword(deps.users, session, form['current_password'] ?? '', form['new_password'] ?? '');
      } catch (error) {
        const known = statusOfError(error, context);
        if (!known) throw error;
        return sendPage(reply, accountPage(context, { error: known.message }), known.status);
      }
      return redirect(reply, '/dashboard/account?notice=password_changed');
    },
  );
}
