import { Type, type Static } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.ts';

/** Webhook endpoints, events and deliveries as the API shows them: the response schemas, and the view types derived from them. */

export const DeliveryStatusSchema = Type.Union([
  Type.Literal('pending'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
  Type.Literal('skipped'),
]);
export const Description = Type.Union([Type.String({ maxLength: 500 }), Type.Null()]);

export const EndpointSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  description: Description,
  enabled_events: Type.Array(Type.String()),
  disabled: Type.Boolean(),
  is_default: Type.Boolean({ description: 'The endpoint PUT /v1/webhook-endpoint sets' }),
  mode: Type.Union([Type.Literal('live'), Type.Literal('sandbox')]),
  previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
    description: 'After a rotation the previous secret also signs until then',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const EventSchema = Type.Object({
  id: Type.String(),
  type: Type.String(),
  resource_type: Type.String(),
  resource_id: Type.String(),
  created_at: Timestamp,
  delivery_status: Type.Union([DeliveryStatusSchema, Type.Null()]),
  payload: Type.Object({}, { additionalProperties: true, description: 'The envelope as delivered' }),
});

export const AttemptSchema = Type.Object({
  attempt_number: Type.Integer(),
  url: Type.String(),
  succeeded: Type.Boolean(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
  response_excerpt: Type.Union([Type.String(), Type.Null()]),
  started_at: Timestamp,
});

export const DeliverySchema = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  endpoint_id: Type.Union([Type.String(), Type.Null()], {
    description: 'null: no endpoint was subscribed (status skipped)',
  }),
  event_type: Type.String(),
  resource_id: Type.String(),
  status: DeliveryStatusSchema,
  attempt_count: Type.Integer(),
  next_attempt_at: NullableTimestamp,
  last_attempt_at: NullableTimestamp,
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  delivered_at: NullableTimestamp,
  created_at: Timestamp,
  attempts: Type.Array(AttemptSchema),
});

export type EndpointView = Static<typeof EndpointSchema>;
export type EventView = Static<typeof EventSchema>;
export type AttemptView = Static<typeof AttemptSchema>;
export type DeliveryView = Static<typeof DeliverySchema>;
