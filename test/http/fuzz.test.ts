import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import {
  ADMIN_HEADERS,
  allOperationsDocument,
  INTERNAL_TOKEN,
  startTestApp,
  thbSeller,
  type TestApp,
  type TestMerchant,
} from '../helpers/app.ts';
import {
  brokenBodies,
  field,
  hostileString,
  multipartProof,
  percentEncode,
  queryString,
  resolver,
  valueFor,
  type Json,
  type OpenApiSchema,
} from '../helpers/fuzz.ts';

/**
 * Schema-driven fuzzing: every operation of /openapi.json and /openapi-admin.json gets generated hostile requests
 * with valid credentials of its kind. Nothing may answer 5xx; every 4xx carries the error envelope (the hosted checkout and refund claim pages answer humans in
 * HTML); a refused request leaves every table's row count as it was. FUZZ_RUNS (per operation) and FUZZ_SEED make
 * the longer runs of `scripts/fuzz.sh`; CI uses the bounded defaults below.
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 12);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20260423);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Operation {
  method: (typeof METHODS)[number];
  path: string;
  security: string[];
  parameters: { name: string; in: string; required?: boolean; schema?: OpenApiSchema }[];
  json_body?: OpenApiSchema;
  multipart: boolean;
}

describe('fuzz: no input gives a 5xx, every refusal has the envelope and writes nothing', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let session_token: string;
  let payment_id: string;
  const operations: Operation[] = [];
  let resolve: ReturnType<typeof resolver>;
  let tables: string[] = [];

  /** Every table's row count, as one JSON object from scalar subqueries: a tenth of the CPU of a 38-way `union all` (it runs after each request). */
  async function rowCounts(): Promise<Record<string, number>> {
    // a function call takes at most 100 arguments (50 tables), so the object is built in chunks and concatenated
    const chunks: string[] = [];
    for (let start = 0; start < tables.length; start += 40)
      chunks.push(
        `jsonb_build_object(${tables
          .slice(start, start + 40)
          .map((name) => `'${name}', (select count(*) from "${name}")`)
          .join(', ')})`,
      );
    const select = `select (${chunks.join(' || ')}) as counts`;
    const { rows } = await sql.raw<{ counts: Record<string, number | string> }>(select).execute(t.db);
    const counts =
      typeof rows[0]!.counts === 'string'
        ? (JSON.parse(rows[0]!.counts) as Record<string, number | string>)
        : rows[0]!.counts;
    return Object.fromEntries(tables.map((name) => [name, Number(counts[name])]));
  }

  before(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_FAILED_AUTH_PER_SECOND: '100000' } });
    merchant = await t.createMerchant('Fuzz Merchant');
    await t.createSeller(thbSeller(100_000_000));
    const session = await t.admin('POST', `/admin/merchants/${merchant.id}/sessions`, { user_id: 'fuzz-user' });
    session_token = session.json().data.session_token;
    const payment = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'fuzz-1',
      amount: '100.00',
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(payment.statusCode, 201, payment.body);
    payment_id = payment.json().data.id;
    // The buyer opens the page once (matched -> payment_pending), so a refused upload's re-rendered page writes nothing.
    assert.equal((await t.request({ method: 'GET', url: `/checkout/${payment_id}` })).statusCode, 200);

    const document = (await allOperationsDocument(t)) as OpenApiSchema;
    resolve = resolver(document);
    for (const [path, item] of Object.entries(document['paths'] as Record<string, Record<string, OpenApiSchema>>)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const security = ((operation['security'] ?? []) as Record<string, unknown>[]).flatMap((requirement) =>
          Object.keys(requirement),
        );
        const content = ((operation['requestBody'] as OpenApiSchema | undefined)?.['content'] ?? {}) as Record<
          string,
          { schema?: OpenApiSchema }
        >;
        operations.push({
          method,
          path,
          security,
          parameters: (operation['parameters'] ?? []) as Operation['parameters'],
          ...(content['application/json']?.schema ? { json_body: content['application/json'].schema } : {}),
          multipart: 'multipart/form-data' in content,
        });
      }
    }
    const { rows } = await sql<{
      tablename: string;
    }>`select tablename from pg_tables where schemaname = 'public' order by tablename`.execute(t.db);
    // The API request log records every call, refused or not (the Developers page shows it), and the shared
    // failed-authentication counters (PostgreSQL without Redis) count refused credentials: that is their job.
    tables = rows.map((row) => row.tablename).filter((name) => name !== 'api_request_log' && name !== 'auth_counters');
  });
  after(() => t.close());

  function credentials(security: string[]): fc.Arbitrary<Record<string, string>> {
    const options: fc.Arbitrary<Record<string, string>>[] = [];
    for (const scheme of security) {
      if (scheme === 'apiKey')
        options.push(
          fc.constantFrom(merchant.live, merchant.test, merchant.sandbox).map((key) => ({ 'x-api-key': key })),
        );
      if (scheme === 'merchantJwt') options.push(fc.constant({ authorization: `Bearer ${merchant.jwt}` }));
      if (scheme === 'dashboardSession') options.push(fc.constant({ cookie: `mpay_session=${session_token}` }));
      if (scheme === 'adminToken') options.push(fc.constant({ ...ADMIN_HEADERS }));
      if (scheme === 'internalToken') options.push(fc.constant({ authorization: `Bearer ${INTERNAL_TOKEN}` }));
    }
    // Now and then a malformed credential: it must be a plain 401 (or 403), never a 500.
    const broken = fc.constantFrom<Record<string, string>>(
      { cookie: 'mpay_session=%E0%A4%A' },
      { cookie: 'mpay_session=%' },
      { cookie: 'mpay_session="\\u0000"; other=%zz' },
      { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' },
      { authorization: `Bearer ${'x'.repeat(5000)}` },
      { 'x-api-key': `svc_live_${'A'.repeat(200)}` },
      {},
    );
    return options.length
      ? fc.oneof({ weight: 8, arbitrary: fc.oneof(...options) }, { weight: 1, arbitrary: broken })
      : fc.oneof({ weight: 8, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: broken });
  }

  function pathValue(): fc.Arbitrary<string> {
    return fc.oneof(
      fc.constantFrom(payment_id, merchant.id, `sbx_${merchant.id}`),
      fc.uuid(),
      hostileString.filter((value) => value.length > 0 && value.length < 2000),
    );
  }

  function request(operation: Operation) {
    const path_params = operation.parameters.filter((parameter) => parameter.in === 'path');
    const query_params = operation.parameters.filter((parameter) => parameter.in === 'query');
    const path = fc
      .tuple(...path_params.map(() => pathValue()))
      .map((values) =>
        path_params.reduce(
          (url, parameter, i) => url.replace(`{${parameter.name}}`, percentEncode(values[i] ?? '')),
          operation.path,
        ),
      );
    const known_query: Record<string, fc.Arbitrary<Json>> = {};
    for (const parameter of query_params) known_query[parameter.name] = field(parameter.schema, resolve);
    const query = fc
      .tuple(
        fc.record(known_query, { requiredKeys: [] }) as fc.Arbitrary<Record<string, Json>>,
        fc.option(
          fc.dictionary(
            fc.constantFrom('merchant_id', 'is_sandbox', 'id', 'order', 'select', '__proto__', 'limit[]', '\u0000'),
            hostileString,
            { maxKeys: 2 },
          ),
          { freq: 3 },
        ),
      )
      .map(([known, unknown]) => ({ ...(unknown ?? {}), ...known }));
    const json = (
      operation.json_body
        ? fc.oneof(
            { weight: 3, arbitrary: valueFor(operation.json_body, resolve) },
            { weight: 1, arbitrary: field(undefined, resolve) },
          )
        : field(undefined, resolve)
    ).map((value) => ({ payload: JSON.stringify(value), content_type: 'application/json' }));
    const body =
      operation.method === 'get' || operation.method === 'delete'
        ? fc.constant(undefined)
        : operation.multipart
          ? fc.oneof(
              { weight: 3, arbitrary: multipartProof },
              { weight: 2, arbitrary: brokenBodies },
              { weight: 1, arbitrary: json },
            )
          : fc.oneof(
              { weight: 4, arbitrary: json },
              { weight: 1, arbitrary: brokenBodies },
              { weight: 1, arbitrary: multipartProof },
              { weight: 1, arbitrary: fc.constant(undefined) },
            );
    const idempotency = fc.option(fc.oneof(fc.uuid(), fc.constantFrom('not-a-uuid', '', 'x'.repeat(300))), { freq: 3 });
    return fc.record({ path, query, body, idempotency, auth: credentials(operation.security) });
  }

  it('covers every operation of the OpenAPI document', () => {
    assert.ok(operations.length >= 40, `expected the whole API, found ${operations.length} operations`);
  });

  it('sends hostile requests to every operation', async () => {
    let before_counts = await rowCounts();
    let requests = 0;
    const started_ms = performance.now();
    // One failing operation does not hide the others: each reports its first counterexample.
    const failures: string[] = [];
    for (const [index, operation] of operations.entries()) {
      await fc
        .assert(
          fc.asyncProperty(request(operation), async (input) => {
            const url = `${input.path}${queryString(input.query)}`;
            const headers: Record<string, string> = { ...input.auth };
            if (input.idempotency !== null) headers['idempotency-key'] = input.idempotency;
            if (input.body) headers['content-type'] = input.body.content_type;
            const response = await t.request({
              method: operation.method.toUpperCase() as 'GET',
              url,
              headers,
              ...(input.body ? { payload: input.body.payload } : {}),
            });
            requests += 1;
            const what = `${operation.method.toUpperCase()} ${url.slice(0, 300)} -> ${response.statusCode} ${response.body.slice(0, 300)}`;
            assert.ok(response.statusCode < 500, `5xx: ${what}`);
            const after_counts = await rowCounts();
            if (response.statusCode >= 400) {
              const html = String(response.headers['content-type'] ?? '').startsWith('text/html');
              if (
                !(
                  html &&
                  (operation.path.startsWith('/checkout/') ||
                    operation.path.startsWith('/pay/') ||
                    operation.path.startsWith('/receipts/') ||
                    operation.path.startsWith('/refunds/claim/'))
                )
              ) {
                const body = response.json() as {
                  success?: unknown;
                  error?: { code?: unknown; message?: unknown; details?: unknown };
                };
                assert.equal(body.success, false, `no envelope: ${what}`);
                assert.equal(typeof body.error?.code, 'string', `no error code: ${what}`);
                assert.equal(typeof body.error?.message, 'string', `no error message: ${what}`);
                assert.ok(Array.isArray(body.error?.details), `no error details: ${what}`);
              }
              assert.deepEqual(after_counts, before_counts, `a refused request wrote rows: ${what}`);
            }
            before_counts = after_counts;
          }),
          { seed: SEED + index, numRuns: RUNS, endOnFailure: true },
        )
        .catch((error: Error) =>
          failures.push(
            `${operation.method.toUpperCase()} ${operation.path}: ${String((error.cause as Error | undefined)?.message ?? error.message).split('\n')[0]}`,
          ),
        );
    }
    const elapsed_s = (performance.now() - started_ms) / 1000;
    console.log(
      `fuzz: ${operations.length} operations, ${requests} requests in ${elapsed_s.toFixed(1)} s (FUZZ_RUNS=${RUNS}, FUZZ_SEED=${SEED})`,
    );
    assert.deepEqual(failures, [], `${failures.length} operations failed:\n${failures.join('\n')}`);
  });
});
