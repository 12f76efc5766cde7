import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { createPendingFunds, receipt } from '../helpers/pending-funds.ts';

/** The receiver-confirm audit list keeps the contract's meaning by default; intake rows are an explicit filter. */
describe('GET /admin/audit/receiver-confirm: receiver-confirm rows by default', () => {
  let t: TestApp;
  let receiver: TestMerchant;
  before(async () => {
    t = await startTestApp();
    receiver = await t.createMerchant('Receiver');
  });
  after(() => t.close());

  it('rows per pending_funds_id equal receiver-confirm calls; stage=intake and stage=all show the intake validation', async () => {
    const created = await createPendingFunds(t, receiver.id);
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id;
    const confirmed = await t.call('POST', `/v1/pending-funds/${id}/receiver-confirm`, receiver.live, receipt());
    assert.equal(confirmed.statusCode, 201, confirmed.body);
    const list = async (query: string) =>
      (await t.admin('GET', `/admin/audit/receiver-confirm?pending_funds_id=${id}${query}`)).json().data as {
        id: string;
      }[];
    const by_default = await list('');
    assert.equal(by_default.length, 1, 'one receiver-confirm call, one row');
    assert.equal(by_default[0]!.id, confirmed.json().data.audit_id);
    const intake = await list('&stage=intake');
    assert.equal(intake.length, 1);
    assert.notEqual(intake[0]!.id, by_default[0]!.id);
    assert.equal((await list('&stage=all')).length, 2);
    assert.equal((await t.admin('GET', '/admin/audit/receiver-confirm?stage=bogus')).statusCode, 400);
  });
});
