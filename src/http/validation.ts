import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Two validators: query strings, params and headers are text, so their numbers and booleans are coerced; JSON
 * bodies are not coerced at all, so `"100.00"` stays a string and `100.5` is not silently truncated.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const base: Options = { removeAdditional: false, useDefaults: true, allErrors: false, strict: false };
  const text = withStoreableDates(addFormats(new Ajv({ ...base, coerceTypes: 'array' })));
  const json = withStoreableDates(addFormats(new Ajv({ ...base, coerceTypes: false })));
  return ({ schema, httpPart }) => (httpPart === 'body' ? json : text).compile(schema as object) as never;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * `date-time` as RFC 3339 that a JavaScript Date and a PostgreSQL timestamptz both hold: ajv-formats accepts year 0000
 * and leap seconds (`23:59:60`), which become an Invalid Date or an out-of-range error in the database.
 */
function withStoreableDates(ajv: Ajv): Ajv {
  return ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => {
      if (!RFC3339.test(value)) return false;
      const ms = Date.parse(value);
      return Number.isFinite(ms) && ms >= Date.UTC(1, 0, 1) && ms < Date.UTC(10_000, 0, 1);
    },
  });
}
