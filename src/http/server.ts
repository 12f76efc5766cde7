import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Registry } from 'prom-client';
import { Type, type TSchema } from 'typebox';
import type { Config } from '../config.ts';
import { installAuth } from './auth.ts';
import { ErrorBody, installErrorHandler } from './errors.ts';
import { installHttpMetrics } from './metrics.ts';
import { createValidatorCompiler } from './validation.ts';
import type { Authenticator, AuthKind } from './principal.ts';
import type { RateLimiter } from './rate-limit.ts';

export type App = FastifyInstance;

export interface ServerDeps {
  config: Pick<Config, 'log_level' | 'public_base_url'>;
  authenticator: Authenticator;
  limiter: RateLimiter;
  metrics: Registry;
  /** Database reachability for /readyz; extra checks add named details. */
  readiness: () => Promise<Record<string, { ok: boolean; detail?: string }>>;
  /** Schemas with an `$id`, shared by reference in responses (registered at the root: a child's addSchema would drop the custom validator). */
  shared_schemas: TSchema[];
  routes: (app: App) => Promise<void>;
}

const SECURITY: Record<AuthKind, Record<string, string[]>[] | undefined> = {
  key: [{ apiKey: [] }, { apiKeyBearer: [] }],
  merchant: [{ merchantJwt: [] }, { dashboardSession: [] }],
  admin: [{ adminToken: [] }],
  internal: [{ internalToken: [] }],
  public: [],
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Validation error',
  401: 'Missing or invalid credential (UNAUTHORIZED)',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict or bad state',
  413: 'Payload too large',
  429: 'Rate limited (RATE_LIMITED, with Retry-After)',
  500: 'Internal error',
  502: 'A dependency (the ledger) is unavailable',
};

function errorsFor(auth: AuthKind, route_errors: number[]): number[] {
  const statuses = new Set([400, 429, 500, ...route_errors]);
  if (auth !== 'public') statuses.add(401);
  if (auth === 'admin') statuses.add(403);
  return [...statuses].sort();
}

export async function createServer(deps: ServerDeps): Promise<App> {
  const app = Fastify({
    logger: {
      level: deps.config.log_level,
      redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'res.headers["set-cookie"]'],
    },
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    bodyLimit: 1024 * 1024,
    trustProxy: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onRequest', async (request, reply) => {
    const incoming = request.headers['x-request-id'];
    // Echo a caller's id only when it is short and plain; otherwise ours.
    if (typeof incoming === 'string' && !/^[\w.:-]{1,128}$/.test(incoming)) request.id = randomUUID();
    reply.header('X-Request-Id', request.id);
  });

  app.setValidatorCompiler(createValidatorCompiler());
  app.addSchema(ErrorBody);
  for (const schema of deps.shared_schemas) app.addSchema(schema);
  installErrorHandler(app);

  // Every route states its credential in `config.auth`; this fills in its OpenAPI security and error responses.
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!auth || route.url.startsWith('/docs')) return;
    const schema = (route.schema ??= {}) as Record<string, unknown>;
    const declared = route.config?.errors ?? [];
    schema['security'] = SECURITY[auth];
    const response = (schema['response'] ??= {}) as Record<string, unknown>;
    for (const status of errorsFor(auth, declared)) {
      response[status] ??= { ...Type.Ref('ErrorBody'), description: ERROR_DESCRIPTIONS[status] ?? 'Error' };
    }
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Merchant Payments Service API',
        version: '1.0.0',
        description: 'Payments, PAY balance, payouts, disputes, settlements and signed webhooks. Errors: `{success: false, error: {code, message, details}}`.',
      },
      servers: [{ url: deps.config.public_base_url }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'svc_live_…, svc_test_… or svc_sandbox_…' },
          apiKeyBearer: { type: 'http', scheme: 'bearer', description: 'The same API key as `Authorization: Bearer <key>`' },
          merchantJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Merchant JWT (HS256)' },
          dashboardSession: { type: 'apiKey', in: 'cookie', name: 'mpay_session' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_SERVICE_TOKEN plus X-Actor-User-Id and X-Actor-Role: super_admin' },
          internalToken: { type: 'http', scheme: 'bearer', description: 'INTERNAL_SERVICE_TOKEN' },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const files = route.config?.multipart_body;
      if (!files) return { schema, url };
      const properties = Object.fromEntries(Object.entries(files).map(([name, description]) => [name, { type: 'string', format: 'binary', description }]));
      return { schema: { ...schema, consumes: ['multipart/form-data'], body: { type: 'object', required: Object.keys(files), properties } } as typeof schema, url };
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });

  installAuth(app, deps.authenticator, deps.limiter);
  installHttpMetrics(app, deps.metrics);

  app.get('/openapi.json', { schema: { hide: true }, config: { rate_limit: false } }, async () => app.swagger());

  app.get('/healthz', { schema: { tags: ['ops'], summary: 'Liveness' }, config: { rate_limit: false } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { tags: ['ops'], summary: 'Readiness: the database answers' }, config: { rate_limit: false } }, async (_request, reply) => {
    let checks: Record<string, { ok: boolean; detail?: string }>;
    try {
      checks = await deps.readiness();
    } catch (error) {
      checks = { database: { ok: false, detail: (error as Error).message } };
    }
    // Every check counts: a job that cannot run (the matcher without a mint source) makes the process not ready.
    const ready = checks['database']?.ok === true && Object.values(checks).every((check) => check.ok);
    reply.status(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'unavailable', checks };
  });

  app.get('/metrics', { schema: { hide: true }, config: { rate_limit: false } }, async (_request, reply) => {
    reply.header('Content-Type', deps.metrics.contentType);
    return deps.metrics.metrics();
  });

  await deps.routes(app);
  return app;
}
