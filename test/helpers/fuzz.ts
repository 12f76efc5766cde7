import fc from 'fast-check';

/**
 * Generators for the schema-driven fuzz test: from an OpenAPI operation, request parts that are sometimes valid and
 * often hostile (wrong types, out-of-bounds numbers, NUL, lone surrogates, huge strings, forged cursors, broken
 * multipart bodies and content types).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type OpenApiSchema = Record<string, unknown>;

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Cursors shaped like ours (base64url JSON `[created_at, id]`) with ids and dates no database column accepts. */
export const BAD_CURSORS = [
  base64url(['2026-01-01T00:00:00.000Z', 'not-a-uuid']),
  base64url(['2026-01-01T00:00:00.000Z', "x' or 1=1 --"]),
  base64url(['2026-01-01T00:00:00.000Z', 'a\u0000b']),
  base64url(['2026-01-01T00:00:00.000Z', 123]),
  base64url(['-271821-04-20T00:00:00.000Z', '00000000-0000-4000-8000-000000000000']),
  base64url(['+275760-09-13T00:00:00.000Z', '00000000-0000-4000-8000-000000000000']),
  base64url(['0000-01-01T00:00:00.000Z', '00000000-0000-4000-8000-000000000000']),
  base64url([0, '00000000-0000-4000-8000-000000000000']),
  base64url({ created_at: '2026-01-01', id: 'x' }),
  base64url(['2026-01-01T00:00:00.000Z', '99999999999999999999']),
  'not base64 at all!',
  '%%%',
];

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFFy',
  '\uDBFF\uDBFF',
  '\u202Eevil',
  '💸🇹🇭',
  'ไทย',
  "'; drop table payments; --",
  '../../etc/passwd',
  '%00',
  '%E0%A4%A',
  '-1',
  '0',
  '1e309',
  '99999999999999999999999999',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  '2026-13-45T25:61:61Z',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:60Z',
  'x'.repeat(70_000),
  '9'.repeat(400),
  ...BAD_CURSORS,
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
);

export const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.integer() },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Json>(
      2 ** 53,
      -(2 ** 53) - 2,
      1e308,
      -1e308,
      0.5,
      -0,
      1e-7,
      Number.MAX_SAFE_INTEGER,
      -1,
      0,
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom<Json>(true, false, null, [], {}, [null], { '\u0000': 'x' }) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 3 }) },
);

