import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Ledger } from '../ledger/port.ts';
import type { ReceiptValidator } from '../validators/port.ts';

export interface PendingFundsDeps {
  db: Db;
  clock: Clock;
  ledger: Ledger;
  validator: ReceiptValidator;
  max_attempts: number;
  ttl_hours: number;
  window_hours: number;
  /** Intake validator calls in all (default INTAKE_MAX_ATTEMPTS) and the backoff base (default INTAKE_RETRY_BASE_MS). */
  intake_max_attempts?: number | undefined;
  intake_retry_base_ms?: number | undefined;
  /** `mpay_pending_funds_revalidations_total{outcome}` (revalidation.ts). */
  revalidations?: Counter<'outcome'> | undefined;
  logger?: Logger | undefined;
}

export const HOUR_MS = 3600_000;
