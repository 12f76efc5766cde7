/**
 * The shared security suite: every operation of `/openapi.json` and `/openapi-admin.json`, probed by its declared security (see
 * test/helpers/security.ts for how to add a credential kind or a path-parameter fixture).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { allOperationsDocument, startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { MINT_SOURCE } from '../helpers/orders.ts';
import {
  BODIES,
  FIXTURES,
  LIVE_ONLY,
  RIGHT_CREDENTIAL,
  WRONG_CREDENTIALS,
  assertErrorEnvelope,
  credentialsFor,
  fill,
  fixtureFor,
  hasPathParameter,
  isSandboxOnly,
  minimalBody,
  operationsOf,
  type Credentials,
  type Fixture,
  type Operation,
} from '../helpers/security.ts';

// The document is read before the cases are declared, so each operation gets its own named `it`.
const boot = await startTestApp();
const document = await allOperationsDocument(boot);
await boot.close();
const operations = operationsOf(document).filter((operation) => !operation.hidden);
const NIL_ID = '00000000-0000-4000-8000-000000000000';

describe('security suite: every operation by its declared security', () => {
  let t: TestApp;
  let a: TestMerchant;
  let b: TestMerchant;
  let as_a: Credentials;
  let as_b: Credentials;
  let seller_a: { id: string; seller_key: string };
  const made = new Map<string, Promise<string>>();

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
    a = await t.createMerchant('Merchant A');
    b = await t.createMerchant('Merchant B');
    seller_a = (await t.createSeller(thbSeller(1_000_000, '35.00', '0811111111'))) as typeof seller_a;
    const seller_b = (await t.createSeller(thbSeller(1_000_000, '35.00', '0822222222'))) as typeof seller_a;
    as_a = credentialsFor(a, seller_a.seller_key);
    as_b = credentialsFor(b, seller_b.seller_key);
  });
  after(() => t.close());

  /** A's resource for a fixture, made once per mode and reused (B's requests must not change it). */
  const resource = (fixture: Fixture, mode: 'live' | 'sandbox') => {
    const cache_key = `${fixture.prefix} ${mode}`;
    if (!made.has(cache_key)) made.set(cache_key, fixture.create!({ t, a, b, seller_a }, mode));
    return made.get(cache_key)!;
  };

  const send = (operation: Operation, path: string, credential: Record<string, string>) => {
    const headers = operation.idempotency_key ? { ...credential, 'idempotency-key': randomUUID() } : credential;
    const special = BODIES[`${operation.method} ${operation.path}`]?.();
    if (special)
      return t.request({
        method: operation.method as 'POST',
        url: path,
        headers: { ...headers, ...special.headers },
        payload: special.payload,
      });
    const body = minimalBody(operation.body_schema);
    return t.request({
      method: operation.method as 'GET',
      url: path,
      headers: { ...headers },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  };

  /** A's view of the resource, to prove a refused write changed nothing. */
  const readAsA = async (fixture: Fixture, id: string, mode: 'live' | 'sandbox') => {
    if (fixture.prefix === '/v1/merchants/')
      return (await t.request({ method: 'GET', url: `/v1/merchants/${id}/balance`, headers: as_a.merchant_jwt })).body;
    const url = fixture.read ? fixture.read(id).replace(/#.*$/, '') : `${fixture.prefix}${id}`;
    const response = await t.request({
      method: 'GET',
      url,
      headers: fixture.read_with ? as_a[fixture.read_with] : mode === 'live' ? as_a.api_key_live : as_a.api_key_sandbox,
    });
    assert.equal(response.statusCode, 200, response.body);
    const data = fixture.read
      ? response.json().data.find((row: { id: string }) => row.id === id)
      : response.json().data;
    assert.ok(data, `A cannot read its own ${fixture.prefix}${id}`);
    return JSON.stringify({ ...data, expires_in_seconds: undefined });
  };

  it('the document lists operations of every kind', () => {
    const schemes = new Set(operations.map((operation) => operation.scheme));
    assert.deepEqual([...schemes].sort(), [
      'adminToken',
      'apiKey',
      'apiKeyOrMerchant',
      'internalToken',
      'merchantJwt',
      'public',
      'sellerKey',
    ]);
  });

  for (const operation of operations) {
    const name = `${operation.method} ${operation.path}`;
    if (operation.scheme === 'public') continue;
    const scheme = operation.scheme;
    const path = fill(operation.path, NIL_ID);

    describe(name, () => {
      it('no credential: 401 UNAUTHORIZED', async () => {
        assertErrorEnvelope(await send(operation, path, {}), 401, 'UNAUTHORIZED');
      });

      for (const [credential, status, code] of WRONG_CREDENTIALS[scheme]) {
        it(`wrong credential (${credential}): ${status} ${code}`, async () => {
          assertErrorEnvelope(await send(operation, path, as_a[credential]), status, code);
        });
      }

      if (operation.scheme === 'apiKey' && isSandboxOnly(operation)) {
        it('live key on a sandbox-only route: 403 SANDBOX_ONLY', async () => {
          assertErrorEnvelope(await send(operation, path, as_a.api_key_live), 403, 'SANDBOX_ONLY');
        });
      }
      if (LIVE_ONLY.has(name)) {
        it('sandbox key on a live-only route: 403 SANDBOX_ONLY', async () => {
          assertErrorEnvelope(await send(operation, path, as_a.api_key_sandbox), 403, 'SANDBOX_ONLY');
        });
      }

      if (
        !hasPathParameter(operation.path) ||
        operation.scheme === 'adminToken' ||
        operation.scheme === 'internalToken'
      )
        return;
      const fixture = fixtureFor(operation.path);
      if (!fixture) {
        it("another merchant's resource: has a fixture", () => {
          assert.fail(`add a fixture for ${operation.path} to FIXTURES in test/helpers/security.ts`);
        });
        return;
      }
      if (fixture.pending) {
        it.todo(`another merchant's resource: fixture pending (${fixture.pending})`);
        return;
      }
      const right = RIGHT_CREDENTIAL[scheme];
      const cross = fixture.cross_by_operation?.[name] ?? fixture.cross;

      it(`another merchant's resource: ${cross[0]} ${cross[1]}, nothing changed`, async () => {
        const home = fixture.home_mode ?? 'live';
        const id = await resource(fixture, home);
        const before_read = await readAsA(fixture, id, home);
        const credential = right === 'api_key_live' && home === 'sandbox' ? 'api_key_sandbox' : right;
        assertErrorEnvelope(await send(operation, fill(operation.path, id), as_b[credential]), cross[0], cross[1]);
        assert.equal(await readAsA(fixture, id, home), before_read);
      });

      const keyed = operation.scheme === 'apiKey' || operation.scheme === 'apiKeyOrMerchant';
      if (
        keyed &&
        !LIVE_ONLY.has(name) &&
        !isSandboxOnly(operation) &&
        !fixture.live_only &&
        fixture.home_mode !== 'sandbox'
      ) {
        it("the other mode's key on a live resource: 404 NOT_FOUND, nothing changed", async () => {
          const id = await resource(fixture, 'live');
          const before_read = await readAsA(fixture, id, 'live');
          assertErrorEnvelope(await send(operation, fill(operation.path, id), as_a.api_key_sandbox), 404, 'NOT_FOUND');
          assert.equal(await readAsA(fixture, id, 'live'), before_read);
        });
      }
      if (keyed && !isSandboxOnly(operation) && !fixture.live_only) {
        it('a live key on a sandbox resource: 404 NOT_FOUND, nothing changed', async () => {
          const id = await resource(fixture, 'sandbox');
          const before_read = await readAsA(fixture, id, 'sandbox');
          assertErrorEnvelope(await send(operation, fill(operation.path, id), as_a.api_key_live), 404, 'NOT_FOUND');
          assert.equal(await readAsA(fixture, id, 'sandbox'), before_read);
        });
      }
    });
  }

  it('every fixture row matches at least one operation', () => {
    for (const fixture of FIXTURES) {
      assert.ok(
        operations.some((operation) => operation.path.startsWith(fixture.prefix)),
        `fixture ${fixture.prefix} matches no operation: remove or fix it`,
      );
    }
  });
});
