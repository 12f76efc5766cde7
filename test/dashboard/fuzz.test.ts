import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { brokenBodies, hostileString, multipartProof, percentEncode, queryString, routesOf } from '../helpers/fuzz.ts';
import { addUser, signIn, type Browser } from './helpers.ts';

/**
 * Every dashboard route (read from the router, so a new page is fuzzed without being listed here) gets hostile ids,
 * queries and forms with a valid session and CSRF token most of the time. Nothing may answer 5xx, and every refusal
 * of a page is HTML (the person sees a page, never the API's JSON). FUZZ_RUNS and FUZZ_SEED as in test/http/fuzz.
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 6);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261125);

/** Every name a dashboard form posts, so that generated forms reach the handlers' own checks. */
const FIELDS = [
  '_key',
  'scenario',
  'amount',
  'currency',
  'order_id',
  'amount_pay',
  'target_currency',
  'target_amount',
  'fiat_currency',
  'fiat_amount',
  'sell_order_id',
  'notes',
  'reference',
  'grace_hours',
  'url',
  'enabled_events',
  'description',
  'since',
  'back',
  'mode',
  'email',
  'password',
  'current_password',
  'new_password',
  'role',
  'time_zone',
  'user_id',
  'confirm',
];
const QUERY = ['status', 'from', 'to', 'q', 'cursor', 'notice', 'back', 'to', 'key_id', 'endpoint_id'];
/** Routes that end the session they are called with get a session of their own each time. */
const ENDS_SESSION = new Set(['/dashboard/sign-out', '/dashboard/account/password']);

