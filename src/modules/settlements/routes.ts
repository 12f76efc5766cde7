import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { adminActor, merchantScope } from '../../http/auth.ts';
import {
  CsvEnum,
  created,
  Envelope,
  IncludeArchived,
  ListQuery,
  ok,
  Page,
  splitCsv,
  UuidParams,
} from '../../http/schemas.ts';
import {
  adjustSettlement,
  exportSettlementCsv,
  failSettlement,
  getSettlement,
  listSettlementPayments,
  listSettlements,
  retrySettlement,
  runSettlementsByOperator,
  settlementAuditLog,
  type SettlementsDeps,
} from './service.ts';
import { AdminActionSchema } from '../audit/schema.ts';
import { SettlementDetailSchema, SettlementPaymentSchema } from './schema.ts';
import type { SettlementStatus } from './tables.ts';

export const SETTLEMENT_STATUSES: readonly SettlementStatus[] = ['pending', 'completed', 'failed'];

const PageQuery = ListQuery({});

export const settlementRoutes: FastifyPluginAsyncTypebox<{ deps: SettlementsDeps }> = async (app, { deps }) => {
  const SettlementRef = Type.Ref('Settlement');

  app.get(
    '/v1/settlements',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['settlements'],
        summary: "List settlement batches of this key's mode, newest first",
        querystring: ListQuery({ status: Type.Optional(CsvEnum(SETTLEMENT_STATUSES, 'Settlement status filter')) }),
        response: { 200: Page(SettlementRef) },
      },
    },
    async (request) => listSettlements(deps.db, merchantScope(request), splitCsv(request.query, 'status')),
  );

  app.get(
    '/v1/settlements/:id',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['settlements'],
        summary: 'Read a settlement batch with its adjustments',
        params: UuidParams,
        response: { 200: Envelope(SettlementDetailSchema) },
      },
    },
    async (request) => ok(await getSettlement(deps.db, merchantScope(request), request.params.id)),
  );

  app.get(
    '/v1/settlements/:id/payments',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['settlements'],
        summary: "The payments of a batch with each one's fee and net, newest payment first",
        params: UuidParams,
        querystring: PageQuery,
        response: { 200: Page(SettlementPaymentSchema) },
      },
    },
    async (request) => listSettlementPayments(deps.db, merchantScope(request), request.params.id, request.query),
  );

  app.get(
    '/v1/settlements/:id/export.csv',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['settlements'],
        summary: 'CSV of a batch: a header row, then one line per payment (amounts in minor units and as decimals)',
        params: UuidParams,
        produces: ['text/csv'],
        response: {
          200: { description: 'text/csv; charset=utf-8', content: { 'text/csv': { schema: Type.String() } } },
        },
      },
    },
    async (request, reply) => {
      const { filename, csv } = await exportSettlementCsv(deps.db, merchantScope(request), request.params.id);
      return reply
        .type('text/csv; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="${filename}"`)
        .send(csv);
    },
  );

  app.post(
    '/admin/settlements/run',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary:
          "Run settlement now: batch every merchant's completed, unsettled payments per currency and mode (audited)",
        response: { 200: Envelope(Type.Object({ batches: Type.Array(SettlementRef), payment_count: Type.Integer() })) },
      },
    },
    async (request) => ok(await runSettlementsByOperator(deps, adminActor(request))),
  );

  app.post(
    '/admin/settlements/:id/fail',
    {
      config: { auth: 'admin', errors: [404, 409] },
      schema: {
        tags: ['admin'],
        summary: "Record that a completed batch's payout came back (completed -> failed, settlement.failed; audited)",
        params: UuidParams,
        body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false }),
        response: { 200: Envelope(SettlementDetailSchema) },
      },
    },
    async (request) => ok(await failSettlement(deps, adminActor(request), request.params.id, request.body.reason)),
  );

  app.post(
    '/admin/settlements/:id/retry',
    {
      config: { auth: 'admin', errors: [404, 409] },
      schema: {
        tags: ['admin'],
        summary:
          "Retry a failed batch's payout (failed -> completed, settlement.retried; settlement.completed stays once per batch; audited)",
        params: UuidParams,
        response: { 200: Envelope(SettlementDetailSchema) },
      },
    },
    async (request) => ok(await retrySettlement(deps, adminActor(request), request.params.id)),
  );

  app.post(
    '/admin/settlements/:id/adjustments',
    {
      config: { auth: 'admin', errors: [404, 409] },
      schema: {
        tags: ['admin'],
        summary:
          "Add a signed adjustment to a batch's net (settlement.adjusted; audited); the net may not go below zero",
        params: UuidParams,
        body: Type.Object(
          {
            amount_minor: Type.Integer({
              minimum: -Number.MAX_SAFE_INTEGER,
              maximum: Number.MAX_SAFE_INTEGER,
              description: 'Signed minor units, not zero: positive credits the merchant',
            }),
            reason: Type.String({ minLength: 1, maxLength: 500 }),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(SettlementDetailSchema) },
      },
    },
    async (request, reply) =>
      created(reply, await adjustSettlement(deps, adminActor(request), request.params.id, request.body)),
  );

  app.get(
    '/admin/settlements/:id/audit-log',
    {
      config: { auth: 'admin', errors: [404] },
      schema: {
        tags: ['admin'],
        summary: 'Operator actions on a batch, newest first',
        params: UuidParams,
        querystring: Type.Object({ ...PageQuery.properties, include_archived: IncludeArchived }),
        response: { 200: Page(AdminActionSchema) },
      },
    },
    async (request) => settlementAuditLog(deps.db, request.params.id, request.query),
  );
};
