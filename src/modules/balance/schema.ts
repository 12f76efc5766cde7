import { Type, type Static } from 'typebox';
import { NullableTimestamp } from '../../http/schemas.ts';

/** A merchant's PAY balance as the API shows it (and, for operators, its deficit inputs): the response schemas, and their types. */

const BalanceFields = {
  available_micro_pay: Type.Integer({ description: 'Ledger balance of the available account' }),
  buffer_micro_pay: Type.Integer({ description: 'Ledger balance of the buffer account' }),
  refund_hold_micro_pay: Type.Integer({
    description:
      'PAY held for refunds paid from your balance (funding pay_balance) until each is paid out or given back',
  }),
  net_obligation_micro_pay: Type.Integer({ description: 'Sum of validated-pending receiver obligations' }),
  deficit_micro_pay: Type.Integer({ description: 'max(0, buffer threshold - (available + buffer - net obligation))' }),
  unconfirmed_fills_micro_pay: Type.Integer({
    description:
      'PAY in available from buy-order fills whose cash leg is not confirmed yet: it cannot be cashed out (a sell order reserves at most available less this)',
  }),
  shortfall_micro_pay: Type.Integer({
    description:
      'PAY the merchant owes and has not paid back yet (taken back after it was spent); collected from its next credits before they become available',
  }),
  apr_bps: Type.Integer({ description: 'Prospective penalty APR in basis points' }),
  entry_fee_usd: Type.String({ description: 'USD-quoted, settled in PAY' }),
  countdown_days: Type.Union([Type.Integer(), Type.Null()], { description: 'Grace days left; null without a deficit' }),
};

export const BalanceSchema = Type.Object(BalanceFields);

export const DeficitSchema = Type.Object({
  merchant_id: Type.String(),
  ...BalanceFields,
  buffer_threshold_micro_pay: Type.Integer(),
  buffer_last_recalc_at: NullableTimestamp,
  trailing_30d_volume_micro_pay: Type.Integer(),
});

export type BalanceView = Static<typeof BalanceSchema>;
export type DeficitView = Static<typeof DeficitSchema>;
