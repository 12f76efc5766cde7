import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { constantTimeEqual, sha256Hex } from '../lib/crypto.ts';
import { errorBody } from './errors.ts';

/** One registry per server, so several apps in one test process do not collide. */
export function createMetrics(): { registry: Registry } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return { registry };
}

export function installHttpMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status_code: String(reply.statusCode),
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });
}

/** `GET /metrics` may be read with this `Authorization` header: always without METRICS_TOKEN, else only with its bearer. */
export function metricsReadAllowed(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  return presented !== undefined && constantTimeEqual(sha256Hex(presented), sha256Hex(token));
}

export const METRICS_UNAUTHORIZED = errorBody(
  'UNAUTHORIZED',
  'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>',
);

/**
 * The HTTP server of a process that serves no API (`ROLES=worker`), on METRICS_PORT: `GET /metrics` under the same
 * token rule as the API's, so its jobs' counters can be scraped, and `GET /healthz`. Nothing else is served.
 */
export async function startMetricsServer(options: {
  port: number;
  host: string;
  token: string | undefined;
  registry: Registry;
}): Promise<{ address: AddressInfo; close: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers }).end(body);
    };
    const json = (status: number, body: unknown, headers?: Record<string, string>) =>
      send(status, 'application/json; charset=utf-8', JSON.stringify(body), headers);
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return json(405, errorBody('METHOD_NOT_ALLOWED', 'Only GET is served here'), { allow: 'GET, HEAD' });
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path !== '/metrics') return json(404, errorBody('NOT_FOUND', 'Only /metrics and /healthz are served here'));
    if (!metricsReadAllowed(request.headers.authorization, options.token))
      return json(401, METRICS_UNAUTHORIZED, { 'www-authenticate': 'Bearer' });
    options.registry.metrics().then(
      (text) => send(200, options.registry.contentType, text),
      () => json(500, errorBody('INTERNAL', 'The metrics could not be collected')),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // a scraper's idle keep-alive connection would otherwise hold the process open until it times out
        server.closeIdleConnections();
      }),
  };
}
