import { Type, type Static } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.ts';

/** Pending funds and their validator audit as the API shows them: the response schemas, and the view types derived from them. */

export const StatusSchema = Type.Union([
  Type.Literal('pending_validation'),
  Type.Literal('validated_pending_receiver_confirm'),
  Type.Literal('confirmed'),
  Type.Literal('failed'),
  Type.Literal('expired'),
]);
export const OutcomeSchema = Type.Union([
  Type.Literal('verified'),
  Type.Literal('failed'),
  Type.Literal('unverified'),
  Type.Literal('timeout'),
]);
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const PendingFundsSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  receiver_merchant_id: Type.String({ format: 'uuid' }),
  status: StatusSchema,
  amount_minor: Type.Integer({ description: 'micro-PAY minted to the receiver on confirmation' }),
  failure_reason: Nullable(Type.String()),
  payer_reference: Type.String(),
  fiat_amount_minor: Nullable(Type.Integer()),
  fiat_currency: Nullable(Type.String()),
  validator_kind: Nullable(Type.String()),
  attempts: Type.Integer({ description: 'Receiver-confirm calls applied to the row' }),
  unverified_attempts: Type.Integer({
    description: 'Unverified outcomes; reaching RECEIVER_CONFIRM_MAX_ATTEMPTS fails the row',
  }),
  expires_at: Timestamp,
  receiver_confirm_window_expires_at: NullableTimestamp,
  ledger_transfer_id: Nullable(Type.String()),
  is_sandbox: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
  validated_at: NullableTimestamp,
  confirmed_at: NullableTimestamp,
  failed_at: NullableTimestamp,
  expired_at: NullableTimestamp,
  intake_attempts: Type.Integer({
    description:
      'Validator calls at intake: the first, then background revalidations after an unverified or timeout verdict',
  }),
  next_intake_attempt_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When the next background revalidation is due (pending_validation only); null when none is',
  }),
});

const AuditSummary = {
  id: Type.String({ format: 'uuid' }),
  pending_funds_id: Type.String({ format: 'uuid' }),
  stage: Type.Union([Type.Literal('intake'), Type.Literal('receiver_confirm')]),
  outcome: OutcomeSchema,
  validator_kind: Type.Union([Type.Literal('null_validator'), Type.Literal('easyslip'), Type.Literal('slip_qr')]),
  failure_reason: Nullable(Type.String()),
  observed_amount_minor: Nullable(Type.Integer({ description: 'Amount read off the receipt (audit only)' })),
  provider_reference: Nullable(Type.String()),
  receipt_sha256: Type.String(),
  content_type: Type.String(),
  status_before: Type.String(),
  status_after: Type.String(),
  applied: Type.Boolean({ description: 'False when the row had already changed status when this result arrived' }),
  actor_merchant_id: Nullable(Type.String()),
  created_at: Timestamp,
  archived: Type.Boolean({
    description:
      'True once the audit-archival job copied the row to the archive (rows older than 90 days); the row is never removed',
  }),
  archived_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When the audit-archival job archived the row (rows older than 90 days); null for a live row',
  }),
};
export const AuditRowSchema = Type.Object(AuditSummary);
export const AuditFullSchema = Type.Object({
  ...AuditSummary,
  validator_response: Type.Object({}, { additionalProperties: true }),
});

export type PendingFundsView = Static<typeof PendingFundsSchema>;
export type PendingFundsAuditView = Static<typeof AuditRowSchema>;
export type PendingFundsAuditFullView = Static<typeof AuditFullSchema>;
