/**
 * The real gateway for the provider's tests: `node src/main.ts` of this repository on a free port, on an in-memory
 * PGlite (`DATA_DIR=memory://`), every role in one process so its workers judge slips and deliver webhooks. A merchant
 * with a test key (sandbox: synthetic sellers, real signed webhooks), a webhook endpoint pointing at a receiver in
 * the test process, and slips the sandbox's validator accepts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { newSlipReference, slipImage } from '../../../src/modules/sandbox/slip-image.ts';

export const REPOSITORY = resolve(import.meta.dirname, '../../..');
/** The gateway checkout to start: this repository, or another one named by MPAY_GATEWAY_DIR. */
const GATEWAY_DIR = process.env['MPAY_GATEWAY_DIR'] || REPOSITORY;
const ADMIN_TOKEN = `medusa-test-admin-${randomUUID()}`;

export interface Delivery {
  raw: Buffer;
  headers: IncomingHttpHeaders;
  event: { id: string; type: string; data: Record<string, any> };
}

/** Collects the webhook deliveries the gateway sends; `next(type, payment_id)` waits for one. */
export class WebhookReceiver {
  readonly deliveries: Delivery[] = [];
  #server: Server;
  #waiters: (() => void)[] = [];
  url = '';

  constructor() {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks);
        this.deliveries.push({ raw, headers: request.headers, event: JSON.parse(raw.toString('utf8')) });
        response.writeHead(204).end();
        for (const wake of this.#waiters.splice(0)) wake();
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((ready) => this.#server.listen(0, '127.0.0.1', ready));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks/payment/mpay`;
  }

  async next(type: string, payment_id: string, timeout_ms = 30_000): Promise<Delivery> {
    const deadline = Date.now() + timeout_ms;
    for (;;) {
      const found = this.deliveries.find((d) => d.event.type === type && d.event.data['id'] === payment_id);
      if (found) return found;
      if (Date.now() > deadline) {
        const seen = this.deliveries.map((d) => `${d.event.type} ${d.event.data['id']}`).join(', ');
        throw new Error(`no ${type} webhook for ${payment_id} within ${timeout_ms} ms (seen: ${seen || 'none'})`);
      }
      await new Promise<void>((wake) => {
        this.#waiters.push(wake);
        setTimeout(wake, 250);
      });
    }
  }

  close(): Promise<void> {
    return new Promise((done) => this.#server.close(() => done()));
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

export interface Gateway {
  baseUrl: string;
  /** The merchant's test key (sandbox mode). */
  testKey: string;
  /** The signing secret of the sandbox webhook endpoint pointing at `receiver`. */
  webhookSecret: string;
  receiver: WebhookReceiver;
  /** The buyer uploads a slip for the payment's first leg (`qr: 'none'` makes one the validator refuses). */
  pay(payment_id: string, qr?: 'slip' | 'none'): Promise<void>;
  /** The gateway's view of a payment. */
  payment(payment_id: string): Promise<Record<string, any>>;
  /** The sandbox plays a refund to its end (`POST /v1/sandbox/refunds/{id}/simulate`). */
  settleRefund(refund_id: string, outcome?: 'succeeded' | 'failed'): Promise<Record<string, any>>;
  stop(): Promise<void>;
}

export async function startGateway(): Promise<Gateway> {
  let uploads = 0;
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, ['src/main.ts'], {
    cwd: GATEWAY_DIR,
    env: {
      ...process.env,
      DATA_DIR: 'memory://',
      DATABASE_URL: '',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      ADMIN_SERVICE_TOKEN: ADMIN_TOKEN,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WORKER_POLL_INTERVAL_MS: '50',
      RATE_LIMIT_SANDBOX_PER_SECOND: '10000',
      RATE_LIMIT_LIVE_PER_SECOND: '10000',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((done) => setTimeout(done, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  };
  try {
    const deadline = Date.now() + 180_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the gateway exited (${child.exitCode}): ${stderr}`);
      const up = await fetch(`${baseUrl}/healthz`).then(
        (response) => response.ok,
        () => false,
      );
      if (up) break;
      if (Date.now() > deadline) throw new Error(`the gateway did not start within 180 s: ${stderr}`);
      await new Promise((done) => setTimeout(done, 100));
    }

    const json = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const parsed = (await response.json()) as Record<string, any>;
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(parsed)}`);
      return parsed['data'];
    };
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-actor-user-id': 'ops-1', 'x-actor-role': 'super_admin' };
    const created = await json('POST', '/admin/merchants', admin, { name: 'Medusa shop' });
    const testKey: string = created.api_keys.test;
    const receiver = new WebhookReceiver();
    await receiver.start();
    const endpoint = await json(
      'POST',
      '/v1/webhook-endpoints',
      { 'x-api-key': testKey },
      { url: receiver.url, enabled_events: ['*'], description: 'Medusa' },
    );
    return {
      baseUrl,
      testKey,
      webhookSecret: endpoint.secret,
      receiver,
      async pay(payment_id, qr = 'slip') {
        const form = new FormData();
        // a new transfer each time: a new reference in the QR, and another picture (168 differ) for slips without one
        const image = slipImage({ reference: newSlipReference(), qr, variant: uploads++ % 168 });
        form.append('proof', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'slip.png');
        const response = await fetch(`${baseUrl}/v1/payments/${payment_id}/proof`, {
          method: 'POST',
          headers: { 'x-api-key': testKey },
          body: form,
        });
        if (!response.ok) throw new Error(`proof upload: ${response.status} ${await response.text()}`);
      },
      payment: (payment_id) => json('GET', `/v1/payments/${payment_id}`, { 'x-api-key': testKey }),
      settleRefund: (refund_id, outcome = 'succeeded') =>
        json('POST', `/v1/sandbox/refunds/${refund_id}/simulate`, { 'x-api-key': testKey }, { outcome }),
      async stop() {
        await receiver.close();
        await stop();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
