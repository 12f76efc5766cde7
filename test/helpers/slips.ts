import { newSlipReference, slipImage, type SlipImageOptions } from '../../src/modules/sandbox/slip-image.ts';

export { newSlipReference, slipImage, slipPayload } from '../../src/modules/sandbox/slip-image.ts';

/** A slip image with a new bank reference (PNG unless asked otherwise): what a buyer's bank app produces. */
export function newSlip(options: Partial<SlipImageOptions> = {}): { reference: string; bytes: Buffer } {
  const reference = options.reference ?? newSlipReference();
  return { reference, bytes: slipImage({ ...options, reference }) };
}
