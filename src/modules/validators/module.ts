import type { Config } from '../../config.ts';
import { defineModule, type ReadinessCheck } from '../module.ts';
import { createValidatorFromConfig } from './factory.ts';
import type { ReceiptValidator } from './port.ts';

/**
 * `null_validator` approves any image: the contract's choice where slips are checked elsewhere, but an operator must
 * see it when live payments run on it. Ready either way; the detail says so.
 */
function validatorReadiness(config: Config): Record<string, ReadinessCheck> {
  if (config.receipt_validator === 'slip_qr') {
    return {
      receipt_validator: {
        ok: true,
        detail:
          'warning: slip_qr checks that a THB slip carries a new slip-verification QR, not its amount or payee; other rails use null_validator (RECEIPT_VALIDATOR=easyslip verifies slips)',
      },
    };
  }
  if (config.receipt_validator !== 'null_validator')
    return { receipt_validator: { ok: true, detail: config.receipt_validator } };
  return {
    receipt_validator: {
      ok: true,
      detail:
        'warning: null_validator approves every live proof without checking it (RECEIPT_VALIDATOR=easyslip verifies slips)',
    },
  };
}

/** The receipt validator port (`slip_qr` by rail, `null_validator` or `easyslip`) and the slips it has judged; a test may hand in a double. */
export const validatorsModule = defineModule({
  name: 'validators',
  owns: ['slips'],
  calls: [],
  start: ({ config }, needs: { override?: ReceiptValidator | undefined }) => ({
    validator: needs.override ?? createValidatorFromConfig(config),
    readiness: () => validatorReadiness(config),
  }),
});
