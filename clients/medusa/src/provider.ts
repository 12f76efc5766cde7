/**
 * The mpay payment provider: one Medusa payment session is one gateway payment (`POST /v1/trades`, the session id as
 * `order_id` and as the idempotency key). The buyer pays it off-platform (a PromptPay QR, a PayID or a bank
 * transfer) and uploads the slip on the hosted checkout; the gateway's webhook then tells Medusa it is paid. A push
 * payment arrives captured: there is nothing to capture later, and money goes back by refund, never by a void.
 */
import type {
  AuthorizePaymentInput,
  AuthorizePaymentOutput,
  CancelPaymentInput,
  CancelPaymentOutput,
  CapturePaymentInput,
  CapturePaymentOutput,
  DeletePaymentInput,
  DeletePaymentOutput,
  GetPaymentStatusInput,
  GetPaymentStatusOutput,
  InitiatePaymentInput,
  InitiatePaymentOutput,
  ProviderWebhookPayload,
  RefundPaymentInput,
  RefundPaymentOutput,
  RetrievePaymentInput,
  RetrievePaymentOutput,
  UpdatePaymentInput,
  UpdatePaymentOutput,
  WebhookActionResult,
} from '@medusajs/framework/types';
import { AbstractPaymentProvider, MedusaError, PaymentActions, PaymentSessionStatus } from '@medusajs/framework/utils';
import { fromMinorUnits, toMinorUnits } from './amounts.ts';
import {
  Gateway,
  MpayApiError,
  verifyWebhook,
  WebhookVerificationError,
  type CheckoutLeg,
  type GatewayRefund,
  type Payment,
} from './gateway.ts';

/** The provider's options, from `medusa-config.ts`. */
export interface MpayOptions {
  /** The gateway, e.g. `https://pay.example.com`. */
  baseUrl: string;
  /** A secret API key: `svc_live_…` for live payments, `svc_test_…` or `svc_sandbox_…` for the sandbox. */
  apiKey: string;
  /** The signing secret (`whsec_…`) of the webhook endpoint that points at `/hooks/payment/<provider id>`. */
  webhookSecret: string;
  /** Where the hosted checkout sends the buyer once paid, when the session's `data.return_url` does not say. */
  returnUrl?: string;
  /** How long a payment stays open for the buyer (60 to 86400 seconds); the gateway's default otherwise. */
  expiresInSeconds?: number;
}

/** The rails the gateway offers. */
export type MpayPaymentMethod = 'promptpay' | 'payid' | 'bank_transfer';

/** Gateway statuses in which the buyer's money has arrived (all of it, or part of it for `partially_paid`). */
const PAID = new Set(['completed', 'settled', 'partially_paid']);
/** Gateway statuses in which the payment ended without money. */
const ENDED_UNPAID = new Set(['failed', 'expired', 'cancelled']);

/** What Medusa's payment session says for a gateway status. */
export function sessionStatus(status: string): PaymentSessionStatus {
  switch (status) {
    case 'completed':
    case 'settled':
      return PaymentSessionStatus.CAPTURED;
    case 'partially_paid':
      // Part of the money arrived: authorized for the session, captured for what was received (the webhook's amount).
      return PaymentSessionStatus.AUTHORIZED;
    case 'failed':
    case 'expired':
      return PaymentSessionStatus.ERROR;
    case 'cancelled':
      return PaymentSessionStatus.CANCELED;
    default:
      // created, matching, matched, payment_pending, confirming: the buyer has not paid yet, or the slip is being checked
      return PaymentSessionStatus.PENDING;
  }
}

/** What the gateway received for a payment, in minor units: `amount_received` where the gateway reports it. */
export function amountReceivedMinor(payment: Record<string, any>): number {
  if (typeof payment['amount_received'] === 'number') return payment['amount_received'];
  if (payment['status'] === 'partially_paid' && Array.isArray(payment['match_details'])) {
    return payment['match_details']
      .filter((leg: any) => leg?.proof?.status === 'verified')
      .reduce((sum: number, leg: any) => sum + Number(leg.allocated_fiat_amount), 0);
  }
  return Number(payment['amount']);
}

function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function invalid(message: string): MedusaError {
  return new MedusaError(MedusaError.Types.INVALID_DATA, message);
}

export abstract class MpayPaymentProvider extends AbstractPaymentProvider<MpayOptions> {
  /** The gateway rail this service creates payments on. */
  protected abstract readonly paymentMethod: MpayPaymentMethod;
  protected readonly options_: MpayOptions;
  protected readonly gateway: Gateway;

