/**
 * The pending-funds module's operations as the routes, the jobs and other modules call them; each lives in the file
 * of its concern: intake and its validation (intake.ts), the receiver's confirmation and the mint it implies
 * (receiver-confirm.ts), the TTL and window sweep (sweep.ts), reads (reads.ts) and the confirm audit (audit.ts).
 */
export { getAudit, listAudit } from './audit.ts';
export type { PendingFundsDeps } from './deps.ts';
export { createPendingFunds } from './intake.ts';
export { getPendingFunds, listPendingFunds, netObligationMicroPay } from './reads.ts';
export { receiverConfirm } from './receiver-confirm.ts';
export { sweepPendingFunds } from './sweep.ts';
