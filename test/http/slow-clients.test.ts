import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { addUser, signIn } from '../dashboard/helpers.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';

const HEADERS_TIMEOUT_MS = 600;
const REQUEST_TIMEOUT_MS = 1_500;
const KEEP_ALIVE_TIMEOUT_MS = 700;
/** Node checks the header and request deadlines once a second. */
const CHECK_INTERVAL_MS = 1_000;

interface RawExchange {
  /** Everything the server sent before it closed the socket (or the wait ended). */
  received: string;
  /** When the first byte of the answer came, from the first byte we sent; null: none came. */
  answered_ms: number | null;
  /** When the server closed the socket, or null. */
  closed_ms: number | null;
}

/**
 * A client on a raw socket: sends `head`, then `body_chunks` one every `chunk_interval_ms` (if the socket stays open),
 * and records what came back and when the server closed the connection.
 */
function rawExchange(
  port: number,
  head: string,
  options: { body_chunks?: string[]; chunk_interval_ms?: number; wait_ms: number; until_answered?: boolean },
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = performance.now();
    const result: RawExchange = { received: '', answered_ms: null, closed_ms: null };
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      clearInterval(dripping);
      socket.destroy();
      resolve(result);
    };
    socket.on('data', (chunk) => {
      result.answered_ms ??= performance.now() - started;
      result.received += chunk.toString('latin1');
      if (options.until_answered && answerComplete(result.received)) done();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      result.closed_ms = performance.now() - started;
      done();
    });
    socket.write(head);
    const chunks = [...(options.body_chunks ?? [])];
    const dripping = setInterval(() => {
      const next = chunks.shift();
      if (next === undefined || socket.destroyed) return clearInterval(dripping);
      socket.write(next);
    }, options.chunk_interval_ms ?? 100);
    timer = setTimeout(done, options.wait_ms);
  });
}

/** A whole response (head and Content-Length bytes of body) has arrived. */
function answerComplete(received: string): boolean {
  const end = received.indexOf('\r\n\r\n');
  const length = /content-length: (\d+)/i.exec(received.slice(0, end))?.[1];
  return end >= 0 && length !== undefined && Buffer.byteLength(received.slice(end + 4), 'latin1') >= Number(length);
}

const statusOf = (exchange: RawExchange) => Number(/^HTTP\/1\.1 (\d{3})/.exec(exchange.received)?.[1] ?? 0);

