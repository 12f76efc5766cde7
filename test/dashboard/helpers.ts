import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';

export const PASSWORD = 'correct horse battery staple';

/** Invites a user through the admin route and sets the password through the invitation link, as a person would. */
export async function addUser(
  t: TestApp,
  merchant_id: string,
  email: string,
  role: string,
  password = PASSWORD,
): Promise<{ invitation_url: string }> {
  const invited = await t.admin('POST', `/admin/merchants/${merchant_id}/users`, { email, role });
  assert.equal(invited.statusCode, 201, invited.body);
  const { invitation_url } = invited.json().data;
  const path = new URL(invitation_url).pathname;
  const accepted = await t.request({
    method: 'POST',
    url: path,
    payload: `password=${encodeURIComponent(password)}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(accepted.statusCode, 303, accepted.body);
  return { invitation_url };
}

export function cookieOf(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie'];
  const value = Array.isArray(header) ? header.find((line) => line.startsWith('mpay_session=')) : header;
  assert.ok(value !== undefined, `a session cookie: ${String(header)}`);
  assert.ok(value.startsWith('mpay_session='), `a session cookie: ${String(header)}`);
  return value.split(';')[0]!;
}

export function form(values: Record<string, string>): string {
  return new URLSearchParams(values).toString();
}

export interface Browser {
  cookie: string;
  csrf: string;
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, values?: Record<string, string>, options?: { csrf?: boolean }): Promise<LightMyRequestResponse>;
}

export async function signIn(t: TestApp, email: string, password = PASSWORD): Promise<Browser> {
  const response = await t.request({
    method: 'POST',
    url: '/dashboard/sign-in',
    payload: form({ email, password }),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(response.statusCode, 303, response.body);
  const cookie = cookieOf(response);
  const home = await t.request({ method: 'GET', url: '/dashboard', headers: { cookie } });
  assert.equal(home.statusCode, 200, home.body);
  const csrf = /data-csrf="([0-9a-f]{64})"/.exec(home.body)?.[1];
  assert.ok(csrf, 'the page carries the CSRF token');
  return {
    cookie,
    csrf,
    get: (url) => t.request({ method: 'GET', url, headers: { cookie } }),
    post: (url, values = {}, options = {}) =>
      t.request({
        method: 'POST',
        url,
        payload: form(options.csrf === false ? values : { _csrf: csrf, ...values }),
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      }),
  };
}
