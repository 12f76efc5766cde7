import { expectedAccount } from '../accounts.ts';
import type { Expected, Flow } from './flow.ts';

/** A receiver-confirmed pending-funds row mints its amount to the receiver (key = the row id, the world account). */
export const pendingFundsFlow: Flow = {
  name: 'pending_funds',
  async derive(executor) {
    const rows = await executor
      .selectFrom('pending_funds')
      .select(['id', 'is_sandbox', 'receiver_merchant_id', 'amount_minor'])
      .where('status', '=', 'confirmed')
      .execute();
    const expected = rows.map(
      (row): Expected => ({
        key: row.id,
        kind: 'mint',
        debit_account: expectedAccount.world(row.is_sandbox),
        credit_account: expectedAccount.available(row.receiver_merchant_id, row.is_sandbox),
        amount_micro_pay: Number(row.amount_minor),
        cause: 'pending_funds',
        supply: 'pending_funds',
        rows: [{ table: 'pending_funds', id: row.id }],
      }),
    );
    return { expected, breaks: [] };
  },
};
