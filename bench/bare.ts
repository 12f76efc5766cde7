/**
 * The strict baseline: a bare endpoint in a process of its own (plain `node:http` and `pg` with a pool of 20, no
 * framework, no authentication), one statement per request, started by the bench beside the application on the same
 * database. The load generator runs in a third process, so a figure's ratio compares the application with the least
 * any HTTP service can do per request on the same machine.
 *
 * - `POST /insert`: one INSERT of a row (id, order_id, amount, created_at) into `bench_rows`;
 * - `GET /select/<id>`: one SELECT of a payment by primary key;
 * - `GET /list?merchant_id=<id>`: one SELECT of that merchant's 25 newest live payments.
 *
 * Tells its parent its address over IPC; stops on SIGTERM.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

// connections stay open between figures, so each figure's backends are counted from its start
const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'], max: 20, idleTimeoutMillis: 0 });

function send(response: import('node:http').ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

const server = createServer((request, response) => {
  const url = request.url ?? '/';
  const fail = (error: Error) => send(response, 500, { success: false, error: error.message });
  if (request.method === 'POST' && url === '/insert') {
    // the body is read and dropped, as a real endpoint would read it
    request.resume();
    request.on('end', () => {
      const id = randomUUID();
      pool
        .query('insert into bench_rows (id, order_id, amount_minor, created_at) values ($1, $2, 10000, now())', [
          id,
          id,
        ])
        .then(() => send(response, 201, { success: true, data: { id } }), fail);
    });
    return;
  }
  if (request.method === 'GET' && url.startsWith('/select/')) {
    pool
      .query('select * from payments where id = $1', [url.slice('/select/'.length)])
      .then((result) => send(response, 200, { success: true, data: result.rows[0] }), fail);
    return;
  }
  if (request.method === 'GET' && url.startsWith('/list?')) {
    const merchant_id = new URLSearchParams(url.slice('/list?'.length)).get('merchant_id');
    pool
      .query(
        'select * from payments where merchant_id = $1 and is_sandbox = false order by created_at desc, id desc limit 25',
        [merchant_id],
      )
      .then((result) => send(response, 200, { success: true, data: result.rows }), fail);
    return;
  }
  send(response, 404, { success: false });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ url: `http://127.0.0.1:${port}` });
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
  void pool.end().finally(() => process.exit(0));
});