/** Resolves `$ref: '#/components/schemas/X'` (and the plain `X` ids @fastify/swagger emits for shared schemas). */
export function resolver(document: OpenApiSchema): (schema: OpenApiSchema | undefined) => OpenApiSchema | undefined {
  const schemas = ((document['components'] as OpenApiSchema | undefined)?.['schemas'] ?? {}) as Record<
    string,
    OpenApiSchema
  >;
  const resolve = (schema: OpenApiSchema | undefined, depth = 0): OpenApiSchema | undefined => {
    if (!schema || depth > 8) return schema;
    const ref = schema['$ref'];
    if (typeof ref !== 'string') return schema;
    return resolve(schemas[ref.replace(/^#\/components\/schemas\//, '')], depth + 1);
  };
  return resolve;
}

/** A plausible value for a schema (so that some requests get past validation), or a hostile one. */
export function valueFor(
  schema: OpenApiSchema | undefined,
  resolve: (s: OpenApiSchema | undefined) => OpenApiSchema | undefined,
  depth = 0,
): fc.Arbitrary<Json> {
  const s = resolve(schema);
  if (!s || depth > 4) return hostileValue;
  const variants = (s['anyOf'] ?? s['oneOf']) as OpenApiSchema[] | undefined;
  if (variants?.length) return fc.oneof(...variants.map((variant) => valueFor(variant, resolve, depth + 1)));
  if (Array.isArray(s['enum']) && s['enum'].length) return fc.constantFrom(...(s['enum'] as Json[]));
  if ('const' in s) return fc.constant(s['const'] as Json);
  switch (s['type']) {
    case 'string': {
      const format = s['format'];
      if (format === 'uuid') return fc.uuid().map((v) => v as Json);
      if (format === 'date-time')
        return fc
          .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString());
      if (format === 'uri') return fc.constantFrom('https://shop.example/return', 'http://localhost:1/x');
      if (typeof s['pattern'] === 'string') {
        try {
          return fc
            .stringMatching(new RegExp(s['pattern'] as string))
            .filter((v) => v.length <= Number(s['maxLength'] ?? 255));
        } catch {
          return hostileString;
        }
      }
      return fc.string({
        minLength: Number(s['minLength'] ?? 0),
        maxLength: Math.min(Number(s['maxLength'] ?? 40), 40),
      });
    }
    case 'integer':
      return fc.integer({
        min: Math.max(Number(s['minimum'] ?? -1_000_000), -(2 ** 31)),
        max: Math.min(Number(s['maximum'] ?? 1_000_000_000), 2 ** 31),
      });
    case 'number':
      return fc.double({
        min: Number(s['minimum'] ?? -1e6),
        max: Number(s['maximum'] ?? 1e9),
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valueFor(s['items'] as OpenApiSchema, resolve, depth + 1), { maxLength: 3 });
    case 'object': {
      const properties = (s['properties'] ?? {}) as Record<string, OpenApiSchema>;
      const required = (s['required'] ?? []) as string[];
      const record: Record<string, fc.Arbitrary<Json>> = {};
      for (const [name, property] of Object.entries(properties)) record[name] = field(property, resolve, depth + 1);
      const known = fc.record(record, { requiredKeys: required.filter((name) => name in record) }) as fc.Arbitrary<
        Record<string, Json>
      >;
      const extra = fc.dictionary(
        fc.constantFrom('merchant_id', 'is_sandbox', 'id', 'status', '__proto__', 'constructor', '\u0000', 'x'),
        hostileValue,
        { maxKeys: 2 },
      );
      return fc.tuple(known, fc.option(extra, { freq: 4 })).map(([body, more]) => (more ? { ...more, ...body } : body));
    }
    default:
      return hostileValue;
  }
}

/** A field is usually plausible, sometimes hostile. */
export function field(
  schema: OpenApiSchema | undefined,
  resolve: (s: OpenApiSchema | undefined) => OpenApiSchema | undefined,
  depth = 0,
): fc.Arbitrary<Json> {
  return fc.oneof({ weight: 3, arbitrary: valueFor(schema, resolve, depth) }, { weight: 2, arbitrary: hostileValue });
}

/**
 * Percent-encodes any JavaScript string, lone surrogates included (as the WTF-8 bytes `encodeURIComponent` refuses),
 * so that a hostile string reaches the server's query and path decoders unchanged.
 */
export function percentEncode(value: string): string {
  let out = '';
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
        .join('');
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}

export function queryString(query: Record<string, Json>): string {
  const parts = Object.entries(query).map(
    ([key, value]) =>
      `${percentEncode(key)}=${percentEncode(typeof value === 'string' ? value : JSON.stringify(value))}`,
  );
  return parts.length ? `?${parts.join('&')}` : '';
}

const PNG_HEADER = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');

/** Bodies and content types a careless or hostile client sends instead of (or as) the JSON the route expects. */
export const brokenBodies: fc.Arbitrary<{ payload: string | Buffer; content_type: string }> = fc.constantFrom(
  { payload: '{"order_id":', content_type: 'application/json' },
  { payload: '', content_type: 'application/json' },
  { payload: 'null', content_type: 'application/json' },
  { payload: '[]', content_type: 'application/json' },
  { payload: '"\\u0000"', content_type: 'application/json' },
  { payload: '{"a":"\\ud800"}', content_type: 'application/json' },
  { payload: '{"__proto__":{"admin":true}}', content_type: 'application/json' },
  { payload: '{"a":1}', content_type: 'application/json; charset=utf-16' },
  { payload: 'hello', content_type: 'text/plain' },
  { payload: 'a=b&c=%00', content_type: 'application/x-www-form-urlencoded' },
  { payload: 'garbage', content_type: 'multipart/form-data' },
  { payload: 'garbage', content_type: 'multipart/form-data; boundary=' },
  {
    payload: Buffer.concat([
      Buffer.from(
        '--X\r\nContent-Disposition: form-data; name="proof"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n',
      ),
      PNG_HEADER,
    ]),
    content_type: 'multipart/form-data; boundary=X',
  },
  {
    payload: '--X\r\nContent-Disposition: form-data; name="proof"\r\n\r\nno file here\r\n--X--\r\n',
    content_type: 'multipart/form-data; boundary=X',
  },
  { payload: '--X\r\nbroken header line\r\n\r\nbody\r\n--X--\r\n', content_type: 'multipart/form-data; boundary=X' },
  { payload: '--Y\r\n\r\n', content_type: 'multipart/form-data; boundary=X' },
  { payload: Buffer.from([0xff, 0xfe, 0x00, 0x00]), content_type: 'application/octet-stream' },
);

/** A well-formed multipart body with one `proof` file (sometimes a PNG header, sometimes random bytes). */
export const multipartProof: fc.Arbitrary<{ payload: Buffer; content_type: string }> = fc
  .tuple(fc.boolean(), fc.uint8Array({ maxLength: 64 }), fc.constantFrom('proof', 'file', '\u0000'))
  .map(([png, bytes, name]) => {
    const boundary = 'fuzzboundary42';
    const payload = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="slip.png"\r\nContent-Type: image/png\r\n\r\n`,
      ),
      png ? PNG_HEADER : Buffer.alloc(0),
      Buffer.from(bytes),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    return { payload, content_type: `multipart/form-data; boundary=${boundary}` };
  });

/** Method and path of every route in Fastify's `printRoutes({ commonPrefix: false })` tree. */
export function routesOf(printed: string): { method: string; path: string }[] {
  const routes: { method: string; path: string }[] = [];
  const stack: string[] = [];
  for (const line of printed.split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(match[2] ?? '');
    for (const method of (match[3] ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean))
      routes.push({ method, path: stack.join('') });
  }
  return routes;
}
