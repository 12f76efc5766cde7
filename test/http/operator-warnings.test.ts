import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/** An operator sees in /readyz that live proofs are approved unchecked (null_validator), still ready. */
describe('/readyz shows the receipt validator', () => {
  let t: TestApp;
  let default_app: TestApp;
  before(async () => {
    t = await startTestApp({ env: { RECEIPT_VALIDATOR: 'null_validator' } });
    default_app = await startTestApp();
  });
  after(async () => {
    await t.close();
    await default_app.close();
  });

  it('the default (slip_qr) says what it does not check and stays ready', async () => {
    const ready = await default_app.request({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.json().checks.receipt_validator.ok, true);
    assert.match(
      ready.json().checks.receipt_validator.detail,
      /^warning: slip_qr checks that a THB slip carries a new slip-verification QR, not its amount or payee/,
    );
  });

  it('warns about null_validator and stays ready', async () => {
    const ready = await t.request({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.json().status, 'ready');
    assert.equal(ready.json().checks.receipt_validator.ok, true);
    assert.match(ready.json().checks.receipt_validator.detail, /^warning: null_validator approves every live proof/);
  });
});
