/**
 * The gateway as the provider sees it: the typed client (`@mpay/client`) for payments, refunds and webhooks.
 */
import { createHash } from 'node:crypto';
import { Mpay, MpayApiError, verifyWebhook, WebhookVerificationError, type Payment } from '@mpay/client';

export { MpayApiError, verifyWebhook, WebhookVerificationError, type Payment };

/** One leg of the checkout: whom the buyer pays, how much, and (PromptPay) the QR payload and image. */
export interface CheckoutLeg {
  match_order: number;
  amount: number;
  amount_decimal: string;
  payment_method: string;
  payee: Record<string, unknown> & { type: string };
  proof: unknown;
}

/** A refund as the gateway answers it (DESIGN 3c); only the fields the provider reads are typed. */
export interface GatewayRefund {
  id: string;
  payment_id: string;
  amount: number;
  currency: string;
  status: string;
  next_action?: { type: string; claim_url?: string; expires_at?: string } | null;
  [field: string]: unknown;
}

/**
 * The gateway wants a UUID where an idempotency key is required (refunds): a name-based UUID (version 5 layout over
 * SHA-256) of Medusa's own key, so the same Medusa refund always sends the same key.
 */
export function idempotencyUuid(key: string): string {
  const bytes = createHash('sha256').update(`@mpay/medusa:${key}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export interface GatewayOptions {
  baseUrl: string;
  apiKey: string;
  maxRetries?: number;
  timeoutMs?: number;
}

export class Gateway {
  readonly client: Mpay;

  constructor(options: GatewayOptions) {
    this.client = new Mpay({
      apiKey: options.apiKey,
      baseUrl: options.baseUrl,
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
  }

  get baseUrl(): string {
    return this.client.baseUrl;
  }

  /** `POST /v1/trades`: matched at once; the same idempotency key replays the first answer. */
  async createPayment(
    body: {
      order_id: string;
      amount: number;
      currency: string;
      return_url: string;
      payment_method: string;
      metadata: Record<string, string>;
    },
    idempotencyKey: string,
  ): Promise<Payment> {
    const { data } = await this.client.payments.create(body as Parameters<Mpay['payments']['create']>[0], {
      idempotencyKey,
    });
    return data;
  }

  async retrievePayment(id: string): Promise<Payment> {
    return (await this.client.payments.retrieve(id)).data;
  }

  async cancelPayment(id: string): Promise<Payment> {
    return (await this.client.payments.cancel(id)).data;
  }

  async checkoutLegs(id: string): Promise<CheckoutLeg[]> {
    const { data } = await this.client.payments.checkout(id);
    return (data as unknown as { legs: CheckoutLeg[] }).legs;
  }

  /**
   * `POST /v1/payments/{id}/refunds` with an `Idempotency-Key` derived from `idempotencyKey` (the client retries 429,
   * 5xx and network errors with that key).
   */
  async createRefund(
    payment_id: string,
    body: { amount: number; reason?: 'requested_by_customer'; metadata?: Record<string, string> },
    idempotencyKey: string,
  ): Promise<GatewayRefund> {
    const { data } = await this.client.refunds.create(payment_id, body, {
      idempotencyKey: idempotencyUuid(idempotencyKey),
    });
    return data as unknown as GatewayRefund;
  }
}
