/**
 * The resources of the merchant API, one class each, in the names an integrator looks for
 * (`mpay.payments.create`, `mpay.sellOrders.list`, `mpay.balance.retrieve`). Each method calls one operation of
 * the OpenAPI document; `mpay.request(operationId, …)` reaches any operation by its id.
 */
import type { Transport } from './transport.ts';
import type { Body, FilePart, Query, RequestOptions } from './types.ts';

abstract class Resource {
  protected readonly transport: Transport;
  constructor(transport: Transport) {
    this.transport = transport;
  }
}

/** Payments (trades): `POST /v1/trades` creates, the payment object comes back everywhere. */
export class Payments extends Resource {
  /** Creates a payment (`POST /v1/trades`), matched at once; an automatic Idempotency-Key makes retries safe. */
  create(body: Body<'createTrade'>, options: RequestOptions = {}) {
    return this.transport.request('createTrade', { ...options, body });
  }

  /**
   * The deprecated `POST /v1/payments` (same body and answer as `create`, with Deprecation and Sunset headers).
   * @deprecated Use `create` (`POST /v1/trades`).
   */
  createLegacy(body: Body<'createPayment'>, options: RequestOptions = {}) {
    return this.transport.request('createPayment', { ...options, body });
  }

  retrieve(id: string, options: RequestOptions = {}) {
    return this.transport.request('getPayment', { ...options, path: { id } });
  }

  /** Newest first; filters: `status`, `order_id` (exact), `from`, `to`. Await for a page, `for await` for all. */
  list(query: Query<'listPayments'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listPayments', { ...options, query });
  }

  /** The payment of one of your order ids in the credential's mode, or null. */
  async findByOrderId(order_id: string, options: RequestOptions = {}) {
    const page = await this.transport.request('listPayments', { ...options, query: { order_id, limit: 1 } });
    return page.data[0] ?? null;
  }

  /** Cancels a payment that is still `created` or `matching` (else 409 PAYMENT_BAD_STATE). */
  cancel(id: string, options: RequestOptions = {}) {
    return this.transport.request('cancelPayment', { ...options, path: { id } });
  }

  /** The hosted checkout's view-model as JSON. */
  checkout(id: string, options: RequestOptions = {}) {
    return this.transport.request('getPaymentCheckout', { ...options, path: { id } });
  }

  /** Uploads the buyer's slip(s): one file per leg in `match_order`, or one file with `leg`. */
  uploadProof(id: string, proof: FilePart | FilePart[], options: RequestOptions & { leg?: number } = {}) {
    const { leg, ...rest } = options;
    const form = { proof, ...(leg === undefined ? {} : { leg: String(leg) }) };
    return this.transport.request('uploadPaymentProof', { ...rest, path: { id }, form });
  }

  /** The PromptPay QR of a THB payment's leg as PNG bytes (public: needs no credential). */
  promptPayQr(id: string, query: Query<'getPaymentPromptPayQr'> = {}, options: RequestOptions = {}) {
    return this.transport.request('getPaymentPromptPayQr', { ...options, path: { id }, query });
  }
}

/** Refunds of payments: the buyer says where the money goes on the claim page, or you name the destination. */
export class Refunds extends Resource {
  /** Refunds a payment (all that remains by default); an automatic Idempotency-Key makes retries safe. */
  create(payment_id: string, body: Body<'createRefund'> = {}, options: RequestOptions = {}) {
    return this.transport.request('createRefund', { ...options, path: { id: payment_id }, body });
  }

  retrieve(id: string, options: RequestOptions = {}) {
    return this.transport.request('getRefund', { ...options, path: { id } });
  }

  /** Newest first; filters: `payment_id`, `status` (comma-separated). Await for a page, `for await` for all. */
  list(query: Query<'listRefunds'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listRefunds', { ...options, query });
  }

  /** Cancels a refund before the money moved (else 409 REFUND_BAD_STATE). */
  cancel(id: string, options: RequestOptions = {}) {
    return this.transport.request('cancelRefund', { ...options, path: { id } });
  }

