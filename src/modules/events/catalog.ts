/**
 * Every webhook event type the outbox can carry, with the resource its `data` holds. The OpenAPI `webhooks` section
 * and the SDK's typed payloads are built from this list; the test suite checks every event it records against it.
 */
export const EVENT_TYPES = {
  'payment.matched': { resource: 'Payment', description: 'Liquidity was allocated; the buyer can pay' },
  'payment.payment_pending': { resource: 'Payment', description: 'The buyer opened the checkout' },
  'payment.confirming': { resource: 'Payment', description: 'A proof was uploaded; the receipt validator runs' },
  'payment.completed': { resource: 'Payment', description: 'The receipt was verified; PAY moved to the merchant' },
  'payment.failed': { resource: 'Payment', description: 'The receipt was rejected (`failure_reason`)' },
  'payment.partially_paid': {
    resource: 'Payment',
    description:
      'Some legs were verified and the others rejected or never paid: the verified legs completed (`amount_received`), the rest released; refund the buyer or fulfil part of the order',
  },
  'leg.awaiting_payee': {
    resource: 'SellerLeg',
    description:
      "A leg's slip passed the local checks, which do not prove payment: the payment waits for the leg's seller to confirm that the money arrived",
  },
  'payment.expired': { resource: 'Payment', description: 'Nobody paid before `expires_at`' },
  'payment.cancelled': { resource: 'Payment', description: 'The merchant cancelled the payment' },
  'payment.refunded': {
    resource: 'Payment',
    description: 'Succeeded refunds now add up to what the payment received (`refunded: true`)',
  },
  'refund.created': {
    resource: 'Refund',
    description: 'A refund was created: `requires_action` (its claim link waits for the buyer) or `pending`',
  },
  'refund.updated': { resource: 'Refund', description: "The refund's status changed (every change)" },
  'refund.succeeded': { resource: 'Refund', description: 'The money reached the buyer' },
  'refund.failed': { resource: 'Refund', description: 'The refund failed (`failure_reason`); a PAY hold went back' },
  'refund.canceled': {
    resource: 'Refund',
    description: 'The merchant canceled the refund, or its claim link expired unclaimed; a PAY hold went back',
  },
  'payment_link.created': { resource: 'PaymentLink', description: 'A payment link was created' },
  'payment_link.updated': { resource: 'PaymentLink', description: 'A payment link changed (it was deactivated)' },
  'sell_order.cash_leg_requested': {
    resource: 'SellOrder',
    description:
      "Your sell order was matched: expect each buyer's transfer (`data.cash_leg.fills`: amount, reference, buyer) into your payout destination (`data.cash_leg.to`), then confirm each with its slip",
  },
  'sell_order.completed': {
    resource: 'SellOrder',
    description: "Every buyer's transfer was confirmed; the reserved PAY was burned",
  },
  'sell_order.failed': {
    resource: 'SellOrder',
    description: 'The sell order failed; its reserve went back to available',
  },
  'buy_order.created': { resource: 'BuyOrder', description: 'A buy order is waiting for the matcher' },
  'buy_order.partially_filled': {
    resource: 'BuyOrder',
    description:
      'Part of the buy order was filled (`filled_micro_pay`); PAY for that part was minted; pay each seller per `fills` (whom, how much, reference, QR); the rest waits',
  },
  'buy_order.matched': {
    resource: 'BuyOrder',
    description:
      'The buy order was filled; PAY was minted to you; now pay each seller per `fills` (whom, how much, reference, QR)',
  },
  'buy_order.cancelled': { resource: 'BuyOrder', description: 'The merchant cancelled the buy order' },
  'buy_order.expired': { resource: 'BuyOrder', description: 'The buy order expired unfilled' },
  'gateway.dispute.opened': {
    resource: 'Dispute',
    description:
      'A dispute was opened on a sell order (`kind`: merchant_dispute by the merchant, cash_leg_failure by the auto-open switch right after `sell_order.failed`, chargeback by an operator when the payout rail reversed the cash leg)',
  },
  'gateway.dispute.escalated': { resource: 'Dispute', description: 'An operator escalated the dispute' },
  'gateway.dispute.resolved': { resource: 'Dispute', description: 'The dispute was resolved (`outcome`)' },
  'pending_funds.validated': {
    resource: 'PendingFunds',
    description: 'The receipt was validated; the receiver can confirm',
  },
  'pending_funds.confirmed': { resource: 'PendingFunds', description: 'The receiver confirmed; PAY was credited' },
  'pending_funds.failed': { resource: 'PendingFunds', description: "Validation or the receiver's confirmation failed" },
  'pending_funds.expired': { resource: 'PendingFunds', description: 'Nobody confirmed within the TTL' },
  'settlement.completed': { resource: 'Settlement', description: 'A settlement batch completed' },
  'settlement.failed': { resource: 'Settlement', description: 'An operator marked the batch failed' },
  'settlement.retried': {
    resource: 'Settlement',
    description:
      'An operator paid a failed batch out again: it is completed again (`retry_count`); `settlement.completed` is sent once per batch',
  },
  'settlement.adjusted': { resource: 'Settlement', description: 'An operator adjusted the batch' },
  'webhook.test': {
    resource: 'WebhookEndpoint',
    description: 'A test event sent from the dashboard to this one endpoint (`data` is the endpoint)',
  },
} as const satisfies Record<string, { resource: string; description: string }>;

