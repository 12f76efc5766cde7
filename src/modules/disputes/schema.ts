import { Type, type Static } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.ts';

/** A dispute and its event log as the API shows them: the response schemas, and the view types derived from them. */

const Status = Type.Union([
  Type.Literal('opened'),
  Type.Literal('investigating'),
  Type.Literal('resolved'),
  Type.Literal('escalated'),
]);
const Kind = Type.Union([
  Type.Literal('cash_leg_failure'),
  Type.Literal('merchant_dispute'),
  Type.Literal('chargeback'),
]);
export const Outcome = Type.Union([
  Type.Literal('favor_merchant'),
  Type.Literal('favor_counterparty'),
  Type.Literal('no_action'),
]);
const Effect = Type.Union(
  [
    Type.Literal('return_to_seller'),
    Type.Literal('return_to_buyers'),
    Type.Literal('complete_cash_leg'),
    Type.Literal('fail_cash_leg'),
    Type.Literal('none'),
    Type.Literal('mint'),
    Type.Literal('burn'),
  ],
  {
    description:
      "What the resolution did to PAY: the disputed fills' PAY back from their buyers to the seller, the paid fills' PAY back from the seller to their buyers, the order in flight completed or failed as its cash leg, or nothing (mint and burn: resolutions made before resolutions followed the fiat)",
  },
);
export const DisputeSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  merchant_id: Type.String(),
  is_sandbox: Type.Boolean(),
  sell_order_id: Type.String({ format: 'uuid' }),
  kind: Kind,
  status: Status,
  notes: Type.String(),
  opened_by_user_id: Type.String(),
  opened_by: Type.Union([Type.Literal('seller'), Type.Literal('buyer'), Type.Literal('gateway')], {
    description:
      "seller: the sell order's owner; buyer: a merchant whose buy order filled it; gateway: the auto-open switch or an operator's chargeback",
  }),
  opened_by_merchant_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The merchant who opened it (null when the gateway did)',
  }),
  outcome: Type.Union([Outcome, Type.Null()]),
  resolution: Type.Union([
    Type.Object({
      outcome: Outcome,
      ledger_effect: Effect,
      amount_micro_pay: Type.Union([Type.Integer(), Type.Null()]),
      ledger_transfer_id: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  created_at: Timestamp,
  investigating_at: NullableTimestamp,
  escalated_at: NullableTimestamp,
  resolved_at: NullableTimestamp,
});

export const DisputeEventSchema = Type.Object({
  id: Type.String(),
  seq: Type.Integer(),
  action: Type.Union([
    Type.Literal('opened'),
    Type.Literal('investigating'),
    Type.Literal('escalated'),
    Type.Literal('resolved'),
  ]),
  from_status: Type.Union([Status, Type.Null()]),
  to_status: Status,
  actor_user_id: Type.String(),
  actor_role: Type.String(),
  notes: Type.Union([Type.String(), Type.Null()]),
  details: Type.Record(Type.String(), Type.Unknown()),
  created_at: Timestamp,
});

export type DisputeView = Static<typeof DisputeSchema>;
export type DisputeEventView = Static<typeof DisputeEventSchema>;
