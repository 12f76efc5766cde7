import { readSlip } from '../../src/modules/validators/read-slip.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeAnswer =
  /** `late_ms`: the slip is judged (and remembered) at once, the answer sent that much later: a client timeout after the provider answered. */
  | {
      kind: 'success';
      amount_baht: number;
      receiver_account?: string;
      receiver_proxy?: string;
      trans_ref?: string;
      late_ms?: number;
    }
  | { kind: 'error'; status: number; message: string }
  | { kind: 'server_error' }
  | { kind: 'slow'; delay_ms: number }
  | { kind: 'garbage' };

/**
 * A fake EasySlip on 127.0.0.1 answering like `POST /api/v1/verify` does: `{status: 200, data: {...}}` with
 * `transRef` (the slip QR's reference when the image carries one), amount, sender and receiver (masked accounts), or
 * `{status, message}` errors. Like the real one it remembers every slip it has answered (by its reference, else its
 * bytes) and answers `duplicate_slip` for one it answered before when `checkDuplicate` is set, even when its
 * earlier answer reached nobody.
 */
export async function startFakeEasySlip(api_key: string) {
  const seen = new Set<string>();
  const received: Record<string, unknown>[] = [];
  let answered = 0;
  let next: FakeAnswer[] = [];
  const server: Server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk) => (raw += chunk));
    request.on('end', () => {
      const send = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(typeof body === 'string' ? body : JSON.stringify(body));
      };
      if (request.url !== '/api/v1/verify' || request.method !== 'POST')
        return send(404, { status: 404, message: 'not_found' });
      if (request.headers.authorization !== `Bearer ${api_key}`)
        return send(401, { status: 401, message: 'unauthorized' });
      const body = JSON.parse(raw || '{}') as { image?: string; checkDuplicate?: boolean };
      received.push(body);
      if (!body.image) return send(400, { status: 400, message: 'invalid_payload' });
      const answer = next.shift() ?? { kind: 'success', amount_baht: 1000 };
      void judge(body as { image: string; checkDuplicate?: boolean }, answer, send);
    });
  });
  async function judge(
    body: { image: string; checkDuplicate?: boolean },
    answer: FakeAnswer,
    send: (status: number, body: unknown) => void,
  ): Promise<void> {
    const reading = await readSlip(Buffer.from(body.image, 'base64'));
    const slip_key = reading.kind === 'slip' ? reading.slip.reference : body.image;
    switch (answer.kind) {
      case 'error':
        return send(answer.status, { status: answer.status, message: answer.message });
      case 'server_error':
        return send(500, { status: 500, message: 'server_error' });
      case 'garbage':
        return send(200, '<html>gateway</html>');
      case 'slow':
        return void setTimeout(() => send(200, { status: 200, data: { transRef: 'SLOW' } }), answer.delay_ms);
      case 'success': {
        if (body.checkDuplicate && seen.has(slip_key)) return send(400, { status: 400, message: 'duplicate_slip' });
        seen.add(slip_key);
        answered += 1;
        const reply = (status: number, payload: unknown) =>
          answer.late_ms ? void setTimeout(() => send(status, payload), answer.late_ms) : send(status, payload);
        return reply(200, {
          status: 200,
          data: {
            payload: '0041000600000101030040220014242082547BPM049885102TH91048D7A',
            transRef:
              answer.trans_ref ??
              (reading.kind === 'slip' ? reading.slip.reference : `0142${Math.floor(Math.random() * 1e12)}`),
            date: '2026-11-22T10:15:00+07:00',
            countryCode: 'TH',
            amount: { amount: answer.amount_baht, local: { amount: 0, currency: '' } },
            fee: 0,
            ref1: '',
            ref2: '',
            ref3: '',
            sender: {
              bank: { id: '004', name: 'ธนาคารกสิกรไทย', short: 'KBANK' },
              account: {
                name: { th: 'นาย ผู้โอน ท', en: 'MR. PAYER T' },
                bank: { type: 'BANKAC', account: 'xxx-x-x1234-x' },
              },
            },
            receiver: {
              bank: { id: '014', name: 'ธนาคารไทยพาณิชย์', short: 'SCB' },
              account: {
                name: { th: 'บริษัท ผู้รับ จำกัด', en: 'RECEIVER CO' },
                bank: { type: 'BANKAC', account: answer.receiver_account ?? 'xxx-x-x5678-x' },
                ...(answer.receiver_proxy ? { proxy: { type: 'MSISDN', account: answer.receiver_proxy } } : {}),
              },
            },
          },
        });
      }
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    /** Slips judged and answered `success` (whether or not the answer reached the client in time). */
    get answered() {
      return answered;
    },
    answer(...answers: FakeAnswer[]) {
      next = answers;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