  /** Uploads the slip of your transfer to the buyer (a merchant_transfer refund that is pending). */
  uploadProof(id: string, proof: FilePart, options: RequestOptions = {}) {
    return this.transport.request('uploadRefundProof', { ...options, path: { id }, form: { proof } });
  }
}

/** Trades: the same payment object as `payments`, under the successor path. */
export class Trades extends Resource {
  create(body: Body<'createTrade'>, options: RequestOptions = {}) {
    return this.transport.request('createTrade', { ...options, body });
  }

  retrieve(id: string, options: RequestOptions = {}) {
    return this.transport.request('getTrade', { ...options, path: { id } });
  }
}

/** Sell orders (payouts: PAY out for fiat). Merchant routes: the client trades its API key for a JWT. */
export class SellOrders extends Resource {
  create(body: Body<'createSellOrder'>, options: RequestOptions = {}) {
    return this.transport.request('createSellOrder', { ...options, body });
  }

  retrieve(id: string, options: RequestOptions = {}) {
    return this.transport.request('getSellOrder', { ...options, path: { id } });
  }

  list(query: Query<'listSellOrders'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listSellOrders', { ...options, query });
  }

  /** Your default payout destination (where buyers pay you for sell orders that name none). */
  payoutDestination(options: RequestOptions = {}) {
    return this.transport.request('getPayoutDestination', options);
  }

  setPayoutDestination(body: Body<'setPayoutDestination'>, options: RequestOptions = {}) {
    return this.transport.request('setPayoutDestination', { ...options, body });
  }

  /** Confirms that a buyer's transfer reached your payout destination, with its slip (`buy_order_id` names the fill). */
  confirmCashLeg(id: string, body: Body<'confirmSellOrderCashLeg'>, options: RequestOptions = {}) {
    return this.transport.request('confirmSellOrderCashLeg', { ...options, path: { id }, body });
  }

  /** Cancels a `pending` sell order; its reserve goes back to available. */
  cancel(id: string, options: RequestOptions = {}) {
    return this.transport.request('cancelSellOrder', { ...options, path: { id } });
  }
}

/**
 * Payment links: a page to share (`url`) that makes a payment on each use. Fixed `amount` or an `amount_range` the
 * payer types within; single use unless `reusable`. Never deleted: `deactivate` stops it taking payments.
 */
export class PaymentLinks extends Resource {
  /** Creates a link in the credential's mode; an automatic Idempotency-Key makes retries safe. */
  create(body: Body<'createPaymentLink'>, options: RequestOptions = {}) {
    return this.transport.request('createPaymentLink', { ...options, body });
  }

  retrieve(id: string, options: RequestOptions = {}) {
    return this.transport.request('getPaymentLink', { ...options, path: { id } });
  }

  /** Newest first; filter `active`. Await for a page, `for await` for all. */
  list(query: Query<'listPaymentLinks'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listPaymentLinks', { ...options, query });
  }

  /** Stops the link taking payments for good (its page answers 410); payments made from it go on. */
  deactivate(id: string, options: RequestOptions = {}) {
    return this.transport.request('deactivatePaymentLink', { ...options, path: { id } });
  }

  /** The payments made from a link, newest first. */
  payments(id: string, query: Omit<Query<'listPayments'>, 'payment_link_id'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listPayments', { ...options, query: { ...query, payment_link_id: id } });
  }
}

/** Buy orders (fiat in for PAY, matched by price and time). */
export class BuyOrders extends Resource {
  create(body: Body<'createBuyOrder'>, options: RequestOptions = {}) {
    return this.transport.request('createBuyOrder', { ...options, body });
  }

  retrieve(id: string, options: RequestOptions = {}) {
    return this.transport.request('getBuyOrder', { ...options, path: { id } });
  }

  list(query: Query<'listBuyOrders'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listBuyOrders', { ...options, query });
  }

  cancel(id: string, options: RequestOptions = {}) {
    return this.transport.request('cancelBuyOrder', { ...options, path: { id } });
  }

