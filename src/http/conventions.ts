import { hash } from 'node:crypto';
import compress from '@fastify/compress';
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthKind } from './principal.ts';

/**
 * HTTP conventions clients rely on, in one place: CORS, compression of large bodies, `WWW-Authenticate` on 401,
 * `ETag` with `If-None-Match` -> 304 on single-resource GETs, and the route table behind 405 + `Allow`.
 */

/** Bodies below this stay uncompressed: the CPU costs more than the bytes save. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

const CHALLENGES: Record<Exclude<AuthKind, 'public'>, string> = {
  key: 'Bearer realm="mpay", ApiKey realm="mpay", header="X-API-Key"',
  merchant: 'Bearer realm="mpay-merchant"',
  key_or_merchant: 'Bearer realm="mpay", ApiKey realm="mpay", header="X-API-Key"',
  seller: 'Bearer realm="mpay-seller", ApiKey realm="mpay-seller", header="X-API-Key"',
  admin: 'Bearer realm="mpay-admin"',
  internal: 'Bearer realm="mpay-internal"',
};

/** The challenge a 401 carries for a route's credential (RFC 9110 section 11.6.1). */
export function wwwAuthenticate(auth: AuthKind | undefined): string | undefined {
  return auth && auth !== 'public' ? CHALLENGES[auth] : undefined;
}

/** Single-resource GETs: the last path segment names the resource (`/v1/payments/:id`). */
export function hasEntityTag(method: string, url: string): boolean {
  return method === 'GET' && /\/:[^/]+$/.test(url);
}

function entityTag(payload: string | Buffer): string {
  return `W/"${hash('sha256', payload, 'base64url').slice(0, 27)}"`;
}

function matchesIfNoneMatch(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = tag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === bare);
}

/** Paths and methods of every route, for 405 Method Not Allowed with `Allow` (Fastify itself answers 404). */
export class RouteTable {
  private readonly routes: { pattern: RegExp; method: string }[] = [];

  add(url: string, methods: string[]): void {
    if (url === '*' || url === '/*') return;
    const pattern = new RegExp(
      '^' +
        url
          .split('/')
          .map((segment) =>
            segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/') +
        '/?$',
    );
    for (const method of methods) this.routes.push({ pattern, method });
  }

  /** The methods a concrete path accepts (empty: the path is unknown). */
  allowed(path: string): string[] {
    const methods = new Set(this.routes.filter((route) => route.pattern.test(path)).map((route) => route.method));
    if (methods.has('GET')) methods.add('HEAD');
    methods.delete('OPTIONS');
    return [...methods].sort();
  }
}

export interface ConventionsOptions {
  cors_allowed_origins: readonly string[];
}

/** Registers CORS, compression, ETags and the 401 challenge; returns the route table the not-found handler asks. */
export async function installConventions(app: FastifyInstance, options: ConventionsOptions): Promise<RouteTable> {
  const table = new RouteTable();
  app.addHook('onRoute', (route) => table.add(route.url, Array.isArray(route.method) ? route.method : [route.method]));

  const any_origin = options.cors_allowed_origins.includes('*');
  await app.register(cors, {
    origin: any_origin ? true : [...options.cors_allowed_origins],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [
      'Authorization',
      'X-API-Key',
      'Content-Type',
      'Idempotency-Key',
      'If-None-Match',
      'X-Request-Id',
      'X-Actor-User-Id',
      'X-Actor-Role',
    ],
    exposedHeaders: [
      'X-Request-Id',
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
      'Idempotent-Replayed',
      'ETag',
      'Deprecation',
      'Sunset',
      'Link',
      'WWW-Authenticate',
      'Allow',
    ],
    maxAge: 600,
  });

  // Before compression (hooks run in order): the tag names the representation, not its encoding.
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode === 401) {
      const challenge = wwwAuthenticate(request.routeOptions.config.auth);
      if (challenge && !reply.hasHeader('www-authenticate')) reply.header('WWW-Authenticate', challenge);
      return payload;
    }
    if (
      reply.statusCode !== 200 ||
      request.method !== 'GET' ||
      !hasEntityTag(request.method, request.routeOptions.url ?? '')
    )
      return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const tag = entityTag(payload);
    reply.header('ETag', tag);
    if (!matchesIfNoneMatch(request.headers['if-none-match'], tag)) return payload;
    reply.code(304);
    reply.removeHeader('content-length');
    reply.removeHeader('content-type');
    return '';
  });

  await app.register(compress, {
    global: true,
    threshold: COMPRESSION_THRESHOLD_BYTES,
    encodings: ['br', 'gzip'],
    // Event streams must flush as they go; images are compressed already.
    customTypes: (type: string) =>
      !/^(text\/event-stream|image\/)/.test(type) && /^(application\/(json|javascript)|text\/)/.test(type),
  });
  return table;
}
