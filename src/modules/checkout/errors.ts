import { AppError } from '../../lib/errors.ts';

/** Every refusal of the hosted checkout, one named factory each. */

export const promptPayQrThbOnly = (currency: string) =>
  new AppError('NOT_TH', `PromptPay QR codes exist only for THB payments; this one is ${currency}`);
export const legNotPromptPay = () =>
  new AppError('PAYMENT_BAD_STATE', 'This leg is paid by bank transfer, not PromptPay');
