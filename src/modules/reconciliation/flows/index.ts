import { adjustmentsFlow } from './adjustments.ts';
import { disputesFlow } from './disputes.ts';
import type { Flow } from './flow.ts';
import { orderBookFlow } from './order-book.ts';
import { paymentsFlow } from './payments.ts';
import { pendingFundsFlow } from './pending-funds.ts';
import { refundsFlow } from './refunds.ts';
import { sellersFlow } from './sellers.ts';
import { shortfallsFlow } from './shortfalls.ts';

/** Every flow that moves PAY; a new flow adds its file here. */
export const FLOWS: readonly Flow[] = [
  paymentsFlow,
  pendingFundsFlow,
  orderBookFlow,
  sellersFlow,
  adjustmentsFlow,
  disputesFlow,
  shortfallsFlow,
  refundsFlow,
];
