import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { Envelope, ok } from '../../http/schemas.ts';
import { DifferenceSchema } from '../ledger/reconcile.ts';
import { SupplyReportSchema } from '../ledger/supply.ts';
import { supplyWithDifferences } from './service.ts';

const SupplyWithDifferencesSchema = Type.Object({
  ...SupplyReportSchema.properties,
  differences: Type.Array(DifferenceSchema, {
    description: 'Every difference between the ledger journal and the business records; empty is the normal state',
  }),
});

export const reconciliationRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.get(
    '/admin/ledger/supply',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary:
          'PAY minted and burned per cause and mode, and the reconciliation of the ledger with the business records',
        description:
          'Every unit of PAY in circulation and why it exists, read from the in-process ledger journal; `differences` lists every journal entry no business row explains and every transfer a business row implies that the journal lacks or holds otherwise, with the rows behind it.',
        response: { 200: Envelope(SupplyWithDifferencesSchema) },
      },
    },
    async () => ok(await supplyWithDifferences(db)),
  );
};