describe('slow clients are cut off (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS)', () => {
  let t: TestApp;
  let port: number;
  let merchant: TestMerchant;

  before(async () => {
    t = await startTestApp({
      env: {
        HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
        PROOF_MAX_BYTES: String(1024 * 1024),
      },
    });
    await t.application.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.application.app.server.address() as net.AddressInfo).port;
    merchant = await t.createMerchant('Slow');
  });
  after(() => t.close());

  it('a client that sends half its headers is answered 408 and closed after the header timeout', async () => {
    const exchange = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: gateway.test\r\nX-Slow: ', {
      wait_ms: 6_000,
    });
    assert.equal(statusOf(exchange), 408, exchange.received);
    assert.ok(
      exchange.closed_ms !== null && exchange.closed_ms >= HEADERS_TIMEOUT_MS - 50,
      `closed after ${exchange.closed_ms} ms`,
    );
    assert.ok(
      exchange.closed_ms < HEADERS_TIMEOUT_MS + CHECK_INTERVAL_MS + 1_000,
      `closed after ${exchange.closed_ms} ms`,
    );
  });

  it('a body sent a few bytes at a time is cut off at the request timeout', async () => {
    const body = JSON.stringify({
      order_id: 'slow',
      amount: '10.00',
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    const head = `POST /v1/trades HTTP/1.1\r\nHost: gateway.test\r\nX-API-Key: ${merchant.live}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const exchange = await rawExchange(port, head, {
      body_chunks: body.match(/.{1,2}/g)!,
      chunk_interval_ms: 200,
      wait_ms: 8_000,
    });
    assert.equal(statusOf(exchange), 408, exchange.received);
    assert.ok(
      exchange.closed_ms !== null && exchange.closed_ms < REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS + 1_000,
      `closed after ${exchange.closed_ms} ms`,
    );
    const orders = await t.db.selectFrom('payments').select('id').where('order_id', '=', 'slow').execute();
    assert.equal(orders.length, 0, 'nothing was created from the partial body');
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const exchange = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n', { wait_ms: 6_000 });
    assert.equal(statusOf(exchange), 200, exchange.received);
    assert.match(exchange.received, /Keep-Alive: timeout=\d+/i);
    assert.ok(
      exchange.closed_ms !== null && exchange.closed_ms < KEEP_ALIVE_TIMEOUT_MS + CHECK_INTERVAL_MS + 1_000,
      `closed after ${exchange.closed_ms} ms`,
    );
  });
});

describe('uploads are refused from their headers, before a byte of the body is sent', () => {
  let t: TestApp;
  let port: number;
  let merchant: TestMerchant;
  const max_bytes = 1024 * 1024;

  before(async () => {
    t = await startTestApp({ env: { PROOF_MAX_BYTES: String(max_bytes) } });
    await t.application.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.application.app.server.address() as net.AddressInfo).port;
    merchant = await t.createMerchant('Uploads');
  });
  after(() => t.close());

  /** Sends only the request head (the body is promised, never sent) and reads the answer. */
  const headOnly = async (method: string, path: string, headers: Record<string, string>) => {
    const lines = Object.entries({
      Host: 'gateway.test',
      'Content-Type': 'multipart/form-data; boundary=xyz',
      ...headers,
    }).map(([name, value]) => `${name}: ${value}`);
    const exchange = await rawExchange(port, `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`, {
      wait_ms: 3_000,
      until_answered: true,
    });
    const body = exchange.received.slice(exchange.received.indexOf('\r\n\r\n') + 4);
    return { status: statusOf(exchange), answered_ms: exchange.answered_ms, body };
  };
  const codeOf = (body: string) => /"code":"(\w+)"/.exec(body)?.[1] ?? body;

  it('API proof: over PROOF_MAX_BYTES by Content-Length is 413; no credential is 401', async () => {
    const path = `/v1/payments/${randomUUID()}/proof`;
    const big = await headOnly('POST', path, {
      'X-API-Key': merchant.live,
      'Content-Length': String(500 * 1024 * 1024),
    });
    assert.equal(big.status, 413);
    assert.equal(codeOf(big.body), 'PAYLOAD_TOO_LARGE');
    assert.ok(big.answered_ms !== null && big.answered_ms < 1_000);
    const anonymous = await headOnly('POST', path, { 'Content-Length': String(max_bytes) });
    assert.equal(anonymous.status, 401);
    assert.equal(codeOf(anonymous.body), 'UNAUTHORIZED');
  });

  it('checkout proof: over the limit is 413 before the body', async () => {
    const big = await headOnly('POST', `/checkout/${randomUUID()}/proof`, { 'Content-Length': String(max_bytes * 10) });
    assert.equal(big.status, 413);
    assert.equal(codeOf(big.body), 'PAYLOAD_TOO_LARGE');
  });

  it('dashboard upload: no session 401, a bad X-CSRF-Token 403, a role that may not move money 403, too large 413', async () => {
    const path = `/dashboard/pending-funds/${randomUUID()}/confirm`;
    const length = { 'Content-Length': String(max_bytes / 2) };
    const anonymous = await headOnly('POST', path, length);
    assert.equal(anonymous.status, 401);
    const forged = await headOnly('POST', path, { ...length, Cookie: 'mpay_session=not-a-session' });
    assert.equal(forged.status, 401);

    await addUser(t, merchant.id, 'owner@uploads.test', 'owner');
    await addUser(t, merchant.id, 'viewer@uploads.test', 'viewer');
    const owner = await signIn(t, 'owner@uploads.test');
    const viewer = await signIn(t, 'viewer@uploads.test');
    const bad_csrf = await headOnly('POST', path, { ...length, Cookie: owner.cookie, 'X-CSRF-Token': '0'.repeat(64) });
    // (dashboard refusals are pages: the status is what a browser and a script see)
    assert.equal(bad_csrf.status, 403);
    const wrong_role = await headOnly('POST', path, { ...length, Cookie: viewer.cookie, 'X-CSRF-Token': viewer.csrf });
    assert.equal(wrong_role.status, 403);
    const big = await headOnly('POST', path, {
      'Content-Length': String(max_bytes * 100),
      Cookie: owner.cookie,
      'X-CSRF-Token': owner.csrf,
    });
    assert.equal(big.status, 413);
    // the owner's upload with its token and a fitting size gets past the gate: the page waits for its body
    const fitting = await headOnly('POST', path, { ...length, Cookie: owner.cookie, 'X-CSRF-Token': owner.csrf });
    assert.equal(fitting.status, 0, `no answer before the body: ${fitting.body}`);
  });
});
