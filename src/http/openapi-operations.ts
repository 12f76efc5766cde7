/**
 * What the OpenAPI document says about individual operations: tags, stable operationIds, `Idempotency-Key`,
 * request examples and the few responses no route schema states. openapi.ts applies them to the generated document.
 */

export type Json = Record<string, unknown>;

/**
 * Declared tags with their descriptions, in the order the docs show them. A route's tag must be one of these (a test
 * checks it).
 */
const TAG_DESCRIPTIONS: Record<string, string> = {
  payments: 'Payments and trades: create (idempotent), read, list, cancel, upload a proof, the checkout view-model',
  seller:
    "A seller's own routes (its key, sel_live_…): the payment legs that wait for its confirmation that the money arrived, their slips, confirm and reject",
  checkout: 'The hosted checkout page the buyer opens (HTML, Thai and English) and its status poll',
  'payment-links': 'Payment links: a page to share that makes a payment on each use, and its public page (HTML)',
  receipts: "Receipts: a completed payment's printable page (HTML, Thai and English)",
  promptpay: 'PromptPay EMVCo payloads and QR images',
  fx: 'Reference prices and quote locks held for a trade',
  rates: 'Seller rates per currency and payment method',
  balance: "A merchant's PAY balance, buffer and deficit",
  'sell-orders': 'Merchant sell orders: PAY out for fiat, the cash leg and its confirmation',
  'buy-orders': 'Merchant buy orders: fiat in for PAY, matched by price and time',
  disputes: 'Disputes on sell orders, with their event log',
  'pending-funds': "Incoming funds waiting for the receiver's confirmation",
  refunds: "Refunds of payments: create, list, read, cancel, the merchant's slip; the buyer's claim page",
  settlements: 'Settlement batches of completed payments and their CSV export',
  webhooks: 'The webhook endpoint, its secret, events and delivery history (payloads: see the `webhooks` section)',
  sandbox: 'Sandbox scenarios for test and sandbox keys',
  auth: 'Credentials: trade a secret API key for a short-lived merchant JWT',
  merchants: 'The calling merchant',
  reference: 'Reference data: Thai banks',
  admin: 'Operator routes (ADMIN_SERVICE_TOKEN with X-Actor-User-Id and X-Actor-Role: super_admin)',
  ledger: 'The PAY ledger service API (internal service token)',
  ops: 'Liveness and readiness probes',
};

export const TAGS: { name: string; description: string }[] = Object.entries(TAG_DESCRIPTIONS).map(
  ([name, description]) => ({ name, description }),
);

/**
 * Stable operationIds (the SDK's method names). A route not listed here takes `config.operation_id`, else a name
 * derived from its method and path; a test checks that every id is unique.
 */
