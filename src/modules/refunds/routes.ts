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
import { readMultipartForm } from '../../http/multipart.ts';
import { checkProof, decodeReceipt, CASH_LEG_CODES, RECEIPT_BODY_LIMIT_BYTES } from '../validators/receipt.ts';
import { uploadRefundProof } from './proofs.ts';
import { simulateRefund } from './sandbox.ts';
import { REFUND_STATUSES, CreateRefundBody, RefundProofBody } from './schema.ts';
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

const isMultipart = (content_type: string | undefined) => /^multipart\/form-data\b/i.test(content_type ?? '');

export const refundRoutes: FastifyPluginAsyncTypebox<{ deps: RefundsDeps; proof_max_bytes: number }> = async (
  app,
  { deps, proof_max_bytes },
) => {
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
      config: { auth: 'key', errors: [404, 'REFUND_BAD_STATE', 'LEDGER_UNAVAILABLE'] },
      schema: {
        tags: ['refunds'],
        summary: 'Cancel a refund before the money moved (requires_action, or pending without a slip standing)',
        description:
          'Any other state is 409 REFUND_BAD_STATE. A pay_balance hold goes back to available (refund.canceled); with the ledger unreachable 502 LEDGER_UNAVAILABLE and nothing changes.',
        params: UuidParams,
        response: { 200: Envelope(RefundRef) },
      },
    },
    async (request) => ok(await cancelRefund(deps, merchantScope(request), request.params.id)),
  );

  app.post(
    '/v1/refunds/:id/proof',
    {
      config: {
        auth: 'key',
        multipart_body: {
          proof: 'The slip of your transfer to the buyer (JPEG, PNG, WebP or HEIC, at most PROOF_MAX_BYTES)',
        },
        errors: [404, 'REFUND_BAD_STATE', 'PROOF_UNSUPPORTED_TYPE', 'PAYLOAD_TOO_LARGE'],
      },
      bodyLimit: RECEIPT_BODY_LIMIT_BYTES,
      schema: {
        tags: ['refunds'],
        summary: 'Upload the slip of your transfer to the buyer (merchant_transfer refunds); 200 with the refund',
        description:
          'A multipart `proof` part (as a payment proof), or JSON `{receipt_base64, content_type}` (image/jpeg, image/png, image/webp or application/pdf, at most 5 MB). ' +
          "The slip is checked like any: the refund's amount, the buyer's destination as payee, a bank reference never accepted before. " +
          "A provider's verdict that checked amount and payee makes the refund `succeeded`; where nobody can check it (no provider) " +
          '`proof.status` is `awaiting_buyer` and the buyer confirms on the claim page (silence for REFUND_CONFIRM_DAYS stands). ' +
          'A rejected slip leaves it `pending` with `failure_reason` for another slip. Only a pending refund with a known destination takes a slip (else 409 REFUND_BAD_STATE).',
        params: UuidParams,
        body: Type.Union([RefundProofBody, Type.Null()]),
        response: { 200: Envelope(RefundRef) },
      },
      preValidation: async (request) => {
        if (isMultipart(request.headers['content-type'])) request.body = null;
      },
    },
    async (request) => {
      const scope = merchantScope(request);
      let slip: { bytes: Uint8Array; content_type: string };
      if (isMultipart(request.headers['content-type'])) {
        const form = await readMultipartForm(request, { max_bytes: proof_max_bytes });
        slip = checkProof(form.file?.field === 'proof' ? form.file.data : undefined);
      } else {
        const body = request.body;
        if (!body) throw decodeReceipt({ receipt_base64: '', content_type: '' }, CASH_LEG_CODES);
        slip = { bytes: decodeReceipt(body, CASH_LEG_CODES), content_type: body.content_type.toLowerCase() };
      }
      return ok(await uploadRefundProof(deps, scope, request.params.id, slip));
    },
  );

  app.post(
    '/v1/sandbox/refunds/:id/simulate',
    {
      config: { auth: 'key', mode: 'sandbox_only', errors: [403, 404, 'REFUND_BAD_STATE', 'IDEMPOTENCY_KEY_CONFLICT'] },
      schema: {
        tags: ['sandbox'],
        summary: "Play a sandbox refund to its end: succeeded or failed, with each step's signed webhooks",
        description:
          'Test or sandbox key only (a live key is 403 SANDBOX_ONLY). Optional `Idempotency-Key`. A refund still waiting for its claim gets a synthetic destination first (`pending`, refund.updated), ' +
          "then `succeeded` (refund.succeeded; the payment's amount_refunded, payment.refunded when whole) or `failed` (refund.failed, `sandbox_simulated_failure`; a PAY hold goes back). An ended refund is 409 REFUND_BAD_STATE.",
        params: UuidParams,
        body: Type.Object(
          { outcome: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')]) },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(RefundRef) },
      },
    },
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: false, status: 200 }, (trx, scope) =>
        simulateRefund(deps, trx, scope, request.params.id, request.body.outcome),
      ),
  );
};
