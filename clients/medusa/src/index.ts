/**
 * `@mpay/medusa`: the mpay gateway as a Medusa v2 payment module provider. Register it in `medusa-config.ts` under
 * the payment module's `providers` with `resolve: "@mpay/medusa"` (see the README).
 */
import { ModuleProvider, Modules } from '@medusajs/framework/utils';
import { MpayBankTransferService, MpayPayIdService, MpayPromptPayService } from './services.ts';

export default ModuleProvider(Modules.PAYMENT, {
  services: [MpayPromptPayService, MpayPayIdService, MpayBankTransferService],
});

export { CURRENCY_EXPONENT, fromMinorUnits, toMinorUnits } from './amounts.ts';
export { idempotencyUuid } from './gateway.ts';
export {
  amountReceivedMinor,
  MpayPaymentProvider,
  sessionStatus,
  type MpayOptions,
  type MpayPaymentMethod,
} from './provider.ts';
export { MpayBankTransferService, MpayPayIdService, MpayPromptPayService } from './services.ts';
