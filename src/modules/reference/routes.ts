import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Envelope, ok } from '../../http/schemas.ts';
import type { BankDirectory } from './banks.ts';
import { PROMPTPAY_ID_PATTERN, promptpayPayload } from './promptpay.ts';
import { bahtAmountMalformed, promptpayIdMalformed } from './errors.ts';

const Bank = Type.Object({
  code: Type.String({ description: '3-digit Bank of Thailand code' }),
  short_code: Type.String(),
  swift_bic: Type.String(),
  name_en: Type.String(),
  name_th: Type.String(),
  promptpay_member: Type.Boolean(),
});

export const referenceRoutes: FastifyPluginAsyncTypebox<{ banks: BankDirectory }> = async (app, { banks }) => {
  app.get(
    '/v1/reference/thai-banks',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['reference'],
        summary: 'Thai bank directory (cached one hour)',
        response: { 200: Envelope(Type.Array(Bank)) },
      },
    },
    async (_request, reply) => {
      reply.header('Cache-Control', 'public, max-age=3600');
      return ok(await banks.list());
    },
  );

  app.post(
    '/v1/promptpay/qr',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['promptpay'],
        summary: 'EMVCo PromptPay payload for an id and an optional amount in baht (the client renders the QR)',
        body: Type.Object(
          {
            promptpay_id: Type.String({
              minLength: 1,
              maxLength: 32,
              description:
                'Mobile (0812345678), national/tax id (13 digits) or e-wallet id (15 digits); dashes and spaces are ignored',
            }),
            amount: Type.Optional(
              Type.Union(
                [
                  Type.Number({ minimum: 0, maximum: 999_999_999.99 }),
                  Type.String({ pattern: '^\\d{1,9}(\\.\\d{1,2})?$' }),
                ],
                { description: 'Baht, at most 2 decimals; omit for a static QR' },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Envelope(
            Type.Object({
              payload: Type.String(),
              promptpay_id: Type.String(),
              amount: Type.Union([Type.String(), Type.Null()]),
            }),
          ),
        },
      },
    },
    async (request) => {
      const promptpay_id = request.body.promptpay_id.replace(/[\s-]/g, '');
      if (!new RegExp(PROMPTPAY_ID_PATTERN).test(promptpay_id)) {
        throw promptpayIdMalformed();
      }
      const amount = request.body.amount;
      let amount_minor: number | undefined;
      if (amount !== undefined) {
        const text = typeof amount === 'number' ? String(amount) : amount;
        const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text);
        if (!match) throw bahtAmountMalformed();
        amount_minor = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
      }
      return ok({
        payload: promptpayPayload(promptpay_id, amount_minor),
        promptpay_id,
        amount: amount_minor === undefined ? null : (amount_minor / 100).toFixed(2),
      });
    },
  );
};