export const OPERATION_IDS: Record<string, string> = {
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'GET /v1/merchants/me': 'getCurrentMerchant',
  'POST /v1/auth/token': 'createAccessToken',
  'POST /admin/merchants': 'adminCreateMerchant',
  'POST /admin/merchants/{id}/tokens': 'adminCreateMerchantToken',
  'POST /admin/merchants/{id}/sessions': 'adminCreateMerchantSession',
  'GET /v1/rates': 'listRates',
  'POST /admin/sellers': 'adminCreateSeller',
  'POST /internal/ledger/transfers': 'ledgerTransfer',
  'POST /internal/ledger/balances': 'ledgerBalances',
  'POST /internal/ledger/credited': 'ledgerCredited',
  'GET /internal/ledger/verify': 'ledgerVerify',
  'POST /admin/merchants/{id}/ledger-adjustments': 'adminCreateLedgerAdjustment',
  'GET /admin/ledger/verify': 'adminVerifyLedger',
  'GET /admin/ledger/accounts/{name}': 'adminGetLedgerAccount',
  'POST /internal/pending-funds': 'internalCreatePendingFunds',
  'GET /v1/pending-funds': 'listPendingFunds',
  'GET /v1/pending-funds/{id}': 'getPendingFunds',
  'POST /v1/pending-funds/{id}/receiver-confirm': 'confirmPendingFunds',
  'GET /admin/audit/receiver-confirm': 'adminListReceiverConfirmAudit',
  'GET /admin/audit/receiver-confirm/{id}': 'adminGetReceiverConfirmAudit',
  'GET /v1/merchants/{id}/balance': 'getMerchantBalance',
  'GET /admin/merchants/{id}/deficit': 'adminGetMerchantDeficit',
  'GET /v1/reference/thai-banks': 'listThaiBanks',
  'POST /v1/promptpay/qr': 'createPromptPayPayload',
  'PUT /v1/webhook-endpoint': 'setWebhookEndpoint',
  'GET /v1/webhook-endpoint': 'getWebhookEndpoint',
  'POST /v1/webhook-endpoint/rotate-secret': 'rotateWebhookSecret',
  'POST /v1/webhook-endpoints': 'createWebhookEndpoint',
  'GET /v1/webhook-endpoints': 'listWebhookEndpoints',
  'GET /v1/webhook-endpoints/{id}': 'getWebhookEndpointById',
  'PATCH /v1/webhook-endpoints/{id}': 'updateWebhookEndpoint',
  'DELETE /v1/webhook-endpoints/{id}': 'deleteWebhookEndpoint',
  'POST /v1/webhook-endpoints/{id}/rotate-secret': 'rotateWebhookEndpointSecret',
  'POST /v1/sandbox/events': 'triggerSandboxEvent',
  'GET /v1/events': 'listEvents',
  'GET /v1/webhook-deliveries': 'listWebhookDeliveries',
  'POST /v1/webhook-deliveries/{id}/redeliver': 'redeliverWebhook',
  'POST /v1/webhook-deliveries/recover': 'recoverWebhookDeliveries',
  'POST /v1/sandbox/payments/simulate': 'simulateSandboxPayment',
  'GET /checkout/{id}': 'getCheckoutPage',
  'GET /checkout/{id}/status': 'getCheckoutStatus',
  'POST /checkout/{id}/proof': 'uploadCheckoutProof',
  'GET /v1/settlements': 'listSettlements',
  'GET /v1/settlements/{id}': 'getSettlement',
  'GET /v1/settlements/{id}/payments': 'listSettlementPayments',
  'GET /v1/settlements/{id}/export.csv': 'exportSettlementCsv',
  'POST /admin/settlements/run': 'adminRunSettlements',
  'POST /admin/settlements/{id}/fail': 'adminFailSettlement',
  'POST /admin/settlements/{id}/retry': 'adminRetrySettlement',
  'POST /admin/settlements/{id}/adjustments': 'adminAdjustSettlement',
  'GET /admin/settlements/{id}/audit-log': 'adminGetSettlementAuditLog',
  'GET /v1/fx/reference-prices': 'getReferencePrice',
  'POST /v1/fx/quote-locks': 'createQuoteLock',
  'GET /v1/fx/quote-locks/{id}': 'getQuoteLock',
  'PUT /admin/fx/reference-prices': 'adminSetReferencePrice',
  'GET /v1/merchant-sell-orders': 'listSellOrders',
  'POST /v1/merchant-sell-orders': 'createSellOrder',
  'GET /v1/merchant-sell-orders/{id}': 'getSellOrder',
  'POST /v1/merchant-sell-orders/{id}/confirm-cash-leg': 'confirmSellOrderCashLeg',
  'POST /v1/merchant-sell-orders/{id}/cancel': 'cancelSellOrder',
  'GET /v1/merchant-buy-orders': 'listBuyOrders',
  'POST /v1/merchant-buy-orders': 'createBuyOrder',
  'GET /v1/merchant-buy-orders/{id}': 'getBuyOrder',
  'POST /v1/merchant-buy-orders/{id}/cancel': 'cancelBuyOrder',
  'GET /v1/merchant-disputes': 'listDisputes',
  'POST /v1/merchant-disputes': 'createDispute',
  'GET /v1/merchant-disputes/{id}': 'getDispute',
  'GET /admin/disputes': 'adminListDisputes',
  'GET /admin/disputes/{id}': 'adminGetDispute',
  'POST /admin/disputes/{id}/investigate': 'adminInvestigateDispute',
  'POST /admin/disputes/{id}/escalate': 'adminEscalateDispute',
  'POST /admin/disputes/{id}/resolve': 'adminResolveDispute',
  'POST /v1/payments': 'createPayment',
  'GET /v1/payments': 'listPayments',
  'POST /v1/trades': 'createTrade',
  'GET /v1/trades/{id}': 'getTrade',
  'GET /v1/payments/{id}': 'getPayment',
  'GET /v1/payments/{id}/checkout': 'getPaymentCheckout',
  'POST /v1/payments/{id}/cancel': 'cancelPayment',
  'POST /v1/payments/{id}/proof': 'uploadPaymentProof',
  'GET /v1/payments/{id}/promptpay-qr': 'getPaymentPromptPayQr',
  'GET /v1/merchants/me/payout-destination': 'getPayoutDestination',
  'PUT /v1/merchants/me/payout-destination': 'setPayoutDestination',
  'GET /v1/merchant-buy-orders/{id}/fills/{n}/qr.png': 'getBuyOrderFillQr',
  'POST /v1/payments/{id}/refunds': 'createRefund',
  'GET /v1/refunds': 'listRefunds',
  'GET /v1/refunds/{id}': 'getRefund',
  'POST /v1/refunds/{id}/cancel': 'cancelRefund',
  'POST /v1/refunds/{id}/proof': 'uploadRefundProof',
  'POST /v1/sandbox/refunds/{id}/simulate': 'simulateSandboxRefund',
  'GET /refunds/claim/{token}': 'getRefundClaimPage',
  'POST /refunds/claim/{token}': 'submitRefundClaim',
  'POST /v1/payment-links': 'createPaymentLink',
  'GET /v1/payment-links': 'listPaymentLinks',
  'GET /v1/payment-links/{id}': 'getPaymentLink',
  'POST /v1/payment-links/{id}/deactivate': 'deactivatePaymentLink',
  'GET /pay/{id}': 'getPaymentLinkPage',
  'POST /pay/{id}': 'usePaymentLink',
  'GET /receipts/{token}': 'getReceiptPage',
};

