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
  const text = addFormats(new Ajv({ ...base, coerceTypes: 'array' }));
  const json = addFormats(new Ajv({ ...base, coerceTypes: false }));
  return ({ schema, httpPart }) => (httpPart === 'body' ? json : text).compile(schema as object) as never;
}
