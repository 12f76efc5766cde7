import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { adminActor, merchantScope } from '../../http/auth.ts';
import { CsvEnum, Cursor, Envelope, IncludeArchived, Limit, NullableTimestamp, ok, Page, parseCsv, Timestamp, UuidParams } from '../../http/schemas.ts';
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
import type { SettlementStatus } from './tables.ts';

export const SETTLEMENT_STATUSES: readonly SettlementStatus[] = ['pending', 'completed', 'failed'];

const Minor = (description: string) => Type.Integer({ description });

export const SettlementSchema = Type.Object(
  {
    id: Type.String(),
    merchant_id: Type.String(),
    is_sandbox: Type.Boolean(),
    currency: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('failed')]),
    payment_count: Type.Integer(),
    fee_bps: Type.Integer({ description: 'Fee rate of this batch in basis points of each payment' }),
    gross_minor: Minor('Sum of the payments, minor units'),
    gross_decimal: Type.String(),
    fee_minor: Minor('Sum of the per-payment fees (each rounded down), minor units'),
    fee_decimal: Type.String(),
    adjustments_minor: Minor('Sum of operator adjustments (signed), minor units'),
    adjustments_decimal: Type.String(),
    net_minor: Minor('gross - fee + adjustments, minor units'),
    net_decimal: Type.String(),
    failure_reason: Type.Union([Type.String(), Type.Null()]),
    retry_count: Type.Integer(),
    created_at: Timestamp,
    completed_at: NullableTimestamp,
    failed_at: NullableTimestamp,
  },
  { $id: 'Settlement' },
);

const AdjustmentSchema = Type.Object({ id: Type.String(), amount_minor: Type.Integer(), amount_decimal: Type.String(), reason: Type.String(), created_at: Timestamp });
const SettlementDetailSchema = Type.Object({ ...SettlementSchema.properties, adjustments: Type.Array(AdjustmentSchema) });

const SettlementPaymentSchema = Type.Object({
  payment_id: Type.String(),
  order_id: Type.String(),
  currency: Type.String(),
  amount_minor: Type.Integer(),
  amount_decimal: Type.String(),
  fee_minor: Type.Integer(),
  fee_decimal: Type.String(),
  net_minor: Type.Integer(),
  net_decimal: Type.String(),
  payment_created_at: Timestamp,
  completed_at: Timestamp,
});

const AuditEntrySchema = Type.Object({
  id: Type.String(),
  action: Type.String(),
  actor_user_id: Type.String(),
  actor_role: Type.String(),
  details: Type.Object({}, { additionalProperties: true }),
  created_at: Timestamp,
  archived_at: Type.Union([Timestamp, Type.Null()], { description: 'When the audit-archival job moved the entry to the archive (older than 90 days); null for a live entry' }),
});

const PageQuery = Type.Object({ cursor: Type.Optional(Cursor), limit: Limit });

export const settlementRoutes: FastifyPluginAsyncTypebox<{ deps: SettlementsDeps }> = async (app, { deps }) => {
  const SettlementRef = Type.Ref('Settlement');

  app.get(
    '/v1/settlements',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['settlements'],
        summary: 'List settlement batches of this key\'s mode, newest first',
        querystring: Type.Object({ status: Type.Optional(CsvEnum(SETTLEMENT_STATUSES, 'Settlement status filter')), cursor: Type.Optional(Cursor), limit: Limit }),
        response: { 200: Page(SettlementRef) },
      },
    },
    async (request) => listSettlements(deps.db, merchantScope(request), { ...request.query, status: parseCsv<SettlementStatus>(request.query.status) }),
  );

  app.get(
    '/v1/settlements/:id',
    {
      config: { auth: 'key', errors: [404] },
      schema: { tags: ['settlements'], summary: 'Read a settlement batch with its adjustments', params: UuidParams, response: { 200: Envelope(SettlementDetailSchema) } },
    },
    async (request) => ok(await getSettlement(deps.db, merchantScope(request), request.params.id)),
  );

  app.get(
    '/v1/settlements/:id/payments',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['settlements'],
        summary: 'The payments of a batch with each one\'s fee and net, newest payment first',
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
        response: { 200: { description: 'text/csv; charset=utf-8', content: { 'text/csv': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const { filename, csv } = await exportSettlementCsv(deps.db, merchantScope(request), request.params.id);
      return reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${filename}"`).send(csv);
    },
  );

  app.post(
    '/admin/settlements/run',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Run settlement now: batch every merchant\'s completed, unsettled payments per currency and mode (audited)',
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
        summary: 'Record that a completed batch\'s payout came back (completed -> failed, settlement.failed; audited)',
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
        summary: 'Retry a failed batch\'s payout (failed -> completed, settlement.completed; audited)',
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
        summary: 'Add a signed adjustment to a batch\'s net (settlement.adjusted; audited); the net may not go below zero',
        params: UuidParams,
        body: Type.Object(
          {
            amount_minor: Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, description: 'Signed minor units, not zero: positive credits the merchant' }),
            reason: Type.String({ minLength: 1, maxLength: 500 }),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(SettlementDetailSchema) },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return ok(await adjustSettlement(deps, adminActor(request), request.params.id, request.body));
    },
  );

  app.get(
    '/admin/settlements/:id/audit-log',
    {
      config: { auth: 'admin', errors: [404] },
      schema: { tags: ['admin'], summary: 'Operator actions on a batch, newest first', params: UuidParams, querystring: Type.Object({ ...PageQuery.properties, include_archived: IncludeArchived }), response: { 200: Page(AuditEntrySchema) } },
    },
    async (request) => settlementAuditLog(deps.db, request.params.id, request.query),
  );
};