/** POSTs that take `Idempotency-Key`: a required UUID on sell orders, confirm-cash-leg, disputes, buy orders; optional on payments and trades. */
export const IDEMPOTENCY: Record<string, 'required' | 'optional'> = {
  'POST /v1/merchant-sell-orders': 'required',
  'POST /v1/merchant-sell-orders/{id}/confirm-cash-leg': 'required',
  'POST /v1/merchant-sell-orders/{id}/cancel': 'required',
  'POST /v1/merchant-disputes': 'required',
  'POST /v1/merchant-buy-orders': 'required',
  'POST /v1/merchant-buy-orders/{id}/cancel': 'required',
  'POST /admin/merchants/{id}/ledger-adjustments': 'required',
  'POST /v1/payments': 'optional',
  'POST /v1/trades': 'optional',
  'POST /v1/fx/quote-locks': 'optional',
  'POST /v1/sandbox/payments/simulate': 'optional',
  'POST /v1/payments/{id}/refunds': 'required',
  'POST /v1/sandbox/refunds/{id}/simulate': 'optional',
  'POST /v1/payment-links': 'optional',
  'POST /v1/payment-links/{id}/deactivate': 'optional',
};

/** Responses that are not JSON envelopes and that no route schema states (the hosted page answers HTML). */
export const EXTRA_RESPONSES: Record<string, Record<string, Json>> = {
  'GET /receipts/{token}': {
    '200': { description: 'The receipt page', content: { 'text/html': { schema: { type: 'string' } } } },
  },
  'GET /pay/{id}': {
    '200': { description: "The payment link's page", content: { 'text/html': { schema: { type: 'string' } } } },
  },
  'POST /pay/{id}': {
    '303': {
      description: "A payment was made from the link: on to the payment's checkout",
      headers: { Location: { description: 'The checkout page', schema: { type: 'string' } } },
    },
  },
  'GET /refunds/claim/{token}': {
    '200': { description: "The buyer's refund page", content: { 'text/html': { schema: { type: 'string' } } } },
  },
  'POST /refunds/claim/{token}': {
    '303': {
      description: 'Accepted: back to the page, which shows the next step',
      headers: { Location: { description: 'The claim page', schema: { type: 'string' } } },
    },
  },
  'GET /checkout/{id}': {
    '200': { description: 'The hosted checkout page', content: { 'text/html': { schema: { type: 'string' } } } },
  },
  'POST /checkout/{id}/proof': {
    '303': {
      description: 'Proof accepted: back to the page, which then shows `confirming`',
      headers: { Location: { description: 'The checkout page', schema: { type: 'string' } } },
    },
    '200': {
      description: 'The page again (unknown payment id), in HTML',
      content: { 'text/html': { schema: { type: 'string' } } },
    },
  },
};

