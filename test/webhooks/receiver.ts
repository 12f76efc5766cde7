import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  /** The request path (several endpoints can share one receiver by path). */
  path: string;
  raw: Buffer;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
  arrived_at_ms: number;
}

/** What the receiver answers: a status, or 'hang' to hold the request open (a slow or dying endpoint). */
export type Answer = number | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** Set per request: default 200. */
  answer: (received: Received) => Answer;
  waitFor(count: number, timeout_ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A real webhook endpoint on loopback that keeps every request's exact bytes. */
export async function startReceiver(): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => 200,
    async waitFor(count, timeout_ms = 10_000) {
      if (receiver.received.length >= count) return receiver.received;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${receiver.received.length} of ${count} webhooks in ${timeout_ms} ms`)),
          timeout_ms,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
      return receiver.received;
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        // kept raw
      }
      const received: Received = {
        path: request.url ?? '',
        raw,
        headers: request.headers,
        body,
        arrived_at_ms: performance.now(),
      };
      receiver.received.push(received);
      for (const waiter of [...waiters]) {
        if (receiver.received.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      const answer = receiver.answer(received);
      if (answer === 'hang') {
        hanging.add(response);
        return;
      }
      response.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : `error ${answer}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
