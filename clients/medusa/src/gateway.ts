/**
 * The gateway as the provider sees it: the typed client (`@mpay/client`) for payments and webhooks, and one plain
 * call for refunds (`POST /v1/payments/{id}/refunds`) with the same key, retries and idempotency key.
 */
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

export interface GatewayOptions {
  baseUrl: string;
  apiKey: string;
  maxRetries?: number;
  timeoutMs?: number;
}

export class Gateway {
  readonly client: Mpay;
  readonly #options: GatewayOptions;

  constructor(options: GatewayOptions) {
    this.#options = options;
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

  /** `POST /v1/payments/{id}/refunds` with an `Idempotency-Key`; 5xx, 429 and network errors are retried with that key. */
  async createRefund(
    payment_id: string,
    body: { amount: number; reason?: string; metadata?: Record<string, string> },
    idempotencyKey: string,
  ): Promise<GatewayRefund> {
    const url = `${this.client.baseUrl}/v1/payments/${encodeURIComponent(payment_id)}/refunds`;
    const attempts = (this.#options.maxRetries ?? 3) + 1;
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-api-key': this.#options.apiKey,
            'idempotency-key': idempotencyKey,
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(this.#options.timeoutMs ?? 60_000),
        });
      } catch (error) {
        if (attempt < attempts) {
          await delay(attempt);
          continue;
        }
        throw error;
      }
      const text = await response.text();
      const parsed = text ? (JSON.parse(text) as Record<string, any>) : {};
      if (response.ok) return parsed['data'] as GatewayRefund;
      if ((response.status === 429 || response.status >= 500) && attempt < attempts) {
        await delay(attempt);
        continue;
      }
      const error = (parsed['error'] ?? {}) as { code?: string; message?: string; details?: unknown[] };
      throw new MpayApiError(
        response.status,
        error.code ?? 'ERROR',
        error.message ?? response.statusText,
        response.headers.get('x-request-id') ?? undefined,
        error.details ?? [],
        parsed,
      );
    }
  }
}

function delay(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(200 * 2 ** (attempt - 1), 5_000)));
}