describe('dashboard fuzz: no input gives a 5xx, every refused page is HTML', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let owner: Browser;
  let viewer: Browser;
  let routes: { method: string; path: string }[] = [];
  const ids: string[] = [];

  before(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_FAILED_AUTH_PER_SECOND: '100000' } });
    merchant = await t.createMerchant('Fuzz Dashboard');
    await addUser(t, merchant.id, 'owner@fuzz.example', 'owner');
    await addUser(t, merchant.id, 'viewer@fuzz.example', 'viewer');
    owner = await signIn(t, 'owner@fuzz.example');
    viewer = await signIn(t, 'viewer@fuzz.example');
    const key = await t.db
      .selectFrom('api_keys')
      .select('id')
      .where('merchant_id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    ids.push(key.id, merchant.id, `sbx_${merchant.id}`);
    routes = routesOf(t.application.app.printRoutes({ commonPrefix: false })).filter(
      (route) => route.path.startsWith('/dashboard') && route.method !== 'HEAD',
    );
  });
  after(() => t.close());

  const pathValue = () =>
    fc.oneof(
      fc.constantFrom(...ids, 'toString', '__proto__', 'constructor'),
      fc.uuid(),
      hostileString.filter((value) => value.length > 0 && value.length < 1500),
    );

  function requestFor(route: { method: string; path: string }) {
    const names = route.path
      .split('/')
      .filter((segment) => segment.startsWith(':') || segment === '*' || segment.endsWith('*'));
    const path = fc.tuple(...names.map(() => pathValue())).map((values) => {
      let url = route.path.replace(/\*$/, '/');
      for (const [i, name] of names.entries())
        url = url.replace(name === '*' || name.endsWith('*') ? /\*$/ : name, percentEncode(values[i] ?? ''));
      return url.endsWith('/') && route.path.endsWith('*') ? `${url}${percentEncode('x')}` : url;
    });
    const query = fc
      .option(fc.dictionary(fc.constantFrom(...QUERY), hostileString, { maxKeys: 3 }), { freq: 2 })
      .map((value) => value ?? {});
    const form = fc.dictionary(
      fc.constantFrom(...FIELDS),
      fc.oneof(
        hostileString,
        fc.constantFrom('THB', 'matched_then_completed', '1,250.00', '24', 'https://10.0.0.1/x', 'sandbox'),
      ),
      { maxKeys: 6 },
    );
    const csrf = fc.constantFrom('valid', 'valid', 'valid', 'wrong', 'none');
    const body =
      route.method === 'GET'
        ? fc.constant(undefined)
        : fc.oneof(
            {
              weight: 5,
              arbitrary: fc.tuple(form, csrf).map(([fields, token]) => ({ kind: 'form' as const, fields, token })),
            },
            { weight: 1, arbitrary: brokenBodies.map((broken) => ({ kind: 'raw' as const, ...broken })) },
            { weight: 1, arbitrary: multipartProof.map((part) => ({ kind: 'raw' as const, ...part })) },
          );
    const who = fc.constantFrom('owner', 'owner', 'owner', 'viewer', 'nobody', 'broken');
    return fc.record({ path, query, body, who });
  }

  it('finds every dashboard route', () => {
    assert.ok(
      routes.length >= 30,
      `expected every page, found ${routes.length}: ${routes.map((route) => route.path).join(', ')}`,
    );
  });

  it('sends hostile requests to every dashboard route', async () => {
    const failures: string[] = [];
    let requests = 0;
    const started_ms = performance.now();
    for (const [index, route] of routes.entries()) {
      await fc
        .assert(
          fc.asyncProperty(requestFor(route), async (input) => {
            const browser =
              ENDS_SESSION.has(route.path) && input.who === 'owner'
                ? await signIn(t, 'owner@fuzz.example')
                : input.who === 'viewer'
                  ? viewer
                  : owner;
            const cookie =
              input.who === 'nobody' ? '' : input.who === 'broken' ? 'mpay_session=%E0%A4%A' : browser.cookie;
            const headers: Record<string, string> = cookie ? { cookie } : {};
            let payload: string | Buffer | undefined;
            if (input.body?.kind === 'form') {
              const fields: Record<string, string> = { ...input.body.fields };
              if (input.body.token === 'valid') fields['_csrf'] = browser.csrf;
              if (input.body.token === 'wrong') fields['_csrf'] = 'x'.repeat(64);
              payload = Object.entries(fields)
                .map(([key, value]) => `${percentEncode(key)}=${percentEncode(value)}`)
                .join('&');
              headers['content-type'] = 'application/x-www-form-urlencoded';
            } else if (input.body?.kind === 'raw') {
              payload = input.body.payload;
              headers['content-type'] = input.body.content_type;
            }
            const url = `${input.path}${queryString(input.query)}`;
            const response = await t.request({
              method: route.method as 'GET',
              url,
              headers,
              ...(payload !== undefined ? { payload } : {}),
            });
            requests += 1;
            const what = `${route.method} ${url.slice(0, 200)} (${input.who}) -> ${response.statusCode} ${response.body.slice(0, 200)}`;
            assert.ok(response.statusCode < 500, `5xx: ${what}`);
            // Not pages: the assets, a CORS preflight, and a URL the server refuses before any route (bad percent-encoding).
            const before_routing = response.statusCode === 400 && /request URL is not valid/.test(response.body);
            if (
              response.statusCode >= 400 &&
              !route.path.startsWith('/dashboard/assets/') &&
              route.method !== 'OPTIONS' &&
              !before_routing
            ) {
              assert.match(
                String(response.headers['content-type']),
                /^text\/html/,
                `a refusal that is not a page: ${what}`,
              );
            }
          }),
          { seed: SEED + index, numRuns: RUNS, endOnFailure: true },
        )
        .catch((error: Error) =>
          failures.push(
            `${route.method} ${route.path}: ${String((error.cause as Error | undefined)?.message ?? error.message).split('\n')[0]}`,
          ),
        );
    }
    const elapsed_s = (performance.now() - started_ms) / 1000;
    console.log(
      `dashboard fuzz: ${routes.length} routes, ${requests} requests in ${elapsed_s.toFixed(1)} s (FUZZ_RUNS=${RUNS}, FUZZ_SEED=${SEED})`,
    );
    assert.deepEqual(failures, [], `${failures.length} routes failed:\n${failures.join('\n')}`);
  });
});
