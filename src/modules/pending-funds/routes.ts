import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { merchantScope } from '../../http/auth.ts';
import {
  CsvEnum,
  created,
  Envelope,
  IncludeArchived,
  ListQuery,
  MinorUnits,
  ok,
  Page,
  splitCsv,
  Uuid,
  UuidParams,
} from '../../http/schemas.ts';
import { RECEIPT_BODY_LIMIT_BYTES } from '../validators/receipt.ts';
import {
  createPendingFunds,
  getAudit,
  getPendingFunds,
  listAudit,
  listPendingFunds,
  receiverConfirm,
  type PendingFundsDeps,
} from './service.ts';
import { AuditFullSchema, AuditRowSchema, Nullable, OutcomeSchema, PendingFundsSchema } from './schema.ts';

const STATUSES = [
  'pending_validation',
  'validated_pending_receiver_confirm',
  'confirmed',
  'failed',
  'expired',
] as const;
const OUTCOMES = ['verified', 'failed', 'unverified', 'timeout'] as const;
const ReceiptBody = {
  receipt_base64: Type.String({ description: 'The receipt, base64 (decoded at most 5 MB)' }),
  content_type: Type.String({ description: 'image/jpeg, image/png, image/webp or application/pdf' }),
};

const AuditQuery = ListQuery({
  outcome: Type.Optional(CsvEnum(OUTCOMES, 'Outcome filter')),
  pending_funds_id: Type.Optional(Uuid()),
  validator_kind: Type.Optional(
    Type.Union([Type.Literal('null_validator'), Type.Literal('easyslip'), Type.Literal('slip_qr')]),
  ),
  stage: Type.Optional(
    Type.Union([Type.Literal('receiver_confirm'), Type.Literal('intake'), Type.Literal('all')], {
      description:
        "receiver_confirm (default: one row per receiver-confirm call, the contract's meaning), intake (the validation at creation) or all",
      default: 'receiver_confirm',
    }),
  ),
  include_archived: IncludeArchived,
});

export const pendingFundsRoutes: FastifyPluginAsyncTypebox<{ deps: PendingFundsDeps }> = async (app, { deps }) => {
  app.post(
    '/internal/pending-funds',
    {
      bodyLimit: RECEIPT_BODY_LIMIT_BYTES,
      config: {
        auth: 'internal',
        errors: ['RECEIVER_CONFIRM_CONTENT_TYPE_UNSUPPORTED', 'RECEIVER_CONFIRM_MALFORMED_RECEIPT', 404, 413],
      },
      schema: {
        tags: ['pending-funds'],
        summary: 'Record pending funds for a receiver and validate the payer receipt',
        body: Type.Object(
          {
            receiver_merchant_id: Uuid('The merchant receiving the funds'),
            amount_minor: MinorUnits('micro-PAY to mint on confirmation', 1),
            payer_reference: Type.String({ minLength: 1, maxLength: 255 }),
            ...ReceiptBody,
            fiat_amount_minor: Type.Optional(MinorUnits('Fiat amount the receipt must show (minor units)', 1)),
            fiat_currency: Type.Optional(Type.String({ minLength: 3, maxLength: 3 })),
            receiver_account: Type.Optional(
              Type.Object(
                {
                  account_number: Type.Optional(Type.String({ minLength: 4, maxLength: 34 })),
                  account_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
                  promptpay_id: Type.Optional(Type.String({ minLength: 10, maxLength: 15 })),
                },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(PendingFundsSchema) },
      },
    },
    async (request, reply) => created(reply, await createPendingFunds(deps, request.body)),
  );

  app.get(
    '/v1/pending-funds',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['pending-funds'],
        summary: "The caller's pending funds, newest first",
        querystring: ListQuery({ status: Type.Optional(CsvEnum(STATUSES, 'Status filter')) }),
        response: { 200: Page(PendingFundsSchema) },
      },
    },
    async (request) => listPendingFunds(deps, merchantScope(request), splitCsv(request.query, 'status')),
  );

  app.get(
    '/v1/pending-funds/:id',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['pending-funds'],
        summary: 'One pending-funds row of the caller',
        params: UuidParams,
        response: { 200: Envelope(PendingFundsSchema) },
      },
    },
    async (request) => ok(await getPendingFunds(deps, merchantScope(request), request.params.id)),
  );

  app.post(
    '/v1/pending-funds/:id/receiver-confirm',
    {
      bodyLimit: RECEIPT_BODY_LIMIT_BYTES,
      config: {
        auth: 'key',
        mode: 'live_only',
        errors: [
          'RECEIVER_CONFIRM_CONTENT_TYPE_UNSUPPORTED',
          'RECEIVER_CONFIRM_MALFORMED_RECEIPT',
          403,
          404,
          409,
          413,
          502,
        ],
      },
      schema: {
        tags: ['pending-funds'],
        summary: 'Receiver confirms pending funds with a receipt (201 for every validator outcome)',
        params: UuidParams,
        body: Type.Object(ReceiptBody, { additionalProperties: false }),
        response: {
          201: Envelope(
            Type.Object({
              outcome: OutcomeSchema,
              reason: Nullable(Type.String()),
              audit_id: Type.String({ format: 'uuid' }),
              pending_funds: PendingFundsSchema,
            }),
          ),
        },
      },
    },
    async (request, reply) =>
      created(reply, await receiverConfirm(deps, merchantScope(request), request.params.id, request.body)),
  );

  app.get(
    '/admin/audit/receiver-confirm',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Receiver-confirm audit rows, newest first',
        querystring: AuditQuery,
        response: { 200: Page(AuditRowSchema) },
      },
    },
    async (request) => listAudit(deps.db, splitCsv(request.query, 'outcome')),
  );

  app.get(
    '/admin/audit/receiver-confirm/:id',
    {
      config: { auth: 'admin', errors: [404] },
      schema: {
        tags: ['admin'],
        summary: 'One audit row with the full validator response',
        params: UuidParams,
        querystring: Type.Object({ include_archived: IncludeArchived }),
        response: { 200: Envelope(AuditFullSchema) },
      },
    },
    async (request) => ok(await getAudit(deps.db, request.params.id, request.query.include_archived)),
  );
};
