import { adminActionsOf } from '../../audit/service.ts';
import { expectedAccount } from '../accounts.ts';
import type { Expected, Flow } from './flow.ts';

/** Audited operator adjustments: each `ledger.adjustment.*` audit row names its key, amount, mode and account. */
export const adjustmentsFlow: Flow = {
  name: 'adjustments',
  async derive(executor) {
    const expected: Expected[] = [];
    const actions = await adminActionsOf(executor, ['ledger.adjustment.credit', 'ledger.adjustment.debit']);
    for (const action of actions) {
      const details = action.details as {
        amount_micro_pay?: unknown;
        is_sandbox?: unknown;
        account?: unknown;
        ledger_key?: unknown;
      };
      if (typeof details.ledger_key !== 'string' || typeof details.amount_micro_pay !== 'number') continue;
      const is_sandbox = details.is_sandbox === true;
      const merchant =
        details.account === 'buffer'
          ? expectedAccount.buffer(action.target_id, is_sandbox)
          : expectedAccount.available(action.target_id, is_sandbox);
      const issuance = expectedAccount.adjustments(is_sandbox);
      const credit = action.action === 'ledger.adjustment.credit';
      expected.push({
        key: details.ledger_key,
        kind: credit ? 'mint' : 'burn',
        debit_account: credit ? issuance : merchant,
        credit_account: credit ? merchant : issuance,
        amount_micro_pay: details.amount_micro_pay,
        cause: 'adjustment',
        supply: 'adjustment',
        rows: [{ table: 'admin_audit_log', id: action.id }],
      });
    }
    return { expected, breaks: [] };
  },
};
