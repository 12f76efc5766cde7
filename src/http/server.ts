import type { AuthCounters } from './auth-counters.ts';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import type { Registry } from 'prom-client';
import { Type, type TSchema } from 'typebox';
import type { Config } from '../config.ts';
import { listeningPorts } from '../lib/listening.ts';
import { installAuth } from './auth.ts';
import { errorBody, installErrorHandler } from './errors.ts';
import { installInputGuard } from './input-guard.ts';
import { installHttpMetrics, METRICS_UNAUTHORIZED, metricsReadAllowed } from './metrics.ts';
import { installUploadGate, type UploadGateOptions } from './upload-gate.ts';
import { createValidatorCompiler } from './validation.ts';
import { collectRouteDocs, decorateDocument } from './openapi.ts';
import type { Json } from './openapi-operations.ts';
import { addCodeSamples } from './openapi-samples.ts';
import { splitDocument, type SplitDocuments } from './openapi-split.ts';
import { GuideLibrary, REPOSITORY_ROOT } from './guides.ts';
import { guideLinks, installReference } from './reference.ts';
import { installConventions } from './conventions.ts';
import type { Authenticator, AuthKind } from './principal.ts';
import type { RateLimiter } from './rate-limit.ts';

export type App = FastifyInstance;

export interface ServerDeps {
  config: Pick<Config, 'log_level' | 'public_base_url' | 'cors_allowed_origins'> &
    Partial<
      Pick<
        Config,
        | 'rate_limit_failed_auth_per_second'
        | 'trust_proxy'
        | 'metrics_token'
        | 'http_headers_timeout_ms'
        | 'http_request_timeout_ms'
        | 'http_keep_alive_timeout_ms'
      >
    >;
  authenticator: Authenticator;
  limiter: RateLimiter;
  /** Failed-authentication counters shared by the api processes (auth-counters.ts); this process's memory without. */
  auth_counters?: AuthCounters;
  metrics: Registry;
  /** Database reachability for /readyz; extra checks add named details. */
  readiness: () => Promise<Record<string, { ok: boolean; detail?: string }>>;
  /** Schemas with an `$id`, shared by reference in responses (registered at the root: a child's addSchema would drop the custom validator). */
  shared_schemas: TSchema[];
  routes: (app: App) => Promise<void>;
  /** Uploads refused from their headers (upload-gate.ts); without it, only the body parsers' own limits apply. */
  upload?: Omit<UploadGateOptions, 'authenticator'>;
  /** Named schemas and the `webhooks` section the OpenAPI document adds (openapi.ts). */
  document?: { schemas: Record<string, TSchema>; webhooks: Record<string, unknown> };
}

/** /readyz answers within this (a load balancer's probe typically times out after 2 s). */
const READINESS_TIMEOUT_MS = 1_500;

const SECURITY: Record<AuthKind, Record<string, string[]>[] | undefined> = {
  key: [{ apiKey: [] }, { apiKeyBearer: [] }],
  merchant: [{ merchantJwt: [] }, { dashboardSession: [] }],
  key_or_merchant: [{ apiKey: [] }, { apiKeyBearer: [] }, { merchantJwt: [] }, { dashboardSession: [] }],
  seller: [{ sellerKey: [] }, { sellerKeyBearer: [] }],
  admin: [{ adminToken: [] }],
  internal: [{ internalToken: [] }],
  public: [],
};

const MERCHANT_INFO = {
  title: 'Merchant Payments Service API',
  version: '1.0.0',
  description:
    'Payments, PAY balance, payouts, disputes, settlements and signed webhooks. Errors: `{success: false, error: {code, message, details}}`.',
  license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
};

/**
 * The merchant document (`/openapi.json`) and the operator's (`/openapi-admin.json`), cut from the one the routes
 * build, each with code samples on every operation and links to the guides.
 */
function servedDocuments(full: Json, library: GuideLibrary): SplitDocuments {
  const guides = guideLinks(library);
  const documents = splitDocument(structuredClone(full), {
    merchant: {
      ...MERCHANT_INFO,
      description: [
        MERCHANT_INFO.description,
        'Every operation has a curl sample and one with the typed client `@mpay/client` (`clients/typescript`).',
        'Admin and internal operations are in their own document: [/openapi-admin.json](/openapi-admin.json) ([reference](/docs/admin)).',
        ...(guides ? ['## Guides', guides] : []),
      ].join('\n\n'),
    },
    operator: {
      ...MERCHANT_INFO,
      title: 'Merchant Payments Service API: operator (admin and internal)',
      description: [
        "The operator's routes: `/admin/*` (`ADMIN_SERVICE_TOKEN` with `X-Actor-User-Id` and `X-Actor-Role: super_admin`), `/internal/*` (`INTERNAL_SERVICE_TOKEN`) and the probes. The merchant API is [/openapi.json](/openapi.json) ([reference](/docs)).",
        ...(guides ? ['## Guides', guides] : []),
      ].join('\n\n'),
    },
  });
  addCodeSamples(documents.merchant, { sdk: true });
  addCodeSamples(documents.operator, { sdk: false });
  return documents;
}

