import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ERROR_STATUS } from '../../src/http/errors.ts';
import { EVENT_TYPES } from '../../src/modules/events/catalog.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { mergeDocuments, OpenApiChecker } from '../helpers/openapi-check.ts';

const root = resolve(import.meta.dirname, '../..');
type Json = Record<string, any>;

describe('OpenAPI document as a product', () => {
  let t: TestApp;
  let doc: Json;
  const operations: { key: string; operation: Json }[] = [];
  const resolveRef = (value: Json): Json => {
    let current = value;
    while (current?.['$ref'])
      current = (current['$ref'] as string)
        .slice(2)
        .split('/')
        .reduce<Json>((node, part) => node[part.replace(/~1/g, '/')], doc);
    return current;
  };
  let merchant_doc: Json;
  let operator_doc: Json;
  before(async () => {
    t = await startTestApp();
    merchant_doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    operator_doc = (await t.request({ method: 'GET', url: '/openapi-admin.json' })).json();
    doc = mergeDocuments(merchant_doc, operator_doc);
    for (const [path, methods] of Object.entries<Json>(doc['paths']))
      for (const [method, operation] of Object.entries<Json>(methods))
        operations.push({ key: `${method.toUpperCase()} ${path}`, operation });
  });
  after(() => t.close());

  it('passes redocly lint on the recommended ruleset with 0 errors and 0 warnings, each document on its own', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mpay-openapi-'));
    try {
      for (const [name, document] of [
        ['openapi.json', merchant_doc],
        ['openapi-admin.json', operator_doc],
      ] as const) {
        const file = join(dir, name);
        await writeFile(file, JSON.stringify(document));
        const run = promisify(execFile);
        const outcome = await run(
          join(root, 'node_modules/.bin/redocly'),
          ['lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'json', '--max-problems', '1000'],
          {
            maxBuffer: 64 * 1024 * 1024,
            env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
          },
        ).catch((error: { stdout?: string; stderr?: string }) => ({
          stdout: error.stdout ?? '',
          stderr: error.stderr ?? '',
        }));
        const report = JSON.parse(outcome.stdout) as {
          totals: { errors: number; warnings: number };
          problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
        };
        const listed = report.problems.map(
          (problem) => `${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`,
        );
        assert.deepEqual(
          { name, errors: report.totals.errors, warnings: report.totals.warnings, listed },
          { name, errors: 0, warnings: 0, listed: [] },
        );
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps admin and internal operations out of the merchant document, in the operator document, and loses none', async () => {
    const keys = (document: Json) =>
      Object.entries<Json>(document['paths']).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      );
    const operator_only = (key: string) =>
      / \/(admin|internal)\//.test(key) || key === 'GET /healthz' || key === 'GET /readyz';
    assert.deepEqual(keys(merchant_doc).filter(operator_only), []);
    assert.deepEqual(
      keys(operator_doc).filter((key) => !operator_only(key)),
      [],
    );
    assert.ok(
      keys(operator_doc).includes('POST /admin/merchants') &&
        keys(operator_doc).includes('POST /internal/pending-funds'),
    );
    const everything = t.application.app.swagger() as unknown as Json;
    assert.deepEqual([...keys(merchant_doc), ...keys(operator_doc)].sort(), keys(everything).sort());
    const schemes = (document: Json) => Object.keys(document['components']['securitySchemes']).sort();
    assert.deepEqual(schemes(merchant_doc), [
      'apiKey',
      'apiKeyBearer',
      'dashboardSession',
      'merchantJwt',
      'sellerKey',
      'sellerKeyBearer',
    ]);
    assert.deepEqual(schemes(operator_doc), ['adminToken', 'internalToken']);
    assert.ok(merchant_doc['webhooks'] && !operator_doc['webhooks']);
    assert.match(merchant_doc['info']['description'], /\[\/openapi-admin\.json\]\(\/openapi-admin\.json\)/);
    // The operator document is served without a credential (it describes routes, it grants nothing).
    assert.equal((await t.request({ method: 'GET', url: '/openapi-admin.json' })).statusCode, 200);
  });

  it('has a curl and an @mpay/client sample on every merchant operation, and a curl sample on every operator one', () => {
    for (const [path, item] of Object.entries<Json>(merchant_doc['paths'])) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        const samples = operation['x-codeSamples'] as { lang: string; label: string; source: string }[];
        assert.deepEqual(
          samples?.map((sample) => sample.label),
          ['curl', '@mpay/client'],
          `${method} ${path}`,
        );
        const [curl, sdk] = samples;
        assert.match(
          curl!.source,
          new RegExp(
            `curl -X ${method.toUpperCase()} "http://gateway\\.test${path.replace(/\{\w+\}/g, '[^"?]+').replace(/\./g, '\\.')}`,
          ),
          `${method} ${path}`,
        );
        assert.match(sdk!.source, /^import \{ Mpay \} from '@mpay\/client';$/m, `${method} ${path}`);
        assert.match(sdk!.source, /const result = await mpay\.\w+/, `${method} ${path}`);
      }
    }
    const trade = merchant_doc['paths']['/v1/trades']['post']['x-codeSamples'];
    assert.match(trade[0].source, /-H "X-API-Key: \$MPAY_API_KEY"/);
    assert.match(
      trade[0].source,
      /-d '\{"order_id":"order-1001","amount":"250.00","currency":"THB","return_url":"https:\/\/shop.example\/return"\}'/,
    );
    assert.match(trade[1].source, /mpay\.payments\.create\(\{\n {2}"order_id": "order-1001"/);
    const sell = merchant_doc['paths']['/v1/merchant-sell-orders']['post']['x-codeSamples'];
    assert.match(sell[0].source, /MPAY_TOKEN=\$\(curl -s -X POST "http:\/\/gateway\.test\/v1\/auth\/token"/);
    assert.match(sell[0].source, /-H "Idempotency-Key: \$\(uuidgen\)"/);
    for (const [path, item] of Object.entries<Json>(operator_doc['paths'])) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        assert.deepEqual(
          operation['x-codeSamples']?.map((sample: Json) => sample['label']),
          ['curl'],
          `${method} ${path}`,
        );
      }
    }
    assert.match(
      operator_doc['paths']['/admin/merchants']['post']['x-codeSamples'][0]['source'],
      /-H "X-Actor-Role: super_admin"/,
    );
  });

  it('gives every operation a unique, stable operationId and a declared tag with a description', () => {
    const ids = operations.map(({ operation }) => operation['operationId']);
    assert.equal(ids.filter(Boolean).length, operations.length);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(operations.find(({ key }) => key === 'GET /v1/payments/{id}')?.operation['operationId'], 'getPayment');
    assert.equal(operations.find(({ key }) => key === 'POST /v1/trades')?.operation['operationId'], 'createTrade');
    const declared = new Map<string, string>(
      (doc['tags'] as { name: string; description: string }[]).map((tag) => [tag.name, tag.description]),
    );
    for (const { key, operation } of operations)
      for (const tag of operation['tags'] ?? [])
        assert.ok(declared.get(tag), `${key}: tag ${tag} is not declared with a description`);
  });

  it('carries request examples on the first calls an integrator makes (redocly checks them against the schemas)', () => {
    for (const path of [
      '/v1/trades',
      '/v1/merchant-sell-orders',
      '/v1/merchant-buy-orders',
      '/v1/sandbox/payments/simulate',
    ]) {
      assert.ok(doc['paths'][path]['post']['requestBody']['content']['application/json']['example'], path);
    }
  });

  it('carries request and response examples on the refund, payment-link and seller-leg routes; the refund slip takes JSON too', () => {
    const paths = merchant_doc['paths'];
    const success = (operation: Json) =>
      Object.entries<Json>(operation['responses']).find(([status]) => status.startsWith('2'))![1]['content'][
        'application/json'
      ];
    for (const [path, method] of [
      ['/v1/payments/{id}/refunds', 'post'],
      ['/v1/refunds', 'get'],
      ['/v1/refunds/{id}', 'get'],
      ['/v1/refunds/{id}/cancel', 'post'],
      ['/v1/refunds/{id}/proof', 'post'],
      ['/v1/sandbox/refunds/{id}/simulate', 'post'],
      ['/v1/payment-links', 'post'],
      ['/v1/payment-links', 'get'],
      ['/v1/payment-links/{id}', 'get'],
      ['/v1/payment-links/{id}/deactivate', 'post'],
      ['/v1/seller/legs', 'get'],
      ['/v1/seller/legs/{payment_id}/{match_order}/confirm', 'post'],
      ['/v1/seller/legs/{payment_id}/{match_order}/reject', 'post'],
    ] as const) {
      assert.ok(success(paths[path][method])['example'], `${method} ${path} has a response example`);
      const body = paths[path][method]['requestBody']?.['content']?.['application/json'];
      if (body) assert.ok(body['example'], `${method} ${path} has a request example`);
    }
    const proof = paths['/v1/refunds/{id}/proof']['post'];
    assert.deepEqual(Object.keys(proof['requestBody']['content']), ['multipart/form-data', 'application/json']);
    assert.deepEqual(proof['requestBody']['content']['application/json']['schema']['required'], [
      'receipt_base64',
      'content_type',
    ]);
    assert.match(
      proof['x-codeSamples'][0]['source'],
      /-F "proof=@slip\.jpg"\n# or as JSON\ncurl -X POST .+\n(.+\n)+ {2}-d '\{"receipt_base64":/,
    );
    const reject = paths['/v1/seller/legs/{payment_id}/{match_order}/reject']['post']['x-codeSamples'];
    assert.match(
      reject[0].source,
      /\/v1\/seller\/legs\/[0-9a-f-]{36}\/1\/reject" \\\n {2}-H "X-API-Key: \$MPAY_SELLER_KEY"/,
    );
    assert.match(reject[1].source, /headers: \{ 'X-API-Key': process\.env\.MPAY_SELLER_KEY/);
    assert.match(
      paths['/v1/payment-links']['post']['x-codeSamples'][1].source,
      /mpay\.paymentLinks\.create\(\{\n {2}"title": "Thai silk scarf"/,
    );
  });

  it('documents the 404 of GET /v1/payments/{id} and the HTML 200 of GET /checkout/{id}', () => {
    const payment = doc['paths']['/v1/payments/{id}']['get']['responses'];
    assert.deepEqual(
      resolveRef(payment['404'])['content']['application/json']['schema']['properties']['error']['properties']['code'][
        'enum'
      ],
      ['NOT_FOUND'],
    );
    assert.ok(doc['paths']['/checkout/{id}']['get']['responses']['200']['content']['text/html']);
  });

  it('builds each error response from the closed code list, with the status the code map gives', () => {
    const documented = new Set<string>();
    for (const { key, operation } of operations) {
      for (const [status, raw] of Object.entries<Json>(operation['responses'])) {
        if (Number(status) < 400 || key === 'GET /readyz') continue; // 503 there is the readiness report, not an error
        const codes: string[] | undefined =
          resolveRef(raw)['content']?.['application/json']?.['schema']?.['properties']?.['error']?.['properties']?.[
            'code'
          ]?.['enum'];
        assert.ok(codes, `${key} ${status}: not built from the code list`);
        for (const code of codes) {
          assert.equal(
            ERROR_STATUS[code as keyof typeof ERROR_STATUS],
            Number(status),
            `${key}: ${code} under ${status}`,
          );
          documented.add(code);
        }
      }
    }
    const sell_order = doc['paths']['/v1/merchant-sell-orders/{id}']['get']['responses'];
    assert.ok(
      resolveRef(sell_order['403'])['content']['application/json']['schema']['properties']['error']['properties'][
        'code'
      ]['enum'].includes('SELL_ORDER_NOT_OWNER'),
    );
    // Every code some route can answer is documented somewhere (405 is the router's, outside any operation).
    const undocumented = Object.keys(ERROR_STATUS).filter(
      (code) => !documented.has(code) && code !== 'METHOD_NOT_ALLOWED',
    );
    assert.deepEqual(undocumented, []);
  });

  it('declares Idempotency-Key with the right `required` and the standard response headers', () => {
    const idempotency = (key: string) => {
      const [method, path] = key.split(' ') as [string, string];
      const parameters = (doc['paths'][path][method.toLowerCase()]['parameters'] ?? []).map(resolveRef);
      return parameters.find((parameter: Json) => parameter['name'] === 'Idempotency-Key')?.['required'];
    };
    for (const key of [
      'POST /v1/merchant-sell-orders',
      'POST /v1/merchant-sell-orders/{id}/confirm-cash-leg',
      'POST /v1/merchant-disputes',
      'POST /v1/merchant-buy-orders',
    ])
      assert.equal(idempotency(key), true, key);
    for (const key of ['POST /v1/payments', 'POST /v1/trades']) assert.equal(idempotency(key), false, key);
    assert.equal(idempotency('GET /v1/payments'), undefined);

    const create = doc['paths']['/v1/payments']['post']['responses'];
    assert.deepEqual(Object.keys(create['201']['headers']).sort(), [
      'Deprecation',
      'Idempotent-Replayed',
      'Link',
      'RateLimit',
      'RateLimit-Policy',
      'Sunset',
      'X-Request-Id',
    ]);
    const limited = resolveRef(create['429']);
    assert.equal(resolveRef(limited['headers']['Retry-After'])['required'], true);
    assert.equal(resolveRef(resolveRef(create['401'])['headers']['WWW-Authenticate'])['required'], true);
    const single = doc['paths']['/v1/payments/{id}']['get'];
    assert.ok(single['responses']['200']['headers']['ETag']);
    assert.ok(single['responses']['304']);
  });

  it('has an OpenAPI 3.1 webhooks section with the payload schema of every event type', async () => {
    assert.equal(doc['openapi'], '3.1.0');
    assert.deepEqual(Object.keys(merchant_doc['webhooks']).sort(), Object.keys(EVENT_TYPES).sort());
    const merchant = await t.createMerchant('Webhooks section');
    const simulated = await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, {
      scenario: 'matched_partial_fill',
      amount: 10_000,
      currency: 'THB',
    });
    assert.equal(simulated.statusCode, 201, simulated.body);
    const events = await t.db.selectFrom('events').select('payload').where('merchant_id', '=', merchant.id).execute();
    assert.ok(events.length >= 2);
    const checker = new OpenApiChecker(doc);
    for (const event of events)
      assert.deepEqual(
        checker.checkEvent(typeof event.payload === 'string' ? JSON.parse(event.payload) : event.payload),
        [],
      );
    assert.notDeepEqual(checker.checkEvent({ type: 'payment.completed', id: 'evt_1' }), []);
    assert.notDeepEqual(checker.checkEvent({ type: 'payment.nonexistent' }), []);
  });

  it('the response checker the helpers run on every response catches a disagreement', () => {
    const checker = new OpenApiChecker(doc);
    const json = { 'content-type': 'application/json; charset=utf-8' };
    assert.deepEqual(checker.check('GET', '/healthz', 200, json, '{"status":"ok"}'), []);
    assert.match(checker.check('GET', '/healthz', 200, json, '{"status":"fine"}').join(), /disagrees/);
    assert.match(checker.check('GET', '/healthz', 418, json, '{}').join(), /not documented/);
    assert.match(
      checker
        .check(
          'GET',
          '/v1/payments/00000000-0000-4000-8000-000000000000',
          404,
          json,
          '{"success":false,"error":{"code":"SELL_ORDER_BAD_STATE","message":"x","details":[]}}',
        )
        .join(),
      /disagrees/,
    );
    assert.match(
      checker
        .check(
          'POST',
          '/v1/payments',
          429,
          json,
          '{"success":false,"error":{"code":"RATE_LIMITED","message":"x","details":[]}}',
        )
        .join(),
      /Retry-After missing/,
    );
  });
});
