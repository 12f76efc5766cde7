/**
 * One service per rail. Medusa names each provider `pp_<identifier>_<id>`: with `id: "mpay"` in `medusa-config.ts`,
 * `pp_mpay-promptpay_mpay`, `pp_mpay-payid_mpay` and `pp_mpay-bank-transfer_mpay`.
 */
import { MpayPaymentProvider, type MpayPaymentMethod } from './provider.ts';

/** THB by PromptPay QR. */
export class MpayPromptPayService extends MpayPaymentProvider {
  static override identifier = 'mpay-promptpay';
  protected readonly paymentMethod: MpayPaymentMethod = 'promptpay';
}

/** AUD by PayID. */
export class MpayPayIdService extends MpayPaymentProvider {
  static override identifier = 'mpay-payid';
  protected readonly paymentMethod: MpayPaymentMethod = 'payid';
}

/** A bank transfer (THB, USD, SGD, AUD accounts). */
export class MpayBankTransferService extends MpayPaymentProvider {
  static override identifier = 'mpay-bank-transfer';
  protected readonly paymentMethod: MpayPaymentMethod = 'bank_transfer';
}
