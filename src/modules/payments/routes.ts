import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { adminActor, merchantScope, withCarriedEpoch } from '../../http/auth.ts';
import { idempotencyRequest } from '../../http/idempotency.ts';
import { CsvEnum, Envelope, ListQuery, ok, Page, splitCsv, PAYMENT_ID_PATTERN, Timestamp } from '../../http/schemas.ts';
import { CURRENCIES, PAYMENT_METHODS } from '../../lib/money.ts';
import type { BankDirectory } from '../reference/banks.ts';
import { readProofParts } from '../../http/multipart.ts';
import {
  cancelPayment,
  type CreateAnswer,
  getPayment,
  listPayments,
  proofPartsAllowed,
  uploadProof,
  type CreatePaymentInput,
  type PaymentsDeps,
} from './service.ts';
import { createAlone } from './create-batch.ts';
import { PAYMENT_STATUSES, PROOF_MULTIPART_BODY, SellerLegSchema, SellerLegsQuery } from './schema.ts';
import { decideLeg } from './payee.ts';
import { listSellerLegs } from './seller.ts';
import type { ErrorCode } from '../../lib/errors.ts';
import { createPaymentsGone } from './errors.ts';

/** The contract's sunset of POST /v1/payments (section 9) and our deprecation date six months before it. */
export const PAYMENTS_CREATE_SUNSET = new Date('2026-07-24T00:00:00Z');
const PAYMENTS_CREATE_DEPRECATED = new Date('2026-01-24T00:00:00Z');

/** What creating a payment can answer, on POST /v1/payments and POST /v1/trades alike. */
const CREATE_ERRORS: ErrorCode[] = [
  'PAYMENT_DUPLICATE_ORDER_ID',
  'PAYMENT_INSUFFICIENT_LIQUIDITY',
  'IDEMPOTENCY_KEY_CONFLICT',
  'MATCHING_UNAVAILABLE',
];

const PaymentIdParams = Type.Object({
  id: Type.String({ pattern: PAYMENT_ID_PATTERN, description: 'Payment id: a UUID, or sbx_ + UUID in sandbox' }),
});

const CreatePaymentBody = Type.Object(
  {
    order_id: Type.String({ minLength: 1, maxLength: 255, description: 'Unique per merchant and mode' }),
    amount: Type.Union(
      [
        Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
        Type.String({ pattern: '^\\d{1,15}(\\.\\d+)?$' }),
      ],
      {
        description: 'Integer minor units (10000 = 100.00 THB) or a decimal string in major units ("100.00")',
      },
    ),
    currency: Type.Union(CURRENCIES.map((c) => Type.Literal(c))),
    return_url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 }),
    payment_method: Type.Optional(
      Type.Union(
        PAYMENT_METHODS.map((m) => Type.Literal(m)),
        { description: 'Default: THB promptpay, AUD payid, others bank_transfer' },
      ),
    ),
    expires_in_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 86400, default: undefined })),
    metadata: Type.Optional(
      Type.Record(Type.String({ maxLength: 40 }), Type.String({ maxLength: 500 }), { maxProperties: 50 }),
    ),
  },
  { additionalProperties: false },
);

const TradeBody = Type.Object(
  {
    ...CreatePaymentBody.properties,
    quote_lock_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'An FX quote lock: the legs use its rate' }),
    ),
  },
  { additionalProperties: false },
);

const ProofReceipt = Type.Object({
  id: Type.String(),
  leg: Type.Integer({ description: 'The leg (match_order) this slip pays' }),
  sha256: Type.String(),
  content_type: Type.String(),
  size_bytes: Type.Integer(),
  received_at: Timestamp,
});

const ProofResult = Type.Object({
  payment_id: Type.String(),
  status: Type.String(),
  proof: Type.Intersect([ProofReceipt], {
    description: 'The first slip of this upload (the only one for a one-leg payment)',
  }),
  proofs: Type.Array(ProofReceipt, { description: 'Every slip of this upload, one per leg, in match_order' }),
});

function deprecate(reply: FastifyReply): void {
  reply.header('Deprecation', `@${Math.floor(PAYMENTS_CREATE_DEPRECATED.getTime() / 1000)}`);
  reply.header('Sunset', PAYMENTS_CREATE_SUNSET.toUTCString());
  reply.header('Link', '</v1/trades>; rel="successor-version"');
}

export interface PaymentRoutesOptions {
  deps: PaymentsDeps & { banks: BankDirectory };
  proof_max_bytes: number;
  create_gone_after_sunset: boolean;
}

