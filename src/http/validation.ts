import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { present } from '../lib/assert.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Two validators: query strings, params and headers are text, so their numbers and booleans are coerced; JSON
 * bodies are not coerced at all, so `"100.00"` stays a string and `100.5` is not silently truncated.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const base: Options = { removeAdditional: false, useDefaults: true, allErrors: true, strict: false };
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

export interface ValidationIssue {
  keyword: string;
  instancePath: string;
  schemaPath?: string;
  params: Record<string, unknown>;
  message?: string | undefined;
}

export interface FieldProblem {
  field: string;
  message: string;
  allowed?: unknown[];
}

/**
 * Turns ajv's issues (allErrors) into one problem per failing field: a union of constants or an enum becomes one
 * "must be one of ..." with the allowed values (ajv reports each branch of the union on its own), a missing or
 * unknown property names the property itself.
 */
export function formatValidationIssues(issues: readonly ValidationIssue[], context: string): FieldProblem[] {
  const by_field = new Map<string, { allowed: unknown[]; messages: string[] }>();
  const entry = (field: string) => {
    let found = by_field.get(field);
    if (!found) by_field.set(field, (found = { allowed: [], messages: [] }));
    return found;
  };
  const fieldOf = (path: string) => `${context}${path.replace(/\//g, '.')}`;
  for (const issue of issues) {
    const field = fieldOf(issue.instancePath);
    switch (issue.keyword) {
      case 'const':
        entry(field).allowed.push(issue.params['allowedValue']);
        break;
      case 'enum':
        entry(field).allowed.push(...((issue.params['allowedValues'] as unknown[] | undefined) ?? []));
        break;
      case 'required':
        entry(`${field}.${String(issue.params['missingProperty'])}`).messages.push('is required');
        break;
      case 'additionalProperties':
        entry(`${field}.${String(issue.params['additionalProperty'])}`).messages.push('is not allowed');
        break;
      case 'anyOf':
      case 'oneOf':
        // The union's own summary: kept only when no branch said something more useful (see below).
        entry(field).messages.push(`\u0000${issue.message ?? 'is invalid'}`);
        break;
      default:
        entry(field).messages.push(issue.message ?? 'is invalid');
    }
  }
  const problems: FieldProblem[] = [];
  for (const [field, { allowed, messages }] of by_field) {
    const distinct = [...new Set(allowed)];
    const specific = [...new Set(messages.filter((message) => !message.startsWith('\u0000')))];
    const name = field.replace(/^\w+\.?/, '') || field;
    if (distinct.length > 0)
      problems.push({
        field,
        message: `${name} must be one of ${distinct.map((value) => JSON.stringify(value)).join(', ')}`,
        allowed: distinct,
      });
    else if (specific.length > 0) problems.push({ field, message: `${name} ${specific.join('; ')}` });
    else problems.push({ field, message: `${name} ${present(messages[0], 'a failed rule has a message').slice(1)}` });
  }
  return problems;
}
