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
const Effect = Type.Union([Type.Literal('mint'), Type.Literal('burn'), Type.Literal('none')]);
export const DisputeSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  merchant_id: Type.String(),
  is_sandbox: Type.Boolean(),
  sell_order_id: Type.String({ format: 'uuid' }),
  kind: Kind,
  status: Status,
  notes: Type.String(),
  opened_by_user_id: Type.String(),
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