export const paymentRoutes: FastifyPluginAsyncTypebox<PaymentRoutesOptions> = async (
  app,
  { deps, proof_max_bytes, create_gone_after_sunset },
) => {
  const PaymentRef = Type.Ref('Payment');

  /** GET /v1/payments/{id} and /v1/trades/{id}: the batched read checks the cached credential's epoch beside the row. */
  const readPayment = (request: FastifyRequest, reply: FastifyReply, id: string) =>
    withCarriedEpoch(request, reply, (epoch) => getPayment(deps, merchantScope(request), id, epoch));

  /**
   * POST /v1/trades and /v1/payments: through the process's batching allocator, or alone (a quote lock, no batcher).
   * The credential is checked by the batch's call (it refuses itself when the credential epoch moved since the
   * credential was verified); a create that runs alone authenticates against a fresh epoch read first.
   */
  const create = async (
    request: FastifyRequest,
    reply: FastifyReply,
    input: CreatePaymentInput,
  ): Promise<CreateAnswer['body'] | FastifyReply> => {
    const scope = merchantScope(request);
    const credential_epoch = request.credential_epoch;
    const alone = async () => {
      if (request.credential_epoch !== undefined) await request.reauthenticate(reply);
      return createAlone(deps, merchantScope(request), input, { request, reply })();
    };
    if (!deps.create_batcher || input.quote_lock_id !== undefined) return (await alone()).body;
    const answer = await deps.create_batcher.create({
      scope,
      input,
      idempotency: idempotencyRequest(request, { required: false }),
      credential_epoch,
      alone,
    });
    if (answer.status !== undefined) reply.status(answer.status);
    // a batch's answer is serialized once, beside its stored response and its event
    if (answer.json !== undefined) return reply.type('application/json; charset=utf-8').send(answer.json);
    return answer.body;
  };

  app.post(
    '/v1/payments',
    {
      config: {
        auth: 'key',
        credential_epoch: 'carried',
        errors: [...CREATE_ERRORS, 'GONE'],
      },
      schema: {
        tags: ['payments'],
        summary: 'Create a payment (deprecated: use POST /v1/trades)',
        description:
          'Deprecated; sunset 2026-07-24T00:00:00Z. Responses carry Deprecation, Sunset and Link headers. Optional `Idempotency-Key`.',
        deprecated: true,
        body: CreatePaymentBody,
        response: { 201: Envelope(PaymentRef) },
      },
      // onSend runs for every response of the route, errors included (400 validation, 401, 409, 429...).
      onSend: async (_request, reply, payload) => {
        deprecate(reply);
        return payload;
      },
    },
    async (request, reply) => {
      if (create_gone_after_sunset && deps.clock.now() >= PAYMENTS_CREATE_SUNSET) {
        throw createPaymentsGone();
      }
      return create(request, reply, request.body);
    },
  );

  app.post(
    '/v1/trades',
    {
      config: {
        auth: 'key',
        credential_epoch: 'carried',
        errors: [
          ...CREATE_ERRORS,
          'NOT_FOUND',
          'QUOTE_LOCK_EXPIRED',
          'QUOTE_LOCK_USED',
          'QUOTE_LOCK_MISMATCH',
          'FX_PRICE_UNAVAILABLE',
        ],
      },
      schema: {
        tags: ['payments'],
        summary: 'Create a payment (successor of POST /v1/payments), optionally at a locked FX rate',
        description: 'Optional `Idempotency-Key`.',
        body: TradeBody,
        response: { 201: Envelope(PaymentRef) },
      },
    },
    async (request, reply) => {
      return create(request, reply, request.body);
    },
  );

  app.get(
    '/v1/trades/:id',
    {
      config: { auth: 'key', errors: [404], credential_epoch: 'carried' },
      schema: {
        tags: ['payments'],
        summary: 'Read a trade (the same payment object)',
        params: PaymentIdParams,
        response: { 200: Envelope(PaymentRef) },
      },
    },
    async (request, reply) => ok(await readPayment(request, reply, request.params.id)),
  );

  app.get(
    '/v1/payments',
    {
      config: { auth: 'key', errors: [404], credential_epoch: 'carried' },
      schema: {
        tags: ['payments'],
        summary: 'List payments, newest first',
        querystring: Type.Object({
          ...ListQuery({
            status: Type.Optional(CsvEnum(PAYMENT_STATUSES, 'Payment status filter')),
            order_id: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 255,
                description: "The merchant's order id, matched exactly (at most one payment per mode)",
              }),
            ),
            payment_link_id: Type.Optional(
              Type.String({ pattern: '^plink_[0-9a-f]{32}$', description: 'The payments made from this payment link' }),
            ),
            from: Type.Optional(Type.String({ format: 'date-time', description: 'created_at >= from' })),
            to: Type.Optional(Type.String({ format: 'date-time', description: 'created_at < to' })),
          }).properties,
          offset: Type.Optional(
            Type.Integer({ minimum: 0, maximum: 10_000, description: 'Legacy; ignored when cursor is given' }),
          ),
        }),
        response: { 200: Page(PaymentRef) },
      },
    },
    async (request, reply) =>
      withCarriedEpoch(request, reply, (epoch) =>
        listPayments(deps, merchantScope(request), splitCsv(request.query, 'status'), epoch),
      ),
  );

  app.get(
    '/v1/payments/:id',
    {
      config: { auth: 'key', credential_epoch: 'carried' },
      schema: {
        tags: ['payments'],
        summary: 'Read a payment; a matched or payment_pending one past expires_at becomes expired (payment.expired)',
        params: PaymentIdParams,
        response: { 200: Envelope(PaymentRef) },
      },
    },
    async (request, reply) => ok(await readPayment(request, reply, request.params.id)),
  );

  app.post(
    '/v1/payments/:id/cancel',
    {
      config: { auth: 'key', errors: ['PAYMENT_BAD_STATE'] },
      schema: {
        tags: ['payments'],
        summary: 'Cancel a created or matching payment',
        params: PaymentIdParams,
        response: { 200: Envelope(PaymentRef) },
      },
    },
    async (request) => ok(await cancelPayment(deps, merchantScope(request), request.params.id)),
  );

  app.post(
    '/v1/payments/:id/proof',
    {
      config: {
        auth: 'key',
        multipart_body: PROOF_MULTIPART_BODY,
        errors: ['PAYMENT_BAD_STATE', 'PROOF_DUPLICATE', 'PROOF_UNSUPPORTED_TYPE', 'PAYLOAD_TOO_LARGE'],
      },
      schema: {
        tags: ['payments'],
        summary:
          "Upload the buyer's slips: one `proof` part per leg, or one part plus `leg`; the payment becomes confirming",
        description:
          'A one-leg payment takes one `proof` part. A payment with several legs (match_details) takes one `proof` part per leg in match_order ' +
          '(starting at the first leg without a slip), or one part with a `leg` field naming its match_order, so legs can be sent one at a time. ' +
          "The first accepted upload moves the payment to `confirming`; each leg's slip is then verified against that leg's amount and payee " +
          "(match_details[].proof shows its state). A live leg completes on a provider's verified check of amount, payee and a new bank reference, " +
          "or on its seller's confirmation: a slip that passed only the local checks shows `awaiting_payee` until its seller decides. " +
          "The payment completes when every leg is verified; a rejected leg fails it with that leg's reason, or ends it `partially_paid` when another leg was verified; " +
          'at `expires_at` a leg still without a slip fails it `proof_missing` (or `partially_paid`), while slips under check or waiting for their seller keep it open. ' +
          'The same file sent again for its own leg is answered as before.',
        params: PaymentIdParams,
        response: { 200: Envelope(ProofResult) },
      },
    },
    async (request) => {
      const scope = merchantScope(request);
      const parts = await readProofParts(request, proof_max_bytes, await proofPartsAllowed(deps, request.params.id));
      return ok(await uploadProof(deps, scope, request.params.id, parts));
    },
  );

  const LegParams = Type.Object({
    id: Type.String({ pattern: PAYMENT_ID_PATTERN, description: 'Payment id' }),
    n: Type.Integer({ minimum: 1, description: "The leg's match_order" }),
  });
  const RejectBody = Type.Object(
    { reason: Type.String({ minLength: 1, maxLength: 500, description: 'Why the money did not arrive' }) },
    { additionalProperties: false },
  );

  app.get(
    '/admin/legs',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary:
          "Every seller's live legs that carry a slip, newest first; status=awaiting_payee: those an operator may confirm or reject for their seller",
        querystring: SellerLegsQuery,
        response: { 200: Page(SellerLegSchema) },
      },
    },
    async (request) =>
      listSellerLegs(deps, null, {
        limit: request.query.limit,
        cursor: request.query.cursor,
        status: request.query.status as never,
      }),
  );

  app.post(
    '/admin/payments/:id/legs/:n/confirm',
    {
      config: { auth: 'admin', errors: [404, 'LEG_NOT_AWAITING_PAYEE', 'LEDGER_UNAVAILABLE'] },
      schema: {
        tags: ['admin'],
        summary: 'Confirm for its seller that a leg waiting for its payee was paid (the leg completes; audited)',
        params: LegParams,
        response: { 200: Envelope(SellerLegSchema) },
      },
    },
    async (request) =>
      ok(
        await decideLeg(
          deps,
          request.params.id,
          request.params.n,
          { by: { operator: adminActor(request) } },
          { decision: 'confirm' },
        ),
      ),
  );

  app.post(
    '/admin/payments/:id/legs/:n/reject',
    {
      config: { auth: 'admin', errors: [404, 'LEG_NOT_AWAITING_PAYEE', 'LEDGER_UNAVAILABLE'] },
      schema: {
        tags: ['admin'],
        summary:
          'Reject for its seller a leg waiting for its payee (the money did not arrive): the payment fails, or ends partially_paid (audited)',
        params: LegParams,
        body: RejectBody,
        response: { 200: Envelope(SellerLegSchema) },
      },
    },
    async (request) =>
      ok(
        await decideLeg(
          deps,
          request.params.id,
          request.params.n,
          { by: { operator: adminActor(request) } },
          { decision: 'reject', reason: request.body.reason },
        ),
      ),
  );
};
