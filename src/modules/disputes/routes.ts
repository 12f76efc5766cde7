import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { adminActor, merchantScope } from '../../http/auth.ts';
import { idempotent } from '../../http/idempotency.ts';
import { CsvEnum, Cursor, Envelope, Limit, ok, Page, parseCsv, Uuid, UuidParams } from '../../http/schemas.ts';
import {
  DISPUTE_KINDS,
  DISPUTE_STATUSES,
  escalateDispute,
  getDisputeForAdmin,
  getMerchantDispute,
  investigateDispute,
  listAllDisputes,
  listMerchantDisputes,
  openChargeback,
  openMerchantDispute,
  resolveDispute,
  type DisputesDeps,
} from './service.ts';
import type { DisputeKind, DisputeStatus } from './tables.ts';
import { DisputeEventSchema, DisputeSchema, Outcome } from './schema.ts';

const Notes = Type.String({ minLength: 1, maxLength: 4000, description: '1 to 4000 characters' });

export { DisputeSchema } from './schema.ts';

const DisputeDetailSchema = Type.Object({ ...DisputeSchema.properties, events: Type.Array(DisputeEventSchema) });

const ListQuery = Type.Object({
  status: Type.Optional(CsvEnum(DISPUTE_STATUSES, 'Status filter')),
  kind: Type.Optional(CsvEnum(DISPUTE_KINDS, 'Kind filter')),
  sell_order_id: Type.Optional(Uuid('Only disputes of this sell order')),
  cursor: Type.Optional(Cursor),
  limit: Limit,
});

const IdempotencyHeader = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'A UUID; required' })),
});
const ActionBody = Type.Union([
  Type.Object({ notes: Type.Optional(Notes) }, { additionalProperties: false }),
  Type.Null(),
]);

function userId(request: FastifyRequest): string {
  return request.principal.kind === 'merchant' ? request.principal.user_id : 'unknown';
}

export const disputeRoutes: FastifyPluginAsyncTypebox<{ deps: DisputesDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/merchant-disputes',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['disputes'],
        summary: 'List your disputes, newest first',
        querystring: ListQuery,
        response: { 200: Page(DisputeSchema) },
      },
    },
    async (request) =>
      listMerchantDisputes(deps, merchantScope(request), {
        ...request.query,
        status: parseCsv<DisputeStatus>(request.query.status),
        kind: parseCsv<DisputeKind>(request.query.kind),
      }),
  );

  app.post(
    '/v1/merchant-disputes',
    {
      config: { auth: 'merchant', errors: [403, 404, 409] },
      schema: {
        tags: ['disputes'],
        summary: 'Open a dispute on one of your sell orders (kind merchant_dispute, status opened)',
        description: '409 DISPUTE_BAD_STATE when the sell order already has an unresolved dispute.',
        headers: IdempotencyHeader,
        body: Type.Object(
          { sell_order_id: Uuid('The disputed sell order'), notes: Notes },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(DisputeSchema) },
      },
    },
    async (request, reply) => {
      const scope = merchantScope(request);
      return idempotent(deps, request, reply, { required: true }, async (trx) => ({
        status: 201,
        body: ok(await openMerchantDispute(deps, trx, scope, userId(request), request.body)),
      }));
    },
  );

  app.get(
    '/v1/merchant-disputes/:id',
    {
      config: { auth: 'merchant', errors: [403, 404] },
      schema: {
        tags: ['disputes'],
        summary: 'Read a dispute with its event log',
        params: UuidParams,
        response: { 200: Envelope(DisputeDetailSchema) },
      },
    },
    async (request) => ok(await getMerchantDispute(deps, merchantScope(request), request.params.id)),
  );

  app.get(
    '/admin/disputes',
    {
      config: { auth: 'admin', errors: [403] },
      schema: {
        tags: ['admin'],
        summary: 'All disputes, newest first',
        querystring: Type.Object({ ...ListQuery.properties, merchant_id: Type.Optional(Uuid('Only this merchant')) }),
        response: { 200: Page(DisputeSchema) },
      },
    },
    async (request) =>
      listAllDisputes(deps, {
        ...request.query,
        status: parseCsv<DisputeStatus>(request.query.status),
        kind: parseCsv<DisputeKind>(request.query.kind),
      }),
  );

  app.post(
    '/admin/disputes',
    {
      config: { auth: 'admin', errors: [403, 404, 409] },
      schema: {
        tags: ['admin'],
        summary: 'Open a chargeback on a sell order (kind chargeback, status opened, gateway.dispute.opened)',
        description:
          "The payout rail reversed the sell order's cash leg. Only a sell order whose cash leg ran (completed, or failed after a match) can take one: otherwise 409 DISPUTE_BAD_STATE, as when it already has an unresolved dispute. No PAY moves until the resolution. Written to admin_audit_log.",
        body: Type.Object(
          {
            kind: Type.Literal('chargeback', {
              description: 'Operators open chargebacks; merchants open merchant_dispute over /v1/merchant-disputes',
            }),
            sell_order_id: Uuid('The sell order whose cash leg was charged back'),
            notes: Notes,
            reference: Type.Optional(
              Type.String({ minLength: 1, maxLength: 200, description: "The bank's or card network's case number" }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(DisputeDetailSchema) },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return ok(await openChargeback(deps, adminActor(request), request.body));
    },
  );

  app.get(
    '/admin/disputes/:id',
    {
      config: { auth: 'admin', errors: [403, 404] },
      schema: {
        tags: ['admin'],
        summary: 'A dispute with its event log',
        params: UuidParams,
        response: { 200: Envelope(DisputeDetailSchema) },
      },
    },
    async (request) => ok(await getDisputeForAdmin(deps, request.params.id)),
  );

  app.post(
    '/admin/disputes/:id/investigate',
    {
      config: { auth: 'admin', errors: [403, 404, 409] },
      schema: {
        tags: ['admin'],
        summary: 'opened -> investigating',
        params: UuidParams,
        body: ActionBody,
        response: { 200: Envelope(DisputeDetailSchema) },
      },
    },
    async (request) => ok(await investigateDispute(deps, adminActor(request), request.params.id, request.body?.notes)),
  );

  app.post(
    '/admin/disputes/:id/escalate',
    {
      config: { auth: 'admin', errors: [403, 404, 409] },
      schema: {
        tags: ['admin'],
        summary: 'investigating -> escalated (gateway.dispute.escalated)',
        params: UuidParams,
        body: ActionBody,
        response: { 200: Envelope(DisputeDetailSchema) },
      },
    },
    async (request) => ok(await escalateDispute(deps, adminActor(request), request.params.id, request.body?.notes)),
  );

  app.post(
    '/admin/disputes/:id/resolve',
    {
      config: { auth: 'admin', errors: [403, 404, 409, 502] },
      schema: {
        tags: ['admin'],
        summary:
          'investigating or escalated -> resolved: mint (favor_merchant on a completed sell order), burn (favor_counterparty on a failed matched one) or nothing; ledger key = dispute id',
        params: UuidParams,
        body: Type.Object({ outcome: Outcome, notes: Type.Optional(Notes) }, { additionalProperties: false }),
        response: { 200: Envelope(DisputeDetailSchema) },
      },
    },
    async (request) => ok(await resolveDispute(deps, adminActor(request), request.params.id, request.body)),
  );
};
