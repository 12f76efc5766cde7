import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { adminActor, merchantScope } from '../../http/auth.ts';
import { IdempotencyKeyHeader, idempotentWrite } from '../../http/idempotency.ts';
import { CsvEnum, created, Envelope, ListQuery, ok, Page, splitCsv, Uuid, UuidParams } from '../../http/schemas.ts';
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
import { DisputeEventSchema, DisputeSchema, Outcome } from './schema.ts';
import { RECEIPT_BODY_LIMIT_BYTES, RECEIPT_CONTENT_TYPES } from '../validators/receipt.ts';

const Notes = Type.String({ minLength: 1, maxLength: 4000, description: '1 to 4000 characters' });

export { DisputeSchema } from './schema.ts';

const DisputeDetailSchema = Type.Object({ ...DisputeSchema.properties, events: Type.Array(DisputeEventSchema) });

const DisputesQuery = ListQuery({
  status: Type.Optional(CsvEnum(DISPUTE_STATUSES, 'Status filter')),
  kind: Type.Optional(CsvEnum(DISPUTE_KINDS, 'Kind filter')),
  sell_order_id: Type.Optional(Uuid('Only disputes of this sell order')),
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
        querystring: DisputesQuery,
        response: { 200: Page(DisputeSchema) },
      },
    },
    async (request) => listMerchantDisputes(deps, merchantScope(request), splitCsv(request.query, 'status', 'kind')),
  );

  app.post(
    '/v1/merchant-disputes',
    {
      config: { auth: 'merchant', errors: [403, 404, 409, 413] },
      bodyLimit: RECEIPT_BODY_LIMIT_BYTES,
      schema: {
        tags: ['disputes'],
        summary:
          'Open a dispute on a sell order: one of yours (opened_by seller), or one your buy order filled (opened_by buyer)',
        description:
          "The seller disputes its own sell order in any status; a merchant whose buy order filled it disputes it while its cash leg is in flight or after it failed (else 409 DISPUTE_BAD_STATE), with its own payment slip as optional evidence. Anybody else: 403 GATEWAY_DISPUTE_CROSS_MERCHANT. 409 DISPUTE_BAD_STATE when the sell order already has an unresolved dispute. A refund's payout (a sell order paying a pay_balance refund) that its buyer confirmed receiving is not the refunding merchant's to dispute: 409 DISPUTE_BAD_STATE. While the dispute is open the order's cash leg is not failed by the sweeper.",
        headers: IdempotencyKeyHeader,
        body: Type.Object(
          {
            sell_order_id: Uuid('The disputed sell order'),
            notes: Notes,
            evidence_base64: Type.Optional(
              Type.String({
                minLength: 1,
                description: 'Your evidence (a payment slip, image or PDF), base64; with content_type',
              }),
            ),
            content_type: Type.Optional(Type.Union(RECEIPT_CONTENT_TYPES.map((type) => Type.Literal(type)))),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(DisputeSchema) },
      },
    },
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: true, status: 201 }, (trx, scope) =>
        openMerchantDispute(deps, trx, scope, userId(request), request.body),
      ),
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
        querystring: Type.Object({
          ...DisputesQuery.properties,
          merchant_id: Type.Optional(Uuid('Only this merchant')),
        }),
        response: { 200: Page(DisputeSchema) },
      },
    },
    async (request) => listAllDisputes(deps, splitCsv(request.query, 'status', 'kind')),
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
    async (request, reply) => created(reply, await openChargeback(deps, adminActor(request), request.body)),
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

  /** The operator's moves that take nothing but optional notes. */
  const noteMove = (url: string, summary: string, move: typeof investigateDispute) =>
    app.post(
      url,
      {
        config: { auth: 'admin', errors: [403, 404, 409] },
        schema: {
          tags: ['admin'],
          summary,
          params: UuidParams,
          body: ActionBody,
          response: { 200: Envelope(DisputeDetailSchema) },
        },
      },
      async (request) => ok(await move(deps, adminActor(request), request.params.id, request.body?.notes)),
    );
  noteMove('/admin/disputes/:id/investigate', 'opened -> investigating', investigateDispute);
  noteMove('/admin/disputes/:id/escalate', 'investigating -> escalated (gateway.dispute.escalated)', escalateDispute);

  app.post(
    '/admin/disputes/:id/resolve',
    {
      config: { auth: 'admin', errors: [403, 404, 409, 502] },
      schema: {
        tags: ['admin'],
        summary:
          'investigating or escalated -> resolved: PAY follows the fiat (favor_merchant on a completed order: the fills back to the seller; favor_counterparty on a failed one: back to the buyers; in flight: completed or failed as its cash leg), never a mint or burn on one side',
        params: UuidParams,
        body: Type.Object({ outcome: Outcome, notes: Type.Optional(Notes) }, { additionalProperties: false }),
        response: { 200: Envelope(DisputeDetailSchema) },
      },
    },
    async (request) => ok(await resolveDispute(deps, adminActor(request), request.params.id, request.body)),
  );
};
