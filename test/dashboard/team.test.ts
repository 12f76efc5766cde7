import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { addUser, form, PASSWORD, signIn, type Browser } from './helpers.ts';

/** The Team page and its rules: owners invite, re-role and remove; removal ends sessions at once; all audited. */
describe('dashboard team', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let owner: Browser;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Team Shop');
    await addUser(t, merchant.id, 'owner@team.example', 'owner');
    owner = await signIn(t, 'owner@team.example');
  });
  after(() => t.close());

  const invitationPath = (body: string) => {
    const url = /id="invitation-url">([^<]+)</.exec(body)?.[1];
    assert.ok(url, 'the page shows the invitation link');
    return new URL(url).pathname;
  };
  const accept = (path: string) =>
    t.request({
      method: 'POST',
      url: path,
      payload: form({ password: PASSWORD }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  const userId = async (email: string) =>
    (await t.db.selectFrom('merchant_users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
  /** An owner of the merchant as the earlier tests left it (they change who is owner). */
  const anOwnerEmail = async () =>
    (
      await t.db
        .selectFrom('merchant_users')
        .select('email')
        .where('merchant_id', '=', merchant.id)
        .where('role', '=', 'owner')
        .executeTakeFirstOrThrow()
    ).email;
  const audit = (target_id: string) =>
    t.db
      .selectFrom('admin_audit_log')
      .select(['action', 'actor_user_id', 'details'])
      .where('target_id', '=', target_id)
      .orderBy('created_at')
      .execute();

  it('an owner invites a person; the link works once; the team lists them with their role', async () => {
    const invited = await owner.post('/dashboard/team/invite', { email: 'Dev@Team.example', role: 'viewer' });
    assert.equal(invited.statusCode, 201, invited.body.slice(0, 300));
    const path = invitationPath(invited.body);
    assert.equal((await accept(path)).statusCode, 303);
    assert.equal((await accept(path)).statusCode, 404, 'the link works once');
    const team = await owner.get('/dashboard/team');
    assert.equal(team.statusCode, 200);
    assert.match(team.body, /dev@team\.example/);
    const id = await userId('dev@team.example');
    assert.deepEqual(
      (await audit(id)).map((row) => row.action),
      ['merchant_user.invited'],
    );
  });

  it("a role change applies at the person's next request and is audited", async () => {
    const dev = await signIn(t, 'dev@team.example');
    assert.doesNotMatch((await dev.get('/dashboard/developers')).body, /roll-key/, 'a viewer sees no key forms');
    const id = await userId('dev@team.example');
    const changed = await owner.post(`/dashboard/team/${id}/role`, { role: 'developer' });
    assert.equal(changed.statusCode, 200, changed.body.slice(0, 300));
    assert.match((await dev.get('/dashboard/developers')).body, /roll-key/, 'the same session is a developer now');
    const rows = await audit(id);
    assert.equal(rows.at(-1)?.action, 'merchant_user.role_changed');
    assert.equal(rows.at(-1)?.actor_user_id, await userId('owner@team.example'));
    assert.deepEqual(
      {
        from: (rows.at(-1)!.details as Record<string, unknown>)['from'],
        to: (rows.at(-1)!.details as Record<string, unknown>)['to'],
      },
      { from: 'viewer', to: 'developer' },
    );
  });

  it('only owners manage the team: a developer gets 403 and sees no forms', async () => {
    const dev = await signIn(t, 'dev@team.example');
    const page = await dev.get('/dashboard/team');
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /invite-submit|remove-member|change-role/);
    const refused = await dev.post('/dashboard/team/invite', { email: 'x@team.example', role: 'owner' });
    assert.equal(refused.statusCode, 403);
    assert.equal(
      await t.db.selectFrom('merchant_users').select('id').where('email', '=', 'x@team.example').executeTakeFirst(),
      undefined,
    );
    const owner_id = await userId('owner@team.example');
    assert.equal((await dev.post(`/dashboard/team/${owner_id}/remove`, { confirm: 'yes' })).statusCode, 403);
  });

  it('removing a person ends all their sessions at once, refuses their password, and is audited', async () => {
    const first = await signIn(t, 'dev@team.example');
    const second = await signIn(t, 'dev@team.example');
    const id = await userId('dev@team.example');
    const unconfirmed = await owner.post(`/dashboard/team/${id}/remove`, {});
    assert.equal(unconfirmed.statusCode, 400, 'removal needs the confirmation box');
    assert.equal((await first.get('/dashboard')).statusCode, 200);
    const removed = await owner.post(`/dashboard/team/${id}/remove`, { confirm: 'yes' });
    assert.equal(removed.statusCode, 200, removed.body.slice(0, 300));
    for (const browser of [first, second]) {
      const page = await browser.get('/dashboard');
      assert.equal(page.statusCode, 303);
      assert.equal(page.headers.location, '/dashboard/sign-in');
      const api = await t.request({
        method: 'GET',
        url: '/v1/merchant-sell-orders',
        headers: { cookie: browser.cookie },
      });
      assert.equal(api.statusCode, 401, 'the session is gone for the API too');
    }
    const again = await t.request({
      method: 'POST',
      url: '/dashboard/sign-in',
      payload: form({ email: 'dev@team.example', password: PASSWORD }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(again.statusCode, 401);
    const rows = await audit(id);
    assert.equal(rows.at(-1)?.action, 'merchant_user.removed');
    assert.ok(Number((rows.at(-1)!.details as Record<string, unknown>)['sessions_ended']) >= 2);
    assert.doesNotMatch((await owner.get('/dashboard/team')).body, /dev@team\.example/);
  });

  it('a removed person can be invited again; resending replaces the link; revoking kills it', async () => {
    const invited = await owner.post('/dashboard/team/invite', { email: 'dev@team.example', role: 'finance' });
    assert.equal(invited.statusCode, 201, invited.body.slice(0, 300));
    const first_link = invitationPath(invited.body);
    const id = await userId('dev@team.example');
    const resent = await owner.post(`/dashboard/team/${id}/resend`);
    assert.equal(resent.statusCode, 200);
    const second_link = invitationPath(resent.body);
    assert.equal((await t.request({ method: 'GET', url: first_link })).statusCode, 404, 'the old link stopped');
    assert.equal((await t.request({ method: 'GET', url: second_link })).statusCode, 200);
    const revoked = await owner.post(`/dashboard/team/${id}/remove`, { confirm: 'yes' });
    assert.equal(revoked.statusCode, 200);
    assert.equal((await t.request({ method: 'GET', url: second_link })).statusCode, 404);
    assert.deepEqual((await audit(id)).map((row) => row.action).slice(-3), [
      'merchant_user.invited',
      'merchant_user.invitation_resent',
      'merchant_user.invitation_revoked',
    ]);
    // The operator's route follows the same rule: another merchant may not take the email; this one invites again.
    const elsewhere = await t.createMerchant('Other Team Shop');
    const taken = await t.admin('POST', `/admin/merchants/${elsewhere.id}/users`, {
      email: 'dev@team.example',
      role: 'viewer',
    });
    assert.equal(taken.statusCode, 409);
    assert.equal(taken.json().error.code, 'MERCHANT_USER_EXISTS');
    const again = await t.admin('POST', `/admin/merchants/${merchant.id}/users`, {
      email: 'dev@team.example',
      role: 'viewer',
    });
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.json().data.user.id, id, 'the same person, not a second row');
    const row = await t.db
      .selectFrom('merchant_users')
      .select(['merchant_id', 'role', 'removed_at', 'password_hash'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { merchant_id: merchant.id, role: 'viewer', removed_at: null, password_hash: null });
  });

  it('an owner cannot remove themselves, nor the last owner lose the role; two owners demoting each other at once leave one owner', async () => {
    const self = await owner.post(`/dashboard/team/${await userId('owner@team.example')}/remove`, { confirm: 'yes' });
    assert.equal(self.statusCode, 403);
    assert.match(self.body, /id="error-message"/);
    await addUser(t, merchant.id, 'second@team.example', 'owner');
    const second = await signIn(t, 'second@team.example');
    const [a, b] = await Promise.all([
      owner.post(`/dashboard/team/${await userId('second@team.example')}/role`, { role: 'viewer' }),
      second.post(`/dashboard/team/${await userId('owner@team.example')}/role`, { role: 'viewer' }),
    ]);
    assert.deepEqual([a.statusCode, b.statusCode].sort(), [200, 403], `one wins: ${a.statusCode} ${b.statusCode}`);
    const owners = await t.db
      .selectFrom('merchant_users')
      .select('id')
      .where('merchant_id', '=', merchant.id)
      .where('role', '=', 'owner')
      .where('removed_at', 'is', null)
      .execute();
    assert.equal(owners.length, 1);
  });

  it("another merchant's person is not found", async () => {
    const other = await t.createMerchant('Other Team');
    await addUser(t, other.id, 'stranger@team.example', 'viewer');
    const id = await userId('stranger@team.example');
    const browser = await signIn(t, await anOwnerEmail());
    assert.equal((await browser.post(`/dashboard/team/${id}/remove`, { confirm: 'yes' })).statusCode, 404);
    assert.equal((await browser.post(`/dashboard/team/${id}/role`, { role: 'owner' })).statusCode, 404);
    const row = await t.db
      .selectFrom('merchant_users')
      .select(['role', 'removed_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { role: 'viewer', removed_at: null });
  });

  it("times show in the merchant's time zone (Asia/Bangkok by default), which an owner changes in settings", async () => {
    const browser = await signIn(t, await anOwnerEmail());
    assert.match((await browser.get('/dashboard/team')).body, /GMT\+7/);
    const bad = await browser.post('/dashboard/settings', { time_zone: 'Mars/Olympus' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /id="error-message"/);
    assert.equal((await browser.post('/dashboard/settings', { time_zone: 'America/New_York' })).statusCode, 303);
    const page = await browser.get('/dashboard/team');
    assert.match(page.body, /GMT-[45]/);
    assert.doesNotMatch(page.body, /GMT\+7/);
  });
});