export type EventType = keyof typeof EVENT_TYPES;

type Json = Record<string, unknown>;

/** The contract's flat fields beside `data` (payment and settlement events). */
const FLAT_FIELDS: Record<string, Json> = {
  Payment: {
    payment_id: { type: 'string' },
    order_id: { type: 'string' },
    amount: { type: 'integer', description: 'Minor units' },
    currency: { type: 'string' },
    status: { type: 'string' },
    match_details: {
      type: 'array',
      items: { type: 'object' },
      description: 'Present on partial fills (more than one leg)',
    },
  },
  Settlement: {
    settlement_id: { type: 'string' },
    amount: { type: 'integer', description: 'Net amount in minor units' },
    currency: { type: 'string' },
    status: { type: 'string' },
    payment_count: { type: 'integer' },
  },
};

const FLAT_REQUIRED: Record<string, string[]> = {
  Payment: ['payment_id', 'order_id', 'amount', 'currency', 'status'],
  Settlement: ['settlement_id', 'amount', 'currency', 'status', 'payment_count'],
};

/** The envelope schema of one event type (docs/webhooks.md, Envelope). */
export function eventEnvelopeSchema(type: EventType): Json {
  const { resource } = EVENT_TYPES[type];
  return {
    type: 'object',
    required: ['id', 'event', 'type', 'idempotency_key', 'timestamp', 'data', ...(FLAT_REQUIRED[resource] ?? [])],
    properties: {
      id: { type: 'string', pattern: '^evt_', description: 'Event id; the same on every delivery of this event' },
      event: { type: 'string', const: type },
      type: { type: 'string', const: type },
      idempotency_key: { type: 'string', description: 'Equals `id`: deduplicate on it' },
      timestamp: { type: 'string', format: 'date-time' },
      sandbox: { type: 'boolean', const: true, description: 'Present on sandbox events only' },
      data: { $ref: `#/components/schemas/${resource}` },
      ...FLAT_FIELDS[resource],
    },
  };
}

const SIGNATURE_HEADERS = [
  { name: 'X-Service-Signature', description: "Lowercase hex HMAC-SHA256 of the raw body with the endpoint's secret" },
  { name: 'webhook-id', description: 'Standard Webhooks: the event id' },
  { name: 'webhook-timestamp', description: 'Standard Webhooks: unix seconds when signed' },
  {
    name: 'webhook-signature',
    description:
      'Standard Webhooks: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` (space-separated during a secret rotation)',
  },
];

/** The OpenAPI 3.1 `webhooks` section: one POST per event type, each with its payload schema. */
export function webhooksSection(): Json {
  const section: Json = {};
  for (const [type, { description }] of Object.entries(EVENT_TYPES)) {
    section[type] = {
      post: {
        operationId: `webhook_${type.replace(/\./g, '_')}`,
        summary: type,
        description: `${description}. Verify the signature before trusting the body; answer 2xx within 10 s (anything else is retried for about 3 days).`,
        tags: ['webhooks'],
        security: [],
        parameters: SIGNATURE_HEADERS.map((header) => ({
          ...header,
          in: 'header',
          required: true,
          schema: { type: 'string' },
        })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: eventEnvelopeSchema(type as EventType) } },
        },
        responses: { '200': { description: 'Any 2xx acknowledges the delivery' } },
      },
    };
  }
  return section;
}
