import type { Db, Executor, Trx } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { Currency } from '../../lib/money.ts';
import type { BankDirectory } from '../reference/banks.ts';
import {
  parsePayoutDestination,
  payoutDestinationInvalid,
  railCarries,
  type PayoutDestination,
  type PayoutDestinationInput,
} from '../reference/payout-destinations.ts';

/** A merchant's default payout destination (per mode): what a sell order naming none is paid to. */
export interface DefaultPayoutDestinationView {
  destination: PayoutDestination;
  updated_at: string;
}

export const noDefaultPayoutDestination = () =>
  new AppError('NOT_FOUND', 'No default payout destination is set; PUT /v1/merchants/me/payout-destination sets one');

export async function setDefaultPayoutDestination(
  deps: { db: Db; clock: Clock; banks: BankDirectory },
  scope: MerchantScope,
  input: PayoutDestinationInput,
): Promise<DefaultPayoutDestinationView> {
  const destination = await parsePayoutDestination(input, { banks: deps.banks, prefix: 'body' });
  const now = deps.clock.now();
  await deps.db
    .insertInto('merchant_payout_destinations')
    .values({
      merchant_id: scope.merchant_id,
      is_sandbox: scope.is_sandbox,
      destination: JSON.stringify(destination),
      updated_at: now,
    })
    .onConflict((conflict) =>
      conflict
        .columns(['merchant_id', 'is_sandbox'])
        .doUpdateSet({ destination: JSON.stringify(destination), updated_at: now }),
    )
    .execute();
  return { destination, updated_at: now.toISOString() };
}

async function findDefault(executor: Executor, scope: MerchantScope) {
  return executor
    .selectFrom('merchant_payout_destinations')
    .selectAll()
    .where('merchant_id', '=', scope.merchant_id)
    .where('is_sandbox', '=', scope.is_sandbox)
    .executeTakeFirst();
}

export async function getDefaultPayoutDestination(
  deps: { db: Db },
  scope: MerchantScope,
): Promise<DefaultPayoutDestinationView> {
  const row = await findDefault(deps.db, scope);
  if (!row) throw noDefaultPayoutDestination();
  return { destination: row.destination, updated_at: row.updated_at.toISOString() };
}

/**
 * The destination of a new sell order: the one it names (checked against its rail and currency), else the merchant's
 * default when its rail carries the currency; neither is 400 naming `body.payout_destination`.
 */
export async function resolvePayoutDestination(
  trx: Trx,
  banks: BankDirectory,
  scope: MerchantScope,
  input: { payout_destination?: PayoutDestinationInput | undefined; target_currency: Currency },
): Promise<PayoutDestination> {
  if (input.payout_destination)
    return parsePayoutDestination(input.payout_destination, {
      banks,
      currency: input.target_currency,
      prefix: 'body.payout_destination',
      executor: trx,
    });
  const fallback = await findDefault(trx, scope);
  if (!fallback) {
    throw payoutDestinationInvalid([
      {
        field: 'body.payout_destination',
        message: 'is required: name where you are paid, or set a default with PUT /v1/merchants/me/payout-destination',
      },
    ]);
  }
  if (!railCarries(fallback.destination, input.target_currency)) {
    throw payoutDestinationInvalid([
      {
        field: 'body.payout_destination',
        message: `is required: your default destination (${fallback.destination.rail}) does not carry ${input.target_currency}`,
      },
    ]);
  }
  return fallback.destination;
}
