import type { Db } from '../../db/database.ts';
import type { KeyIdentity } from '../../http/idempotency.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import type { CreatePaymentInput } from './new-payment.ts';
import type { PaymentCompletionPort, QuoteLockPort } from './ports.ts';
import type { PaymentView } from './present.ts';

export interface PaymentsDeps {
  db: Db;
  clock: Clock;
  public_base_url: string;
  completion: PaymentCompletionPort;
  quote_locks?: QuoteLockPort;
  /** Tells the worker a proof is waiting (in-process wake-up; other processes poll). */
  onProofReceived?: () => void;
  /** The process's batching allocator for creates without a quote lock (absent: every create runs alone). */
  create_batcher?: { create(job: BatchedCreate): Promise<CreateAnswer> };
}

/** What a create answers: the body the route sends, and its status when a batch made it (alone() sets its own). */
export interface CreateAnswer {
  status?: number;
  body: { success: true; data: PaymentView };
  /** `body` serialized already (a batch's answer): sent as it is. */
  json?: string;
}

/** A create request as the batcher takes it (create-batch.ts). */
export interface BatchedCreate {
  scope: MerchantScope;
  input: CreatePaymentInput;
  /** The request's idempotency identity when it carries a key (see idempotencyRequest). */
  idempotency: { identity: KeyIdentity; fingerprint: string } | undefined;
  /**
   * The credential epoch the request's credential was verified under (auth.ts withCarriedEpoch), which the batch's
   * call must still see; undefined when there is nothing to check (no request, or authenticated again meanwhile).
   */
  credential_epoch?: number | undefined;
  /** The request on its own (createAlone): a used key, or a batch that refused or failed; it authenticates again first when its credential epoch is unchecked. */
  alone: () => Promise<CreateAnswer>;
}
