import type { FastifyInstance } from 'fastify';
import { hostileInput } from './http-errors.ts';

/**
 * One sanitiser for every route's parsed input. PostgreSQL text cannot hold NUL (U+0000), and a lone UTF-16
 * surrogate has no UTF-8 form: either reaching the database is an error there (a 500 here). So a string or key that
 * holds one is refused with 400 before validation, wherever it sits in the body, the query or the path.
 */
const MAX_DEPTH = 32;

function offending(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (!value.isWellFormed()) return 'must be well-formed Unicode (no lone surrogates)';
  return undefined;
}

function findBadString(value: unknown, path: string, depth = 0): { field: string; message: string } | undefined {
  if (typeof value === 'string') {
    const message = offending(value);
    return message ? { field: path, message } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (depth > MAX_DEPTH) return { field: path, message: `nests deeper than ${MAX_DEPTH} levels` };
  if (Buffer.isBuffer(value)) return undefined;
  for (const [key, child] of Object.entries(value)) {
    const key_message = offending(key);
    if (key_message) return { field: path, message: `has a key that ${key_message}` };
    const found = findBadString(child, `${path}.${key}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const parts: [string, unknown][] = [
      ['params', request.params],
      ['querystring', request.query],
      ['body', request.body],
    ];
    for (const [part, value] of parts) {
      const found = findBadString(value, part);
      if (found) throw hostileInput(part, found);
    }
  });
}