const TRADE_EXAMPLE = {
  order_id: 'order-1001',
  amount: '250.00',
  currency: 'THB',
  return_url: 'https://shop.example/return',
};

/** Request examples of the calls an integrator makes first (redocly checks each against its schema). */
export const REQUEST_EXAMPLES: Record<string, unknown> = {
  'POST /v1/trades': TRADE_EXAMPLE,
  'POST /v1/payments': TRADE_EXAMPLE,
  'POST /v1/merchant-sell-orders': {
    amount_micro_pay: 10_000_000,
    currency: 'PAY',
    target_currency: 'THB',
    target_fiat_amount: 35_000,
    payout_destination: { rail: 'promptpay', promptpay_id: '0812345678' },
  },
  'POST /v1/merchant-buy-orders': { amount_micro_pay: 10_000_000, fiat_currency: 'THB', fiat_amount: 35_500 },
  'POST /v1/sandbox/payments/simulate': { scenario: 'matched_partial_fill', amount: 10_000, currency: 'THB' },
  'POST /v1/payments/{id}/refunds': { amount: '100.00', reason: 'requested_by_customer' },
  'POST /v1/refunds/{id}/proof': {
    receipt_base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg==',
    content_type: 'image/png',
  },
  'POST /v1/sandbox/refunds/{id}/simulate': { outcome: 'succeeded' },
  'POST /v1/payment-links': { title: 'Thai silk scarf', currency: 'THB', amount: '450.00' },
  'POST /v1/seller/legs/{payment_id}/{match_order}/reject': {
    reason: 'No transfer with this reference reached my account',
  },
};

const REFUND_ID = '8e2f4c1a-5b7d-4e3f-9a6c-1d2e3f4a5b6c';
const PAYMENT_ID = '3c9e7a10-2f4b-4d6e-8a1c-5b7d9e0f2a3c';

/** A refund as `POST /v1/payments/{id}/refunds` answers it: waiting for the buyer's destination behind the claim link. */
const REFUND_EXAMPLE = {
  id: REFUND_ID,
  merchant_id: 'b1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
  payment_id: PAYMENT_ID,
  amount: 10_000,
  amount_decimal: '100.00',
  currency: 'THB',
  status: 'requires_action',
  reason: 'requested_by_customer',
  funding: 'merchant_transfer',
  destination_details: null,
  next_action: {
    type: 'claim',
    claim_url: 'https://pay.example.com/refunds/claim/q8Zk2LrT5vXw9NbC3dYh7JmP4sGa6FeU',
    expires_at: '2026-08-01T09:30:00.000Z',
  },
  claim_url: 'https://pay.example.com/refunds/claim/q8Zk2LrT5vXw9NbC3dYh7JmP4sGa6FeU',
  failure_reason: null,
  proof: null,
  amount_micro_pay: null,
  sell_order_id: null,
  receipt_url: null,
  metadata: {},
  is_sandbox: false,
  created_at: '2026-07-02T09:30:00.000Z',
  succeeded_at: null,
  failed_at: null,
  canceled_at: null,
};

/** The same refund once the buyer gave a PromptPay ID and the merchant uploaded a slip nobody could check. */
const REFUND_PENDING_EXAMPLE = {
  ...REFUND_EXAMPLE,
  status: 'pending',
  destination_details: { rail: 'promptpay', masked: 'xxxxxx5678' },
  next_action: null,
  proof: {
    id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
    status: 'awaiting_buyer',
    reason: null,
    reference: '016183140928ATF04123',
    received_at: '2026-07-02T11:05:00.000Z',
  },
};