  /** The PromptPay QR (PNG bytes) that pays fill `n` of the buy order to its seller. */
  fillQr(id: string, n: number, options: RequestOptions = {}) {
    return this.transport.request('getBuyOrderFillQr', { ...options, path: { id, n } });
  }
}

/** Disputes on sell orders, with their event log. */
export class Disputes extends Resource {
  create(body: Body<'createDispute'>, options: RequestOptions = {}) {
    return this.transport.request('createDispute', { ...options, body });
  }

  retrieve(id: string, options: RequestOptions = {}) {
    return this.transport.request('getDispute', { ...options, path: { id } });
  }

  list(query: Query<'listDisputes'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listDisputes', { ...options, query });
  }
}

/** The merchant's PAY balance in the credential's mode. */
export class Balance extends Resource {
  /** The balance of the credential's merchant (its id comes from the token; pass one only to be explicit). */
  async retrieve(merchant_id?: string, options: RequestOptions = {}) {
    const id = merchant_id ?? (await this.transport.merchantId());
    return this.transport.request('getMerchantBalance', { ...options, path: { id } });
  }
}

/** Webhook endpoints of the credential's mode, and its default endpoint. */
export class WebhookEndpoints extends Resource {
  /** A new endpoint; its signing secret is in the answer only. */
  create(body: Body<'createWebhookEndpoint'>, options: RequestOptions = {}) {
    return this.transport.request('createWebhookEndpoint', { ...options, body });
  }

  list(options: RequestOptions = {}) {
    return this.transport.request('listWebhookEndpoints', options);
  }

  retrieve(id: string, options: RequestOptions = {}) {
    return this.transport.request('getWebhookEndpointById', { ...options, path: { id } });
  }

  update(id: string, body: Body<'updateWebhookEndpoint'>, options: RequestOptions = {}) {
    return this.transport.request('updateWebhookEndpoint', { ...options, path: { id }, body });
  }

  del(id: string, options: RequestOptions = {}) {
    return this.transport.request('deleteWebhookEndpoint', { ...options, path: { id } });
  }

  /** A new secret; the old one keeps signing for the grace period. */
  rotateSecret(id: string, body: Body<'rotateWebhookEndpointSecret'> = {}, options: RequestOptions = {}) {
    return this.transport.request('rotateWebhookEndpointSecret', { ...options, path: { id }, body });
  }

  /** Sets the mode's default endpoint (`PUT /v1/webhook-endpoint`). */
  setDefault(body: Body<'setWebhookEndpoint'>, options: RequestOptions = {}) {
    return this.transport.request('setWebhookEndpoint', { ...options, body });
  }

  retrieveDefault(options: RequestOptions = {}) {
    return this.transport.request('getWebhookEndpoint', options);
  }

  rotateDefaultSecret(body: Body<'rotateWebhookSecret'> = {}, options: RequestOptions = {}) {
    return this.transport.request('rotateWebhookSecret', { ...options, body });
  }
}

/** Events of the last 30 days (filters: type, resource id, delivered or not). */
export class Events extends Resource {
  list(query: Query<'listEvents'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listEvents', { ...options, query });
  }
}

/** Webhook delivery history, redelivery and recovery. */
export class WebhookDeliveries extends Resource {
  list(query: Query<'listWebhookDeliveries'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listWebhookDeliveries', { ...options, query });
  }

  redeliver(id: string, options: RequestOptions = {}) {
    return this.transport.request('redeliverWebhook', { ...options, path: { id } });
  }

  /** Redelivers everything that failed since a time. */
  recover(body: Body<'recoverWebhookDeliveries'>, options: RequestOptions = {}) {
    return this.transport.request('recoverWebhookDeliveries', { ...options, body });
  }
}

/** Settlement batches, their payments and their CSV export. */
export class Settlements extends Resource {
  list(query: Query<'listSettlements'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listSettlements', { ...options, query });
  }

  retrieve(id: string, options: RequestOptions = {}) {
    return this.transport.request('getSettlement', { ...options, path: { id } });
  }

