import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { merchantScope } from '../../http/auth.ts';
import { IdempotencyKeyHeader, idempotentWrite } from '../../http/idempotency.ts';
import {
  CsvEnum,
  Envelope,
  ListQuery,
  ok,
  Page,
  PAYMENT_ID_PATTERN,
  splitCsv,
  UuidParams,
} from '../../http/schemas.ts';
import { REFUND_STATUSES, CreateRefundBody } from './schema.ts';
import { cancelRefund, createRefund, getRefund, listRefunds, type RefundsDeps } from './service.ts';

const PaymentIdParams = Type.Object({
  id: Type.String({ pattern: PAYMENT_ID_PATTERN, description: 'Payment id: a UUID, or sbx_ + UUID in sandbox' }),
});

const RefundsQuery = ListQuery({
  payment_id: Type.Optional(
    Type.String({ pattern: PAYMENT_ID_PATTERN, description: 'Only the refunds of this payment' }),
  ),
  status: Type.Optional(CsvEnum(REFUND_STATUSES, 'Refund status filter')),
});

const optionalBody = async (request: { body: unknown }) => {
  request.body ??= {};
};

export const refundRoutes: FastifyPluginAsyncTypebox<{ deps: RefundsDeps }> = async (app, { deps }) => {
  const RefundRef = Type.Ref('Refund');

  app.post(
    '/v1/payments/:id/refunds',
    {
      config: {
        auth: 'key',
        errors: [
          404,
          'PAYMENT_BAD_STATE',
          'REFUND_EXCEEDS_PAYMENT',
          'REFUND_INSUFFICIENT_BALANCE',
          'IDEMPOTENCY_KEY_CONFLICT',
          'LEDGER_UNAVAILABLE',
        ],
      },
      schema: {
        tags: ['refunds'],
        summary: 'Refund a completed, settled or partially paid payment, in full (the default) or in part',
        description:
          'Idempotency-Key required. The refunds of a payment that are not failed or canceled never add up to more than it received ' +
          "(409 REFUND_EXCEEDS_PAYMENT, checked under the payment's lock); a payment in another state is 409 PAYMENT_BAD_STATE. " +
          'Without `destination` the refund is `requires_action`: send the buyer `next_action.claim_url`, where they say where the money goes. ' +
          'With it the refund is `pending`. `funding: merchant_transfer` (default): pay the buyer yourself and upload the slip (POST /v1/refunds/{id}/proof). ' +
          "`funding: pay_balance`: the refund's PAY (the payment's PAY before its fee times the refund's share) moves to a refund hold now " +
          "(409 REFUND_INSUFFICIENT_BALANCE) and is paid out to the buyer through the payout network. The payment's fee is not returned.",
        params: PaymentIdParams,
        headers: IdempotencyKeyHeader,
        body: CreateRefundBody,
        response: { 201: Envelope(RefundRef) },
      },
      preValidation: optionalBody,
    },
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: true, status: 201 }, (trx, scope) =>
        createRefund(deps, trx, scope, request.params.id, request.body, request.headers['idempotency-key']),
      ),
  );

  app.get(
    '/v1/refunds',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['refunds'],
        summary: 'List refunds, newest first',
        querystring: RefundsQuery,
        response: { 200: Page(RefundRef) },
      },
    },
    async (request) => listRefunds(deps, merchantScope(request), splitCsv(request.query, 'status')),
  );

  app.get(
    '/v1/refunds/:id',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['refunds'],
        summary: 'Read a refund',
        params: UuidParams,
        response: { 200: Envelope(RefundRef) },
      },
    },
    async (request) => ok(await getRefund(deps, merchantScope(request), request.params.id)),
  );

  app.post(
    '/v1/refunds/:id/cancel',
    {
      config: { auth: 'key', errors: [404, 'REFUND_BAD_STATE'] },
      schema: {
        tags: ['refunds'],
        summary: 'Cancel a refund before the money moved (requires_action, or pending without a slip standing)',
        description:
          'Any other state is 409 REFUND_BAD_STATE. A pay_balance hold goes back to available (refund.canceled).',
        params: UuidParams,
        response: { 200: Envelope(RefundRef) },
      },
    },
    async (request) => ok(await cancelRefund(deps, merchantScope(request), request.params.id)),
  );
};
