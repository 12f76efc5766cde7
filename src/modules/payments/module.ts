import type { Ledger } from '../ledger/port.ts';
import { defineModule } from '../module.ts';
import type { BankDirectory } from '../reference/banks.ts';
import type { ReceiptValidator } from '../validators/port.ts';
import { createPaymentCompletion } from './completion.ts';
import { PaymentCreateBatcher } from './create-batch.ts';
import type { QuoteLockPort } from './ports.ts';
import { paymentRoutes } from './routes.ts';
import { sellerRoutes } from './seller-routes.ts';
import { PaymentSchema, SellerLegSchema } from './schema.ts';
import type { PaymentsDeps } from './deps.ts';
import { expireDuePayments } from './lifecycle.ts';
import { createVerdictMetrics, processProofVerdicts, type VerdictDeps } from './verdicts.ts';
import { registerWaitingLegGauges } from './waiting-legs.ts';

/**
 * Payments and trades: creation with allocation (liquidity), proofs, the verdict worker, completion through the
 * ledger, expiry. Needs the ledger, the validator, FX's quote-lock port and the bank directory.
 */
export const paymentsModule = defineModule({
  name: 'payments',
  owns: ['payments', 'payment_legs', 'payment_proofs'],
  calls: ['audit', 'events', 'ledger', 'liquidity', 'reference', 'validators'],
  start: (
    { config, db, clock, logger, registry, wake },
    needs: { ledger: Ledger; validator: ReceiptValidator; quote_locks: QuoteLockPort; banks: BankDirectory },
  ) => {
    const deps: PaymentsDeps = {
      db,
      clock,
      public_base_url: config.public_base_url,
      completion: createPaymentCompletion(needs.ledger, config.settlement_fee_bps),
      quote_locks: needs.quote_locks,
      onProofReceived: () => wake('payment-verdicts'),
    };
    deps.create_batcher = new PaymentCreateBatcher(deps, {
      onBatchFailed: (error) => logger.warn({ err: error }, 'a batch of payment creates failed; each ran alone'),
    });
    const verdicts: VerdictDeps = {
      ...deps,
      validator: needs.validator,
      allow_unverified_live_proofs: config.allow_unverified_live_proofs,
      proof_check_hours: config.proof_check_hours,
      logger,
      completion_failures: createVerdictMetrics(registry),
    };
    const poll = config.worker_poll_interval_ms;
    registerWaitingLegGauges(registry, deps);
    return {
      deps,
      verdicts,
      schemas: { shared: [PaymentSchema, SellerLegSchema] },
      routes: async (server) => {
        await server.register(sellerRoutes, { deps });
        await server.register(paymentRoutes, {
          deps: { ...deps, banks: needs.banks },
          proof_max_bytes: config.proof_max_bytes,
          create_gone_after_sunset: config.payments_create_gone_after_sunset,
        });
      },
      jobs: [
        { name: 'payment-verdicts', interval_ms: poll, run: () => processProofVerdicts(verdicts) },
        { name: 'payment-expiry', interval_ms: poll * 5, run: () => expireDuePayments(deps) },
      ],
    };
  },
});