  listPayments(id: string, query: Query<'listSettlementPayments'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listSettlementPayments', { ...options, path: { id }, query });
  }

  /** The batch as CSV text. */
  exportCsv(id: string, options: RequestOptions = {}) {
    return this.transport.request('exportSettlementCsv', {
      ...options,
      path: { id },
      headers: { accept: 'text/csv', ...options.headers },
    });
  }
}

/** Incoming funds waiting for the receiver's confirmation. */
export class PendingFunds extends Resource {
  list(query: Query<'listPendingFunds'> = {}, options: RequestOptions = {}) {
    return this.transport.page('listPendingFunds', { ...options, query });
  }

  retrieve(id: string, options: RequestOptions = {}) {
    return this.transport.request('getPendingFunds', { ...options, path: { id } });
  }

  /** The receiver confirms with its receipt (`receipt_base64`, `content_type`): 201 with the validator's `outcome`. */
  confirm(id: string, body: Body<'confirmPendingFunds'>, options: RequestOptions = {}) {
    return this.transport.request('confirmPendingFunds', { ...options, path: { id }, body });
  }
}

/** Seller rates per currency and payment method. */
export class Rates extends Resource {
  retrieve(query: Query<'listRates'>, options: RequestOptions = {}) {
    return this.transport.request('listRates', { ...options, query });
  }
}

/** Reference prices and quote locks. */
export class Fx extends Resource {
  referencePrice(query: Query<'getReferencePrice'>, options: RequestOptions = {}) {
    return this.transport.request('getReferencePrice', { ...options, query });
  }

  /** Holds a rate for a trade (`quote_lock_id` on `payments.create`). */
  createQuoteLock(body: Body<'createQuoteLock'>, options: RequestOptions = {}) {
    return this.transport.request('createQuoteLock', { ...options, body });
  }

  retrieveQuoteLock(id: string, options: RequestOptions = {}) {
    return this.transport.request('getQuoteLock', { ...options, path: { id } });
  }
}

/** Sandbox scenarios and synthetic events (test and sandbox keys only). */
export class Sandbox extends Resource {
  /** Plays a payment scenario to its end (`matched_then_completed`, `matched_partial_fill`, …). */
  simulatePayment(body: Body<'simulateSandboxPayment'>, options: RequestOptions = {}) {
    return this.transport.request('simulateSandboxPayment', { ...options, body });
  }

  /** Plays a sandbox refund to its end (`succeeded` or `failed`), with each step's signed webhooks. */
  simulateRefund(id: string, body: Body<'simulateSandboxRefund'>, options: RequestOptions = {}) {
    return this.transport.request('simulateSandboxRefund', { ...options, path: { id }, body });
  }

  /** Emits a sandbox event of a kind the payment scenarios do not produce; its signed webhook follows. */
  triggerEvent(body: Body<'triggerSandboxEvent'>, options: RequestOptions = {}) {
    return this.transport.request('triggerSandboxEvent', { ...options, body });
  }
}

/** Public reference data and PromptPay payloads (no credential needed). */
export class Reference extends Resource {
  thaiBanks(options: RequestOptions = {}) {
    return this.transport.request('listThaiBanks', options);
  }

  /** The EMVCo payload of a PromptPay QR (`{promptpay_id, amount?}`). */
  promptPayPayload(body: Body<'createPromptPayPayload'>, options: RequestOptions = {}) {
    return this.transport.request('createPromptPayPayload', { ...options, body });
  }
}

/** The calling merchant and its credentials. */
export class Merchants extends Resource {
  /** Who the merchant token belongs to. */
  me(options: RequestOptions = {}) {
    return this.transport.request('getCurrentMerchant', options);
  }
}

/** Trading the secret API key for a merchant JWT (the client does it on its own; this is for manual use). */
export class Auth extends Resource {
  token(body: Body<'createAccessToken'> = {}, options: RequestOptions = {}) {
    return this.transport.request('createAccessToken', { ...options, body });
  }
}