export async function createServer(deps: ServerDeps): Promise<App> {
  const app = Fastify({
    logger: {
      level: deps.config.log_level,
      redact: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
      ],
    },
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    bodyLimit: 1024 * 1024,
    // X-Forwarded-For is believed only from the proxies TRUST_PROXY names (addresses, CIDR ranges, `loopback`).
    trustProxy: deps.config.trust_proxy ? deps.config.trust_proxy.join(',') : false,
    // Slow clients are cut off: headers, then the whole request (body included), then an idle keep-alive socket.
    // (Node checks them every connectionsCheckingInterval: once a second, not its default 30 s)
    http: { headersTimeout: deps.config.http_headers_timeout_ms ?? 10_000, connectionsCheckingInterval: 1_000 },
    requestTimeout: deps.config.http_request_timeout_ms ?? 30_000,
    keepAliveTimeout: deps.config.http_keep_alive_timeout_ms ?? 60_000,
    // A path that is not valid percent-encoding or is too long is refused before routing: still the error envelope.
    frameworkErrors: (error, request, framework_reply) => {
      const reply = framework_reply as unknown as FastifyReply;
      reply.header('X-Request-Id', request.id);
      const status = error.code === 'FST_ERR_ASYNC_CONSTRAINT' ? 500 : 400;
      void reply
        .status(status)
        .send(
          status === 400
            ? errorBody('VALIDATION_ERROR', 'The request URL is not valid (bad percent-encoding or too long)')
            : errorBody('INTERNAL', 'Internal server error'),
        );
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  let listening_port: number | undefined;
  app.addHook('onRequest', async (request, reply) => {
    const incoming = request.headers['x-request-id'];
    // Echo a caller's id only when it is short and plain; otherwise ours.
    if (typeof incoming === 'string' && !/^[\w.:-]{1,128}$/.test(incoming)) request.id = randomUUID();
    reply.header('X-Request-Id', request.id);
  });

  // The ports this process listens on are never a webhook target (lib/listening.ts).
  app.addHook('onListen', async () => {
    const address = app.server.address();
    if (address && typeof address === 'object') listening_port = address.port;
    if (listening_port !== undefined) listeningPorts.add(listening_port);
  });
  app.addHook('onClose', async () => {
    if (listening_port !== undefined) listeningPorts.delete(listening_port);
  });

  app.setValidatorCompiler(createValidatorCompiler());
  const route_table = await installConventions(app, { cors_allowed_origins: deps.config.cors_allowed_origins });
  for (const schema of deps.shared_schemas) app.addSchema(schema);
  installErrorHandler(app, { allowedMethods: (path) => route_table.allowed(path) });
  installInputGuard(app);

  // Every route states its credential in `config.auth`; this fills in its OpenAPI security (the rest of the document: openapi.ts).
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!auth || route.url.startsWith('/docs')) return;
    const schema = (route.schema ??= {}) as Record<string, unknown>;
    // Unknown query parameters are refused (400), so no handler can spread them into a query. Pages for humans
    // (hosted checkout, dashboard) keep ignoring them: a buyer's link may carry tracking parameters.
    const querystring = schema['querystring'] as Record<string, unknown> | undefined;
    const human_page = /^\/(checkout|dashboard)(\/|$)/.test(route.url);
    if (
      !human_page &&
      querystring &&
      querystring['type'] === 'object' &&
      querystring['additionalProperties'] === undefined
    ) {
      schema['querystring'] = { ...querystring, additionalProperties: false };
    }
    schema['security'] = SECURITY[auth];
  });
  const route_docs = collectRouteDocs(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: MERCHANT_INFO,
      servers: [{ url: deps.config.public_base_url }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description: 'svc_live_…, svc_test_… or svc_sandbox_…',
          },
          apiKeyBearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'The same API key as `Authorization: Bearer <key>`',
          },
          sellerKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description: "A seller's own key, sel_live_… (the seller routes only)",
          },
          sellerKeyBearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'The same seller key as `Authorization: Bearer <key>`',
          },
          merchantJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Merchant JWT (HS256)' },
          dashboardSession: { type: 'apiKey', in: 'cookie', name: 'mpay_session' },
          adminToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'ADMIN_SERVICE_TOKEN plus X-Actor-User-Id and X-Actor-Role: super_admin',
          },
          internalToken: { type: 'http', scheme: 'bearer', description: 'INTERNAL_SERVICE_TOKEN' },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const files = route.config?.multipart_body;
      if (!files) return { schema, url };
      const fields = Object.entries(files).map(
        ([name, field]) => [name, typeof field === 'string' ? { description: field } : field] as const,
      );
      const properties = Object.fromEntries(
        fields.map(([name, field]) => {
          const file = { type: 'string', format: 'binary' };
          const shape = field.integer
            ? { type: 'integer', minimum: 1 }
            : field.repeated
              ? { type: 'array', items: file, minItems: 1 }
              : file;
          return [name, { ...shape, description: field.description }];
        }),
      );
      const required = fields.filter(([, field]) => !field.optional).map(([name]) => name);
      return {
        schema: {
          ...schema,
          consumes: ['multipart/form-data'],
          body: { type: 'object', required, properties },
        } as typeof schema,
        url,
      };
    },
    transformObject: (document) =>
      decorateDocument(
        ('openapiObject' in document ? document.openapiObject : {}) as Record<string, unknown>,
        route_docs,
        deps.document ?? { schemas: {}, webhooks: {} },
      ),
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  const library = await GuideLibrary.load(REPOSITORY_ROOT);
  await installReference(app, library);
  let documents: SplitDocuments | undefined;
  const served = (): SplitDocuments => (documents ??= servedDocuments(app.swagger() as unknown as Json, library));

  installAuth(app, deps.authenticator, deps.limiter, deps.config.rate_limit_failed_auth_per_second, deps.auth_counters);
  if (deps.upload) installUploadGate(app, { ...deps.upload, authenticator: deps.authenticator });
  installHttpMetrics(app, deps.metrics);

  app.get('/openapi.json', { schema: { hide: true }, config: { rate_limit: false } }, async () => served().merchant);
  app.get(
    '/openapi-admin.json',
    { schema: { hide: true }, config: { rate_limit: false } },
    async () => served().operator,
  );

  app.get(
    '/healthz',
    {
      schema: { tags: ['ops'], summary: 'Liveness', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
      config: { auth: 'public', rate_limit: false },
    },
    async () => ({ status: 'ok' as const }),
  );

  const Readiness = Type.Object({
    status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
    checks: Type.Record(Type.String(), Type.Object({ ok: Type.Boolean(), detail: Type.Optional(Type.String()) })),
  });
  const readiness_schema = {
    tags: ['ops'],
    summary: 'Readiness: the database answers',
    response: { 200: Readiness, 503: { ...Readiness, description: 'Not ready' } },
  };
  app.get(
    '/readyz',
    { schema: readiness_schema, config: { auth: 'public', rate_limit: false } },
    async (_request, reply) => {
      let checks: Record<string, { ok: boolean; detail?: string }>;
      let timer: NodeJS.Timeout | undefined;
      try {
        // Answered in time whatever the database does: a check still waiting counts as a failure.
        const too_slow = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${READINESS_TIMEOUT_MS} ms`)),
            READINESS_TIMEOUT_MS,
          );
        });
        checks = await Promise.race([deps.readiness(), too_slow]);
      } catch (error) {
        checks = { database: { ok: false, detail: (error as Error).message } };
      } finally {
        clearTimeout(timer);
      }
      // Every check counts: a job that cannot run (the matcher without a mint source) makes the process not ready.
      const ready = checks['database']?.ok === true && Object.values(checks).every((check) => check.ok);
      reply.status(ready ? 200 : 503);
      return { status: ready ? ('ready' as const) : ('unavailable' as const), checks };
    },
  );

  const metrics_token = deps.config.metrics_token;
  app.get('/metrics', { schema: { hide: true }, config: { rate_limit: false } }, async (request, reply) => {
    if (!metricsReadAllowed(request.headers.authorization, metrics_token)) {
      reply.header('WWW-Authenticate', 'Bearer');
      return reply.status(401).send(METRICS_UNAUTHORIZED);
    }
    reply.header('Content-Type', deps.metrics.contentType);
    return deps.metrics.metrics();
  });

  await deps.routes(app);
  return app;
}