  static override validateOptions(options: Record<string, unknown>): void {
    const errors: string[] = [];
    if (!isHttpUrl(options['baseUrl'])) errors.push("`baseUrl` must be the gateway's http(s) URL");
    if (typeof options['apiKey'] !== 'string' || !/^svc_(live|test|sandbox)_\S+$/.test(options['apiKey']))
      errors.push('`apiKey` must be a secret API key (svc_live_…, svc_test_… or svc_sandbox_…)');
    if (typeof options['webhookSecret'] !== 'string' || !/^whsec_\S+$/.test(options['webhookSecret']))
      errors.push("`webhookSecret` must be the webhook endpoint's signing secret (whsec_…)");
    if (options['returnUrl'] !== undefined && !isHttpUrl(options['returnUrl']))
      errors.push('`returnUrl` must be an http(s) URL');
    const expires = options['expiresInSeconds'];
    if (
      expires !== undefined &&
      !(Number.isInteger(expires) && (expires as number) >= 60 && (expires as number) <= 86_400)
    )
      errors.push('`expiresInSeconds` must be an integer from 60 to 86400');
    if (errors.length) throw invalid(`mpay payment provider options: ${errors.join('; ')}`);
  }

  constructor(cradle: Record<string, unknown>, options: MpayOptions) {
    super(cradle, options);
    MpayPaymentProvider.validateOptions(options as unknown as Record<string, unknown>);
    this.options_ = options;
    this.gateway = new Gateway({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  }

  /** The session's `data`: the gateway payment as the storefront and the other methods need it. */
  protected sessionData(
    payment: Payment,
    previous: Record<string, unknown> = {},
    legs?: CheckoutLeg[],
  ): Record<string, unknown> {
    const view = payment as Payment & Record<string, any>;
    const currency = String(view.currency);
    const received = PAID.has(view.status) ? amountReceivedMinor(view) : null;
    return {
      ...previous,
      id: view.id,
      status: view.status,
      order_id: view.order_id,
      amount: view.amount,
      amount_decimal: fromMinorUnits(view.amount, currency),
      currency,
      payment_method: view.payment_method,
      checkout_url: view.checkout_url,
      qr_image_url:
        view.payment_method === 'promptpay'
          ? `${this.gateway.baseUrl}/v1/payments/${encodeURIComponent(view.id)}/promptpay-qr`
          : null,
      expires_at: view.expires_at,
      is_sandbox: view.is_sandbox,
      failure_reason: view.failure_reason ?? null,
      amount_received: received,
      ...(typeof view['amount_refunded'] === 'number' ? { amount_refunded: view['amount_refunded'] } : {}),
      ...(legs
        ? {
            legs: legs.map((leg) => ({
              match_order: leg.match_order,
              amount: leg.amount,
              amount_decimal: leg.amount_decimal,
              payment_method: leg.payment_method,
              payee: leg.payee,
            })),
          }
        : {}),
    };
  }

  protected paymentId(data: Record<string, unknown> | undefined, action: string): string {
    const id = data?.['id'];
    if (typeof id !== 'string' || !id) {
      throw invalid(`mpay: no gateway payment id in the session data (${action})`);
    }
    return id;
  }

  /** Creates the gateway payment for a session; `order_id` is the session id (or `<session id>~<n>` after an amount change). */
  protected async createFor(
    session_id: string,
    amount: InitiatePaymentInput['amount'],
    currency_code: string,
    data: Record<string, unknown>,
    revision: number,
    idempotencyKey: string,
  ): Promise<Record<string, unknown>> {
    const currency = currency_code.toUpperCase();
    const minor = toMinorUnits(amount, currency);
    const return_url = data['return_url'] ?? this.options_.returnUrl;
    if (!isHttpUrl(return_url)) {
      throw invalid(
        'mpay needs a return URL for the buyer: set `returnUrl` in the provider options or pass `data.return_url` with the payment session',
      );
    }
    const order_id = revision === 1 ? session_id : `${session_id}~${revision}`;
    const payment = await this.gateway.createPayment(
      {
        order_id,
        amount: minor,
        currency,
        return_url,
        payment_method: this.paymentMethod,
        metadata: { medusa_session_id: session_id },
        ...(this.options_.expiresInSeconds ? { expires_in_seconds: this.options_.expiresInSeconds } : {}),
      },
      idempotencyKey,
    );
    const legs = await this.gateway.checkoutLegs(payment.id);
    return this.sessionData(payment, { ...data, session_id, revision }, legs);
  }

  async initiatePayment(input: InitiatePaymentInput): Promise<InitiatePaymentOutput> {
    const data = input.data ?? {};
    const session_id = data['session_id'];
    if (typeof session_id !== 'string' || !session_id) throw invalid('mpay: the payment session id is missing');
    const key = input.context?.idempotency_key ?? session_id;
    const created = await this.createFor(session_id, input.amount, input.currency_code, data, 1, key);
    return { id: created['id'] as string, status: sessionStatus(created['status'] as string), data: created };
  }

  async getPaymentStatus(input: GetPaymentStatusInput): Promise<GetPaymentStatusOutput> {
    const data = input.data ?? {};
    const payment = await this.gateway.retrievePayment(this.paymentId(data, 'status'));
    return { status: sessionStatus(payment.status), data: this.sessionData(payment, data) };
  }

  /** Reads the gateway: completed is captured (a push payment arrives captured), partly paid authorized, not yet paid pending. */
  async authorizePayment(input: AuthorizePaymentInput): Promise<AuthorizePaymentOutput> {
    return this.getPaymentStatus(input);
  }

  /**
   * Nothing to capture: the buyer's transfer is the capture. Refused while the money has not arrived. A partly paid
   * payment is captured once, for what arrived (the webhook's amount); a second capture (the rest) is refused.
   */
  async capturePayment(input: CapturePaymentInput): Promise<CapturePaymentOutput> {
    const data = input.data ?? {};
    const payment = await this.gateway.retrievePayment(this.paymentId(data, 'capture'));
    if (!PAID.has(payment.status)) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `mpay payment ${payment.id} is ${payment.status}: there is nothing to capture until the buyer has paid`,
      );
    }
    if ((payment.status as string) === 'partially_paid') {
      const received = fromMinorUnits(amountReceivedMinor(payment), payment.currency);
      if (data['received_captured'] === true) {
        throw new MedusaError(
          MedusaError.Types.NOT_ALLOWED,
          `mpay payment ${payment.id} is partially_paid: only ${received} ${payment.currency} arrived and it is captured; refund or fulfil part of the order`,
        );
      }
      return { data: { ...this.sessionData(payment, data), received_captured: true } };
    }
    return { data: this.sessionData(payment, data) };
  }

