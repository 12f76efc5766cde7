import type { Json } from './openapi-operations.ts';

/**
 * `x-codeSamples` for every operation: a curl command, and for the merchant document the same call with the
 * typed client (`@mpay/client`). Built from the operation itself (method, path, credential, Idempotency-Key,
 * request example or a body drawn from its schema), so a new route gets its samples without writing them.
 */

const EXAMPLE_ID = '5f0c8a52-6d1e-4f7b-9a3c-2b8e4d6f1a90';

/** The client's method for an operation (clients/typescript/src/resources.ts), and the arguments it takes. */
type Argument = 'id' | 'body' | 'query' | 'file';
const SDK_METHODS: Record<string, [string, ...Argument[]]> = {
  createAccessToken: ['auth.token', 'body'],
  getCurrentMerchant: ['merchants.me'],
  createTrade: ['payments.create', 'body'],
  createPayment: ['payments.createLegacy', 'body'],
  getPayment: ['payments.retrieve', 'id'],
  listPayments: ['payments.list', 'query'],
  cancelPayment: ['payments.cancel', 'id'],
  getPaymentCheckout: ['payments.checkout', 'id'],
  uploadPaymentProof: ['payments.uploadProof', 'id', 'file'],
  getPaymentPromptPayQr: ['payments.promptPayQr', 'id'],
  getTrade: ['trades.retrieve', 'id'],
  createRefund: ['refunds.create', 'id', 'body'],
  getRefund: ['refunds.retrieve', 'id'],
  listRefunds: ['refunds.list', 'query'],
  cancelRefund: ['refunds.cancel', 'id'],
  uploadRefundProof: ['refunds.uploadProof', 'id', 'file'],
  simulateSandboxRefund: ['sandbox.simulateRefund', 'id', 'body'],
  createPaymentLink: ['paymentLinks.create', 'body'],
  getPaymentLink: ['paymentLinks.retrieve', 'id'],
  listPaymentLinks: ['paymentLinks.list', 'query'],
  deactivatePaymentLink: ['paymentLinks.deactivate', 'id'],
  createSellOrder: ['sellOrders.create', 'body'],
  getSellOrder: ['sellOrders.retrieve', 'id'],
  listSellOrders: ['sellOrders.list', 'query'],
  confirmSellOrderCashLeg: ['sellOrders.confirmCashLeg', 'id', 'body'],
  cancelSellOrder: ['sellOrders.cancel', 'id'],
  createBuyOrder: ['buyOrders.create', 'body'],
  getBuyOrder: ['buyOrders.retrieve', 'id'],
  listBuyOrders: ['buyOrders.list', 'query'],
  cancelBuyOrder: ['buyOrders.cancel', 'id'],
  createDispute: ['disputes.create', 'body'],
  getDispute: ['disputes.retrieve', 'id'],
  listDisputes: ['disputes.list', 'query'],
  getMerchantBalance: ['balance.retrieve'],
  createWebhookEndpoint: ['webhookEndpoints.create', 'body'],
  listWebhookEndpoints: ['webhookEndpoints.list'],
  getWebhookEndpointById: ['webhookEndpoints.retrieve', 'id'],
  updateWebhookEndpoint: ['webhookEndpoints.update', 'id', 'body'],
  deleteWebhookEndpoint: ['webhookEndpoints.del', 'id'],
  rotateWebhookEndpointSecret: ['webhookEndpoints.rotateSecret', 'id', 'body'],
  setWebhookEndpoint: ['webhookEndpoints.setDefault', 'body'],
  getWebhookEndpoint: ['webhookEndpoints.retrieveDefault'],
  rotateWebhookSecret: ['webhookEndpoints.rotateDefaultSecret', 'body'],
  listEvents: ['events.list', 'query'],
  listWebhookDeliveries: ['webhookDeliveries.list', 'query'],
  redeliverWebhook: ['webhookDeliveries.redeliver', 'id'],
  recoverWebhookDeliveries: ['webhookDeliveries.recover', 'body'],
  listSettlements: ['settlements.list', 'query'],
  getSettlement: ['settlements.retrieve', 'id'],
  listSettlementPayments: ['settlements.listPayments', 'id', 'query'],
  exportSettlementCsv: ['settlements.exportCsv', 'id'],
  listPendingFunds: ['pendingFunds.list', 'query'],
  getPendingFunds: ['pendingFunds.retrieve', 'id'],
  confirmPendingFunds: ['pendingFunds.confirm', 'id', 'body'],
  listRates: ['rates.retrieve', 'query'],
  getReferencePrice: ['fx.referencePrice', 'query'],
  createQuoteLock: ['fx.createQuoteLock', 'body'],
  getQuoteLock: ['fx.retrieveQuoteLock', 'id'],
  simulateSandboxPayment: ['sandbox.simulatePayment', 'body'],
  triggerSandboxEvent: ['sandbox.triggerEvent', 'body'],
  listThaiBanks: ['reference.thaiBanks'],
  createPromptPayPayload: ['reference.promptPayPayload', 'body'],
};

