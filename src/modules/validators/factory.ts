import type { Config } from '../../config.ts';
import { createEasySlipValidator } from './easyslip.ts';
import { nullValidator } from './null-validator.ts';
import type { ReceiptValidator } from './port.ts';
import { slipQrValidator } from './slip-qr.ts';
import { present } from '../../lib/assert.ts';

/**
 * `slip_qr` where slips carry a slip-verification QR (THB: every Thai bank slip prints one), the null validator on
 * rails without one (AUD PayID, USD and SGD bank transfers, receipts of an unknown currency).
 */
export const railDefaultValidator: ReceiptValidator = {
  kind: 'slip_qr',
  validate: (check) => (check.currency === 'THB' ? slipQrValidator : nullValidator).validate(check),
};

/** `RECEIPT_VALIDATOR` picks the validator; config validation already demanded EasySlip's URL and key. */
export function createValidatorFromConfig(
  config: Pick<Config, 'receipt_validator' | 'easyslip_base_url' | 'easyslip_api_key' | 'easyslip_timeout_ms'>,
): ReceiptValidator {
  if (config.receipt_validator === 'easyslip') {
    return createEasySlipValidator({
      base_url: present(config.easyslip_base_url, 'config requires EASYSLIP_BASE_URL for the easyslip validator'),
      api_key: present(config.easyslip_api_key, 'config requires EASYSLIP_API_KEY for the easyslip validator'),
      timeout_ms: config.easyslip_timeout_ms,
    });
  }
  if (config.receipt_validator === 'null_validator') return nullValidator;
  return railDefaultValidator;
}
