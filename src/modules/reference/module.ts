import { defineModule } from '../module.ts';
import { createBankDirectory } from './banks.ts';
import { referenceRoutes } from './routes.ts';

/** Thai banks (the table a migration loads from thai-banks.csv) and PromptPay payloads. */
export const referenceModule = defineModule({
  name: 'reference',
  owns: ['thai_banks'],
  calls: [],
  start: ({ db, clock }) => {
    const banks = createBankDirectory(db, clock);
    return { banks, routes: async (server) => void (await server.register(referenceRoutes, { banks })) };
  },
});