const LINK_EXAMPLE = {
  id: 'plink_4f1c2a9e8b7d4c3a9e1f0b2d3c4a5e6f',
  url: 'https://pay.example.com/pay/plink_4f1c2a9e8b7d4c3a9e1f0b2d3c4a5e6f',
  title: 'Thai silk scarf',
  description: null,
  currency: 'THB',
  amount: 45_000,
  amount_decimal: '450.00',
  amount_range: null,
  reusable: false,
  max_payments: null,
  payments_completed: 0,
  active: true,
  state: 'open',
  expires_at: null,
  return_url: null,
  metadata: {},
  is_sandbox: false,
  created_at: '2026-07-01T08:00:00.000Z',
  deactivated_at: null,
};

const SELLER_LEG_EXAMPLE = {
  payment_id: PAYMENT_ID,
  match_order: 1,
  seller_id: '7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a',
  status: 'awaiting_payee',
  amount_minor: 125_000,
  currency: 'THB',
  amount_micro_pay: 35_714_286,
  reference: '016183140928ATF04123',
  sending_bank: '014',
  image_url: `https://pay.example.com/v1/seller/legs/${PAYMENT_ID}/1/slip`,
  received_at: '2026-07-02T09:12:00.000Z',
  awaiting_payee_since: '2026-07-02T09:12:01.000Z',
  reason: null,
  decided_by: null,
};

const one = (data: unknown) => ({ success: true, data });
const page = (data: unknown) => ({ data: [data], has_more: false, next_cursor: null });

/** Success response examples of the refund, payment-link and seller-leg routes (redocly checks each against its schema). */
export const RESPONSE_EXAMPLES: Record<string, unknown> = {
  'POST /v1/payments/{id}/refunds': one(REFUND_EXAMPLE),
  'GET /v1/refunds': page(REFUND_EXAMPLE),
  'GET /v1/refunds/{id}': one(REFUND_EXAMPLE),
  'POST /v1/refunds/{id}/cancel': one({
    ...REFUND_EXAMPLE,
    status: 'canceled',
    next_action: null,
    canceled_at: '2026-07-02T10:00:00.000Z',
  }),
  'POST /v1/refunds/{id}/proof': one(REFUND_PENDING_EXAMPLE),
  'POST /v1/sandbox/refunds/{id}/simulate': one({
    ...REFUND_PENDING_EXAMPLE,
    proof: null,
    status: 'succeeded',
    is_sandbox: true,
    receipt_url: 'https://pay.example.com/receipts/r7Hn3KxQ9wLp2VbM5cZt8YdF4gJs6AeN',
    succeeded_at: '2026-07-02T09:30:01.000Z',
  }),
  'POST /v1/payment-links': one(LINK_EXAMPLE),
  'GET /v1/payment-links': page(LINK_EXAMPLE),
  'GET /v1/payment-links/{id}': one(LINK_EXAMPLE),
  'POST /v1/payment-links/{id}/deactivate': one({
    ...LINK_EXAMPLE,
    active: false,
    state: 'inactive',
    deactivated_at: '2026-07-03T08:00:00.000Z',
  }),
  'GET /v1/seller/legs': page(SELLER_LEG_EXAMPLE),
  'POST /v1/seller/legs/{payment_id}/{match_order}/confirm': one({
    ...SELLER_LEG_EXAMPLE,
    status: 'verified',
    decided_by: 'seller',
  }),
  'POST /v1/seller/legs/{payment_id}/{match_order}/reject': one({
    ...SELLER_LEG_EXAMPLE,
    status: 'rejected',
    reason: 'No transfer with this reference reached my account',
    decided_by: 'seller',
  }),
};

/** Bodies whose every field is optional: the request may leave the body out (the route fills in `{}`). */
export const OPTIONAL_BODIES = new Set(['POST /v1/auth/token', 'POST /v1/payments/{id}/refunds']);

/** Pages for a browser: their errors are HTML pages too (the hosted checkout renders its own error views). */
export const HTML_ROUTES = new Set([
  'GET /checkout/{id}',
  'POST /checkout/{id}/proof',
  'GET /refunds/claim/{token}',
  'POST /refunds/claim/{token}',
  'GET /pay/{id}',
  'POST /pay/{id}',
  'GET /receipts/{token}',
]);

/** Responses of these operations carry the sunset headers (`Deprecation`, `Sunset`, `Link`). */
export const DEPRECATED_WITH_SUNSET = new Set(['POST /v1/payments']);
