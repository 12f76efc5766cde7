import { adminActionsOf } from '../../audit/service.ts';
import { expectedAccount } from '../accounts.ts';
import type { Expected, Flow } from './flow.ts';

/**
 * Live sellers' funding: the mint at creation (`seller:<id>:funding`, world -> the seller; its amount is the first
 * liquidity's worth, which no row keeps, so any positive amount) and each operator funding (`seller.funding` audit
 * rows name their key and amount).
 */
export const sellersFlow: Flow = {
  name: 'sellers',
  async derive(executor) {
    const sellers = await executor
      .selectFrom('sellers')
      .select(['id', 'is_sandbox'])
      .where('synthetic', '=', false)
      .execute();
    const expected: Expected[] = sellers.map((seller) => ({
      key: `seller:${seller.id}:funding`,
      kind: 'mint',
      debit_account: expectedAccount.world(seller.is_sandbox),
      credit_account: expectedAccount.seller(seller.id, seller.is_sandbox),
      amount_micro_pay: null,
      cause: 'seller_funding',
      supply: 'seller_funding',
      rows: [{ table: 'sellers', id: seller.id }],
    }));
    const mode = new Map(sellers.map((seller) => [seller.id, seller.is_sandbox]));
    for (const action of await adminActionsOf(executor, ['seller.funding'])) {
      const details = action.details as { amount_micro_pay?: unknown; ledger_key?: unknown };
      if (typeof details.ledger_key !== 'string' || typeof details.amount_micro_pay !== 'number') continue;
      const is_sandbox = mode.get(action.target_id) ?? false;
      expected.push({
        key: details.ledger_key,
        kind: 'mint',
        debit_account: expectedAccount.world(is_sandbox),
        credit_account: expectedAccount.seller(action.target_id, is_sandbox),
        amount_micro_pay: details.amount_micro_pay,
        cause: 'seller_funding',
        supply: 'seller_funding',
        rows: [
          { table: 'sellers', id: action.target_id },
          { table: 'admin_audit_log', id: action.id },
        ],
      });
    }
    return { expected, breaks: [] };
  },
};
