import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, any>;

const DOCUMENT_ID = 'mpay-openapi';

function pointer(segments: string[]): string {
  return `#/${segments.map((segment) => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;
}

/**
 * Checks responses against the served OpenAPI document: the status must be documented for the operation, the
 * content type must be one it lists, a JSON body must match its schema and the required headers must be there.
 * The test helpers run it on every response, so a response that disagrees with the document fails its test.
 */
export class OpenApiChecker {
  private readonly ajv: Ajv2020;
  private readonly document: Json;
  private readonly operations: { method: string; pattern: RegExp; params: number; path: string }[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(document: Json) {
    this.document = document;
    this.ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateSchema: false }));
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    for (const [path, operations] of Object.entries<Json>(document['paths'] ?? {})) {
      const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      for (const method of Object.keys(operations)) {
        this.operations.push({ method: method.toUpperCase(), pattern, params: (path.match(/\{/g) ?? []).length, path });
      }
    }
  }

  private resolve(value: Json): Json {
    let current = value;
    while (typeof current?.['$ref'] === 'string') {
      const segments = (current['$ref'] as string)
        .replace(/^#\//, '')
        .split('/')
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
      current = segments.reduce<Json>((node, segment) => node?.[segment], this.document);
    }
    return current;
  }

  private validator(segments: string[]): ValidateFunction {
    const key = segments.join('\u0000');
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile({ $ref: DOCUMENT_ID + pointer(segments) });
      this.compiled.set(key, validate);
    }
    return validate;
  }

  /** The problems of one response (empty: it agrees with the document). Routes the document does not show are skipped. */
  check(method: string, url: string, status: number, headers: Record<string, unknown>, body: string): string[] {
    if (method === 'HEAD' || method === 'OPTIONS' || status === 405) return [];
    const path = url.split('?')[0]!;
    const candidates = this.operations
      .filter((operation) => operation.method === method && operation.pattern.test(path))
      .sort((a, b) => a.params - b.params);
    const operation = candidates[0];
    if (!operation) return [];
    const responses: Json = this.document['paths'][operation.path][method.toLowerCase()]['responses'] ?? {};
    const key =
      String(status) in responses
        ? String(status)
        : `${String(status)[0]}XX` in responses
          ? `${String(status)[0]}XX`
          : 'default' in responses
            ? 'default'
            : undefined;
    const where = `${method} ${operation.path} -> ${status}`;
    if (!key)
      return [
        `${where}: status not documented (documented: ${Object.keys(responses).join(', ')}); body: ${body.slice(0, 300)}`,
      ];
    const response = this.resolve(responses[key]);
    const problems: string[] = [];
    for (const [name, header] of Object.entries<Json>(response['headers'] ?? {})) {
      if (this.resolve(header)['required'] && headers[name.toLowerCase()] === undefined)
        problems.push(`${where}: required header ${name} missing`);
    }
    const content: Json | undefined = response['content'];
    if (!content) {
      if (body.length > 0) problems.push(`${where}: the document shows no body, got ${body.slice(0, 200)}`);
      return problems;
    }
    const content_type = String(headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    if (!(content_type in content))
      return [
        ...problems,
        `${where}: content type "${content_type}" not documented (documented: ${Object.keys(content).join(', ')})`,
      ];
    if (content_type !== 'application/json' || !content[content_type]['schema']) return problems;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return [...problems, `${where}: body is not JSON`];
    }
    // Follow a response $ref to the component that holds the schema, so ajv resolves it inside the document.
    const raw = responses[key];
    const segments =
      typeof raw['$ref'] === 'string'
        ? [
            ...(raw['$ref'] as string)
              .replace(/^#\//, '')
              .split('/')
              .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
            'content',
            content_type,
            'schema',
          ]
        : ['paths', operation.path, method.toLowerCase(), 'responses', key, 'content', content_type, 'schema'];
    const validate = this.validator(segments);
    if (!validate(parsed)) {
      problems.push(
        `${where}: body disagrees with the document: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}; body: ${body.slice(0, 400)}`,
      );
    }
    return problems;
  }

  /** The problems of one recorded webhook event against the `webhooks` section. */
  checkEvent(payload: unknown): string[] {
    const type = (payload as { type?: string }).type ?? '';
    const webhook = this.document['webhooks']?.[type];
    if (!webhook) return [`event type "${type}" is not in the document's webhooks section`];
    const validate = this.validator(['webhooks', type, 'post', 'requestBody', 'content', 'application/json', 'schema']);
    return validate(payload)
      ? []
      : [
          `event ${type} disagrees with the document: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}; payload: ${JSON.stringify(payload).slice(0, 400)}`,
        ];
  }
}

/**
 * The served documents as one (their paths, components and tags; the merchant document's webhooks), for checks
 * over every operation: `/openapi.json` has the merchant's, `/openapi-admin.json` the operator's.
 */
export function mergeDocuments(merchant: Json, ...others: Json[]): Json {
  const merged: Json = structuredClone(merchant);
  for (const other of others) {
    for (const [path, item] of Object.entries<Json>(other['paths'] ?? {}))
      merged['paths'][path] = { ...merged['paths'][path], ...item };
    for (const [kind, entries] of Object.entries<Json>(other['components'] ?? {}))
      merged['components'][kind] = { ...merged['components'][kind], ...entries };
    const names = new Set((merged['tags'] ?? []).map((tag: Json) => tag['name']));
    merged['tags'] = [
      ...(merged['tags'] ?? []),
      ...(other['tags'] ?? []).filter((tag: Json) => !names.has(tag['name'])),
    ];
  }
  return merged;
}
