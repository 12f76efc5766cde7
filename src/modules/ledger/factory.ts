import { ConfigError, type Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { createHttpLedger } from './http-client.ts';
import { createInProcessLedger } from './in-process.ts';
import type { Ledger } from './port.ts';

/** In-process by default; `LEDGER_URL` switches to the HTTP adapter, which needs the raw internal service token. */
export function createLedgerFromConfig(
  config: Pick<Config, 'ledger_url' | 'internal_service_token' | 'ledger_timeout_ms'>,
  deps: { db: Db; clock: Clock },
): Ledger {
  if (!config.ledger_url) return createInProcessLedger(deps);
  if (!config.internal_service_token)
    throw new ConfigError('LEDGER_URL needs INTERNAL_SERVICE_TOKEN (the ledger server checks it)');
  return createHttpLedger({
    base_url: config.ledger_url,
    token: config.internal_service_token,
    timeout_ms: config.ledger_timeout_ms,
  });
}