type Operation = Json & {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: Json[];
  requestBody?: { content?: Record<string, { schema?: Json; example?: unknown }> };
  responses?: Record<string, Json>;
};

function resolver(document: Json): (value: Json | undefined) => Json | undefined {
  return function resolve(value) {
    let current = value;
    for (let depth = 0; typeof current?.['$ref'] === 'string' && depth < 32; depth += 1) {
      const segments = (current['$ref'] as string).replace(/^#\//, '').split('/');
      current = segments.reduce<Json | undefined>(
        (node, segment) => node?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')] as Json | undefined,
        document,
      );
    }
    return current;
  };
}

/** A value a schema accepts, for a sample: its example or default, else one drawn from its type and its field's name. */
function sampleValue(
  schema: Json | undefined,
  name: string,
  resolve: (value: Json | undefined) => Json | undefined,
  depth = 0,
): unknown {
  const resolved = resolve(schema);
  if (!resolved || depth > 6) return null;
  for (const key of ['example', 'default', 'const']) if (resolved[key] !== undefined) return resolved[key];
  if (Array.isArray(resolved['examples']) && resolved['examples'].length > 0) return resolved['examples'][0];
  if (Array.isArray(resolved['enum'])) return resolved['enum'][0];
  const choices = (resolved['anyOf'] ?? resolved['oneOf']) as Json[] | undefined;
  if (choices)
    return sampleValue(
      choices.find((choice) => resolve(choice)?.['type'] !== 'null') ?? choices[0],
      name,
      resolve,
      depth + 1,
    );
  switch (resolved['type']) {
    case 'object': {
      const properties = (resolved['properties'] ?? {}) as Record<string, Json>;
      const required = (resolved['required'] ?? []) as string[];
      return Object.fromEntries(
        required
          .filter((key) => key in properties)
          .map((key) => [key, sampleValue(properties[key], key, resolve, depth + 1)]),
      );
    }
    case 'array':
      return [sampleValue(resolved['items'] as Json | undefined, name, resolve, depth + 1)];
    case 'integer':
    case 'number':
      if (name.endsWith('_micro_pay')) return 10_000_000;
      if (name.includes('amount') || name.endsWith('_minor')) return 35_000;
      return typeof resolved['minimum'] === 'number' ? resolved['minimum'] : 1;
    case 'boolean':
      return false;
    default:
      return sampleString(resolved, name);
  }
}

function sampleString(schema: Json, name: string): string {
  const format = schema['format'];
  const pattern = String(schema['pattern'] ?? '');
  if (format === 'date-time') return '2026-07-01T00:00:00.000Z';
  if (format === 'uuid' || pattern.includes('[0-9a-fA-F]{8}')) return EXAMPLE_ID;
  if (format === 'uri' || pattern.startsWith('^https?') || name.endsWith('url'))
    return 'https://shop.example/webhooks/mpay';
  if (format === 'email') return 'ops@shop.example';
  if (name.includes('base64')) return 'JVBERi0xLjQK';
  if (name === 'currency' || name.endsWith('_currency')) return 'THB';
  if (name === 'notes' || name === 'description' || name === 'reason') return 'Written for the example';
  return 'example';
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

interface Call {
  method: string;
  path: string;
  operation: Operation;
  /** `seller`: a seller's key (`sel_live_…`), sent as X-API-Key like a merchant's. */
  credential: ReturnType<typeof credentialOf> | 'seller';
  path_values: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  /** An upload that also takes JSON: the JSON body, shown beside the multipart call. */
  json_alternative: unknown;
  multipart: string[] | undefined;
  idempotency: boolean;
  response_type: string | undefined;
}

/** The credential an operation takes, from its security requirements (src/http/server.ts names the schemes). */
export function credentialOf(
  security: Record<string, unknown>[] | undefined,
): 'key' | 'merchant' | 'admin' | 'internal' | 'public' {
  const schemes = new Set((security ?? []).flatMap((requirement) => Object.keys(requirement)));
  if (schemes.has('apiKey')) return 'key';
  if (schemes.has('merchantJwt')) return 'merchant';
  if (schemes.has('adminToken')) return 'admin';
  if (schemes.has('internalToken')) return 'internal';
  return 'public';
}

function describeCall(
  method: string,
  path: string,
  operation: Operation,
  resolve: (value: Json | undefined) => Json | undefined,
): Call {
  const parameters = (operation.parameters ?? []).map((parameter) => resolve(parameter) ?? parameter);
  const path_values: Record<string, string> = {};
  const query: Record<string, unknown> = {};
  let idempotency = false;
  for (const parameter of parameters) {
    const name = String(parameter['name']);
    if (parameter['in'] === 'path')
      path_values[name] = path.startsWith('/v1/merchants/{id}')
        ? '$MPAY_MERCHANT_ID'
        : resolve(parameter['schema'] as Json | undefined)?.['type'] === 'integer'
          ? '1'
          : EXAMPLE_ID;
    if (parameter['in'] === 'header' && name.toLowerCase() === 'idempotency-key') idempotency = true;
    if (parameter['in'] === 'query' && (parameter['required'] === true || name === 'limit')) {
      query[name] = name === 'limit' ? 25 : sampleValue(parameter['schema'] as Json, name, resolve);
    }
  }
  const content = operation.requestBody?.content ?? {};
  const json = content['application/json'];
  const form = content['multipart/form-data'];
  const form_schema = resolve(form?.schema);
  const success = Object.entries(operation.responses ?? {}).find(([status]) => status.startsWith('2'))?.[1];
  const response_content = (resolve(success)?.['content'] ?? {}) as Record<string, unknown>;
  const json_body = json ? (json.example ?? sampleValue(json.schema, 'body', resolve)) : undefined;
  const seller = (operation.security ?? []).some((requirement) => 'sellerKey' in requirement);
  return {
    method,
    path,
    operation,
    credential: seller ? 'seller' : credentialOf(operation.security),
    path_values,
    query,
    body: form_schema ? undefined : json_body,
    json_alternative: form_schema ? json_body : undefined,
    multipart: form_schema ? Object.keys((form_schema['properties'] ?? {}) as Json) : undefined,
    idempotency,
    response_type: Object.keys(response_content).find((type) => type !== 'application/json'),
  };
}

function curlSample(call: Call, base_url: string): string {
  const url_path = call.path.replace(/\{(\w+)\}/g, (_match, name: string) => call.path_values[name] ?? EXAMPLE_ID);
  const search = new URLSearchParams(
    Object.entries(call.query).map(([name, value]) => [name, String(value)]),
  ).toString();
  const lines: string[] = [];
  if (call.credential === 'merchant') {
    lines.push(
      "# A merchant JWT in your key's mode (@mpay/client does this for you)",
      `MPAY_TOKEN=$(curl -s -X POST "${base_url}/v1/auth/token" -H "X-API-Key: $MPAY_API_KEY" | jq -r .access_token)`,
    );
    if (call.path.startsWith('/v1/merchants/{id}')) {
      lines.push(
        `MPAY_MERCHANT_ID=$(curl -s "${base_url}/v1/merchants/me" -H "Authorization: Bearer $MPAY_TOKEN" | jq -r .data.merchant_id)`,
      );
    }
  }
  const parts = [`curl -X ${call.method} "${base_url}${url_path}${search ? `?${search}` : ''}"`];
  if (call.credential === 'key') parts.push('-H "X-API-Key: $MPAY_API_KEY"');
  if (call.credential === 'seller') parts.push('-H "X-API-Key: $MPAY_SELLER_KEY"');
  if (call.credential === 'merchant') parts.push('-H "Authorization: Bearer $MPAY_TOKEN"');
  if (call.credential === 'admin')
    parts.push(
      '-H "Authorization: Bearer $ADMIN_SERVICE_TOKEN"',
      '-H "X-Actor-User-Id: ops-1"',
      '-H "X-Actor-Role: super_admin"',
    );
  if (call.credential === 'internal') parts.push('-H "Authorization: Bearer $INTERNAL_SERVICE_TOKEN"');
  if (call.idempotency) parts.push('-H "Idempotency-Key: $(uuidgen)"');
  if (call.body !== undefined)
    parts.push('-H "Content-Type: application/json"', `-d ${shellQuote(JSON.stringify(call.body))}`);
  for (const field of call.multipart ?? []) parts.push(field === 'proof' ? '-F "proof=@slip.jpg"' : `-F "${field}=1"`);
  if (call.response_type?.startsWith('image/')) parts.push('-o qr.png');
  else if (call.response_type === 'text/csv') parts.push('-o settlement.csv');
  lines.push(parts.join(' \\\n  '));
  if (call.json_alternative !== undefined) {
    // The same upload as JSON: the file base64-encoded, with its type.
    const json_parts = parts.filter((part) => !part.startsWith('-F ') && !part.startsWith('-o '));
    json_parts.push('-H "Content-Type: application/json"', `-d ${shellQuote(JSON.stringify(call.json_alternative))}`);
    lines.push('# or as JSON', json_parts.join(' \\\n  '));
  }
  return lines.join('\n');
}

function sdkSample(call: Call, base_url: string): string {
  const id = String(call.operation.operationId);
  const mapped = SDK_METHODS[id];
  const literal = (value: unknown) => JSON.stringify(value, null, 2);
  const head = ["import { Mpay } from '@mpay/client';"];
  let expression: string;
  if (mapped) {
    const [method, ...parameters] = mapped;
    const args = parameters.map((parameter) => {
      if (parameter === 'id') return `'${EXAMPLE_ID}'`;
      if (parameter === 'body') return literal(call.body ?? {});
      if (parameter === 'query') return literal(call.query);
      head.unshift("import { openAsBlob } from 'node:fs';");
      return "await openAsBlob('slip.jpg')";
    });
    expression = `mpay.${method}(${args.join(', ')})`;
  } else {
    const input: Json = {};
    if (Object.keys(call.path_values).length > 0)
      input['path'] = Object.fromEntries(
        Object.entries(call.path_values).map(([name, value]) => [name, value === '1' ? 1 : EXAMPLE_ID]),
      );
    if (Object.keys(call.query).length > 0) input['query'] = call.query;
    if (call.body !== undefined) input['body'] = call.body;
    expression = `mpay.request('${id}', ${literal(input)})`;
  }
  const credential =
    call.credential === 'public'
      ? ''
      : call.credential === 'seller'
        ? "headers: { 'X-API-Key': process.env.MPAY_SELLER_KEY ?? '' }, "
        : 'apiKey: process.env.MPAY_API_KEY, ';
  return [
    ...head,
    '',
    `const mpay = new Mpay({ ${credential}baseUrl: '${base_url}' });`,
    `const result = await ${expression};`,
  ].join('\n');
}

/** Adds `x-codeSamples` (curl, and the typed client where `sdk`) to every operation of a document, in place. */
export function addCodeSamples(document: Json, options: { sdk: boolean }): void {
  const base_url = String((document['servers'] as Json[] | undefined)?.[0]?.['url'] ?? 'http://localhost:3000').replace(
    /\/+$/,
    '',
  );
  const resolve = resolver(document);
  for (const [path, item] of Object.entries(document['paths'] as Record<string, Record<string, Operation>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const call = describeCall(method.toUpperCase(), path, operation, resolve);
      const samples = [{ lang: 'Shell', label: 'curl', source: curlSample(call, base_url) }];
      if (options.sdk) samples.push({ lang: 'TypeScript', label: '@mpay/client', source: sdkSample(call, base_url) });
      operation['x-codeSamples'] = samples;
    }
  }
}
