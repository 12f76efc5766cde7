/**
 * One api process for the bench's scale scenario: the application from the environment (ROLES=api, DATABASE_URL),
 * with the bench baselines, on a free port; it tells its parent the address over IPC, and answers 'stats' with its
 * batching allocator's counters.
 */
import pino from 'pino';
import { createApplication } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { PaymentCreateBatcher } from '../src/modules/payments/create-batch.ts';
import { registerBaselines } from './context.ts';

const config = loadConfig(process.env as Record<string, string>);
const database = await openDatabase({ database_url: config.database_url, data_dir: 'memory://' });
const application = await createApplication({ config, database, logger: pino({ level: 'silent' }) });
registerBaselines(application);
const url = await application.app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ url });
process.on('message', (message) => {
  const batcher = application.payments.create_batcher;
  if (message === 'stats')
    process.send?.({ stats: batcher instanceof PaymentCreateBatcher ? batcher.stats : undefined });
});
process.on('SIGTERM', () => {
  void application.close().finally(() => database.close().finally(() => process.exit(0)));
});