  /**
   * Cancels the gateway payment. A paid payment is refused (refund it instead); one that already ended unpaid is left
   * as it is; the gateway cancels only payments not yet matched, and a matched one expires at `expires_at`.
   */
  async cancelPayment(input: CancelPaymentInput): Promise<CancelPaymentOutput> {
    const data = input.data ?? {};
    if (typeof data['id'] !== 'string') return { data };
    const payment = await this.gateway.retrievePayment(data['id']);
    if (PAID.has(payment.status)) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `mpay payment ${payment.id} is ${payment.status}: the buyer has paid, refund it instead of cancelling`,
      );
    }
    if (ENDED_UNPAID.has(payment.status)) return { data: this.sessionData(payment, data) };
    try {
      return { data: this.sessionData(await this.gateway.cancelPayment(payment.id), data) };
    } catch (error) {
      if (error instanceof MpayApiError && error.code === 'PAYMENT_BAD_STATE') {
        throw new MedusaError(
          MedusaError.Types.NOT_ALLOWED,
          `mpay payment ${payment.id} is ${payment.status} and cannot be cancelled; it expires at ${payment.expires_at}`,
        );
      }
      throw error;
    }
  }

  /** The session is going away: cancel the gateway payment when the gateway allows it, else leave it to expire. */
  async deletePayment(input: DeletePaymentInput): Promise<DeletePaymentOutput> {
    const data = input.data ?? {};
    if (typeof data['id'] !== 'string') return { data };
    try {
      return { data: this.sessionData(await this.gateway.cancelPayment(data['id']), data) };
    } catch (error) {
      if (error instanceof MpayApiError && (error.code === 'PAYMENT_BAD_STATE' || error.status === 404))
        return { data };
      throw error;
    }
  }

  /**
   * Creates a gateway refund (`POST /v1/payments/{id}/refunds`) for the amount, keyed by Medusa's refund id. The
   * buyer says where the money goes through the refund's claim link (`refunds[].claim_url` in the returned data).
   */
  async refundPayment(input: RefundPaymentInput): Promise<RefundPaymentOutput> {
    const data = input.data ?? {};
    const id = this.paymentId(data, 'refund');
    const currency = String(data['currency'] ?? '');
    const minor = toMinorUnits(input.amount, currency);
    const previous = Array.isArray(data['refunds']) ? (data['refunds'] as Record<string, unknown>[]) : [];
    const key = input.context?.idempotency_key ?? `${id}:refund:${previous.length + 1}:${minor}`;
    const refund: GatewayRefund = await this.gateway.createRefund(
      id,
      { amount: minor, reason: 'requested_by_customer', metadata: { medusa_idempotency_key: key.slice(0, 500) } },
      key,
    );
    const summary = {
      id: refund.id,
      amount: refund.amount,
      amount_decimal: fromMinorUnits(refund.amount, refund.currency),
      currency: refund.currency,
      status: refund.status,
      claim_url:
        refund.next_action?.claim_url ?? (typeof refund['claim_url'] === 'string' ? refund['claim_url'] : null),
      claim_expires_at: refund.next_action?.expires_at ?? null,
    };
    return { data: { ...data, refunds: [...previous.filter((row) => row['id'] !== refund.id), summary] } };
  }

  async retrievePayment(input: RetrievePaymentInput): Promise<RetrievePaymentOutput> {
    const data = input.data ?? {};
    return { data: this.sessionData(await this.gateway.retrievePayment(this.paymentId(data, 'retrieve')), data) };
  }

  /**
   * The cart changed. The same amount and currency keep the payment; another amount replaces it (a gateway payment's
   * amount is fixed): the old one is cancelled where the gateway allows it and a new one is created.
   */
  async updatePayment(input: UpdatePaymentInput): Promise<UpdatePaymentOutput> {
    const data = input.data ?? {};
    const session_id = data['session_id'];
    if (typeof data['id'] !== 'string' || typeof session_id !== 'string') {
      throw invalid('mpay: the session has no gateway payment to update');
    }
    const currency = input.currency_code.toUpperCase();
    const minor = toMinorUnits(input.amount, currency);
    const current = await this.gateway.retrievePayment(data['id']);
    if (current.amount === minor && current.currency === currency) {
      return { status: sessionStatus(current.status), data: this.sessionData(current, data) };
    }
    if (PAID.has(current.status) || current.status === 'confirming') {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `mpay payment ${current.id} is ${current.status}: its amount can no longer change`,
      );
    }
    await this.deletePayment({ data });
    const revision = (typeof data['revision'] === 'number' ? data['revision'] : 1) + 1;
    const { legs: _legs, refunds: _refunds, ...rest } = data;
    const created = await this.createFor(
      session_id,
      input.amount,
      currency,
      rest,
      revision,
      `${session_id}~${revision}`,
    );
    return { status: sessionStatus(created['status'] as string), data: created };
  }

  /**
   * A gateway webhook delivered to `/hooks/payment/<provider id>`: the Standard Webhooks signature is checked over the
   * raw body with `webhookSecret` (replay window 5 minutes), then the event becomes Medusa's action.
   */
  async getWebhookActionAndData(payload: ProviderWebhookPayload['payload']): Promise<WebhookActionResult> {
    const raw = payload.rawData as unknown;
    const body =
      typeof raw === 'string' || raw instanceof Uint8Array
        ? raw
        : raw && typeof raw === 'object' && (raw as { type?: string }).type === 'Buffer'
          ? Buffer.from((raw as { data: number[] }).data)
          : undefined;
    if (body === undefined) throw invalid('mpay webhook: the raw body is missing');
    let event: ReturnType<typeof verifyWebhook>;
    try {
      event = verifyWebhook(body, payload.headers as Record<string, string>, this.options_.webhookSecret, {
        scheme: 'standard',
      });
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        throw new MedusaError(MedusaError.Types.UNAUTHORIZED, `mpay webhook refused: ${error.reason}`);
      }
      throw error;
    }
    const payment = event.data as Record<string, any>;
    const session_id = payment?.['metadata']?.['medusa_session_id'];
    if (!event.type.startsWith('payment.') || typeof session_id !== 'string') {
      return { action: PaymentActions.NOT_SUPPORTED };
    }
    const currency = String(payment['currency']);
    const amount = (minor: number) => fromMinorUnits(minor, currency);
    switch (event.type as string) {
      case 'payment.completed':
        return { action: PaymentActions.SUCCESSFUL, data: { session_id, amount: amount(payment['amount']) } };
      case 'payment.partially_paid':
        return {
          action: PaymentActions.SUCCESSFUL,
          data: { session_id, amount: amount(amountReceivedMinor(payment)) },
        };
      case 'payment.failed':
      case 'payment.expired':
        return { action: PaymentActions.FAILED, data: { session_id, amount: amount(payment['amount']) } };
      default:
        return { action: PaymentActions.NOT_SUPPORTED };
    }
  }
}
