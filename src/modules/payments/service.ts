/**
 * The payments module's operations as the routes, the jobs and other modules call them; each lives in the file of
 * its concern: creating rows (new-payment.ts), legs and events (legs.ts), reads (reads.ts), slip intake (proofs.ts),
 * the moves outside the verdict worker (lifecycle.ts), verdicts and completion (verdicts.ts, completion.ts).
 */
export type { CreateAnswer, PaymentsDeps } from './deps.ts';
export { emitPaymentEvent, legsWithProofs, loadLegs } from './legs.ts';
export { createPayment } from './create-batch.ts';
export { cancelPayment, expireDuePayments, markCheckoutOpened } from './lifecycle.ts';
export {
  type CreatePaymentInput,
  insertPayment,
  recordSyntheticMatch,
  resolvePaymentMethod,
  toMinor,
} from './new-payment.ts';
export { proofPartsAllowed, type ProofUpload, type ProofUploadResult, uploadProof } from './proofs.ts';
export { findPaymentById, findPaymentByReceiptToken, getPayment, listPayments } from './reads.ts';
export type { LegRow, PaymentRow } from './tables.ts';
export { amountReceived } from './present.ts';
