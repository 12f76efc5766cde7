import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createEasySlipValidator, maskedMatches } from '../../src/modules/validators/easyslip.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { createPendingFunds } from '../helpers/pending-funds.ts';
import { startFakeEasySlip } from './fake-easyslip.ts';

const KEY = 'easyslip-test-key';
const slip = () => new Uint8Array(Buffer.from(`slip-${randomUUID()}`));
const RECEIVER = { account_number: '123-4-45678-9' };
const intake = () => ({ receipt_base64: Buffer.from(`intake-${randomUUID()}`).toString('base64') });

describe('easyslip validator against a fake EasySlip on loopback', () => {
  let fake: Awaited<ReturnType<typeof startFakeEasySlip>>;
  let validator: ReturnType<typeof createEasySlipValidator>;
  before(async () => {
    fake = await startFakeEasySlip(KEY);
    validator = createEasySlipValidator({ base_url: fake.url, api_key: KEY, timeout_ms: 300 });
  });
  after(() => fake.close());

  it('masked account numbers match on their visible digits', () => {
    assert.equal(maskedMatches('xxx-x-x5678-x', '123-4-45678-9'), true);
    assert.equal(maskedMatches('xxx-x-x5679-x', '123-4-45678-9'), false);
    assert.equal(maskedMatches('xxx-xxx-5678', '0812345678'), true);
    assert.equal(maskedMatches('xxxx', '1234'), false);
  });

  it('verified: amount and receiver match; keeps the full response, transRef and the observed amount', async () => {
    fake.answer({ kind: 'success', amount_baht: 1000.5, trans_ref: 'REF-1' });
    const verdict = await validator.validate({
      image: slip(),
      content_type: 'image/png',
      expected_amount_minor: 100_050,
      receiver: RECEIVER,
    });
    assert.equal(verdict.outcome, 'verified');
    assert.equal(verdict.validator_kind, 'easyslip');
    assert.equal(verdict.reference, 'REF-1');
    assert.equal(verdict.observed_amount_minor, 100_050);
    assert.equal((verdict.response['data'] as { transRef: string }).transRef, 'REF-1');
    assert.equal(fake.received.at(-1)!['checkDuplicate'], true);
  });

  it('failed: amount mismatch, receiver mismatch, duplicate_slip, slip_not_found, invalid_payload', async () => {
    fake.answer({ kind: 'success', amount_baht: 999 });
    assert.deepEqual(
      pick(await validator.validate({ image: slip(), content_type: 'image/png', expected_amount_minor: 100_000 })),
      ['failed', 'amount_mismatch'],
    );
    fake.answer({ kind: 'success', amount_baht: 1000, receiver_account: 'xxx-x-x9999-x' });
    assert.deepEqual(
      pick(
        await validator.validate({
          image: slip(),
          content_type: 'image/png',
          expected_amount_minor: 100_000,
          receiver: RECEIVER,
        }),
      ),
      ['failed', 'receiver_mismatch'],
    );
    const image = slip();
    fake.answer({ kind: 'success', amount_baht: 1000 }, { kind: 'success', amount_baht: 1000 });
    assert.equal((await validator.validate({ image, content_type: 'image/png' })).outcome, 'verified');
    assert.deepEqual(pick(await validator.validate({ image, content_type: 'image/png' })), [
      'failed',
      'duplicate_slip',
    ]);
    fake.answer({ kind: 'error', status: 404, message: 'slip_not_found' });
    assert.deepEqual(pick(await validator.validate({ image: slip(), content_type: 'image/png' })), [
      'failed',
      'slip_not_found',
    ]);
    fake.answer({ kind: 'error', status: 400, message: 'invalid_payload' });
    const invalid = await validator.validate({ image: slip(), content_type: 'image/png' });
    assert.deepEqual(pick(invalid), ['failed', 'invalid_payload']);
    assert.equal(invalid.response['message'], 'invalid_payload');
  });

  it('unverified: quota_exceeded, bad credentials, 5xx, unreadable answers and an unreachable provider; timeout when slow', async () => {
    fake.answer({ kind: 'error', status: 403, message: 'quota_exceeded' });
    assert.deepEqual(pick(await validator.validate({ image: slip(), content_type: 'image/png' })), [
      'unverified',
      'quota_exceeded',
    ]);
    const wrong_key = createEasySlipValidator({ base_url: fake.url, api_key: 'nope', timeout_ms: 300 });
    assert.deepEqual(pick(await wrong_key.validate({ image: slip(), content_type: 'image/png' })), [
      'unverified',
      'unauthorized',
    ]);
    fake.answer({ kind: 'server_error' });
    assert.deepEqual(pick(await validator.validate({ image: slip(), content_type: 'image/png' })), [
      'unverified',
      'provider_error',
    ]);
    fake.answer({ kind: 'garbage' });
    assert.deepEqual(pick(await validator.validate({ image: slip(), content_type: 'image/png' })), [
      'unverified',
      'provider_error',
    ]);
    fake.answer({ kind: 'slow', delay_ms: 1_000 });
    assert.deepEqual(pick(await validator.validate({ image: slip(), content_type: 'image/png' })), [
      'timeout',
      'provider_timeout',
    ]);
    const nowhere = createEasySlipValidator({ base_url: 'http://127.0.0.1:9', api_key: KEY, timeout_ms: 300 });
    assert.deepEqual(pick(await nowhere.validate({ image: slip(), content_type: 'image/png' })), [
      'unverified',
      'provider_unreachable',
    ]);
  });

  describe('wired through RECEIPT_VALIDATOR=easyslip', () => {
    let t: TestApp;
    let receiver: TestMerchant;
    before(async () => {
      t = await startTestApp({
        env: {
          RECEIPT_VALIDATOR: 'easyslip',
          EASYSLIP_BASE_URL: fake.url,
          EASYSLIP_API_KEY: KEY,
          EASYSLIP_TIMEOUT_MS: '300',
        },
      });
      receiver = await t.createMerchant();
    });
    after(() => t.close());

    it('intake and receiver-confirm call EasySlip; the audit keeps its whole answer; a duplicate slip fails the row', async () => {
      assert.equal(t.application.validator.kind, 'easyslip');
      fake.answer({ kind: 'success', amount_baht: 350 });
      const created = await createPendingFunds(t, receiver.id, 10_000_000, {
        ...intake(),
        fiat_amount_minor: 35_000,
        fiat_currency: 'THB',
        receiver_account: RECEIVER,
      });
      assert.equal(created.json().data.status, 'validated_pending_receiver_confirm', created.body);
      const id = created.json().data.id;
      fake.answer({ kind: 'success', amount_baht: 350 });
      const receipt = {
        receipt_base64: Buffer.from(`receiver-${randomUUID()}`).toString('base64'),
        content_type: 'image/jpeg',
      };
      const confirmed = await t.call('POST', `/v1/pending-funds/${id}/receiver-confirm`, receiver.live, receipt);
      assert.equal(confirmed.statusCode, 201);
      assert.equal(confirmed.json().data.outcome, 'verified');
      const audit = await t.admin('GET', `/admin/audit/receiver-confirm/${confirmed.json().data.audit_id}`);
      assert.equal(audit.json().data.validator_kind, 'easyslip');
      assert.equal(audit.json().data.observed_amount_minor, 35_000);
      assert.ok(audit.json().data.validator_response.data.transRef);
      assert.equal(audit.json().data.validator_response.data.receiver.account.bank.account, 'xxx-x-x5678-x');

      fake.answer({ kind: 'success', amount_baht: 350 }, { kind: 'success', amount_baht: 350 });
      const second = await createPendingFunds(t, receiver.id, 10_000_000, {
        ...intake(),
        fiat_amount_minor: 35_000,
        receiver_account: RECEIVER,
      });
      assert.equal(second.json().data.status, 'validated_pending_receiver_confirm');
      const duplicate = await t.call(
        'POST',
        `/v1/pending-funds/${second.json().data.id}/receiver-confirm`,
        receiver.live,
        receipt,
      );
      assert.equal(duplicate.statusCode, 201);
      assert.equal(duplicate.json().data.outcome, 'failed');
      assert.equal(duplicate.json().data.pending_funds.failure_reason, 'duplicate_slip');

      const third = await createPendingFunds(t, receiver.id, 10_000_000, intake());
      fake.answer({ kind: 'slow', delay_ms: 1_000 });
      const slow = await t.call('POST', `/v1/pending-funds/${third.json().data.id}/receiver-confirm`, receiver.live, {
        ...receipt,
        receipt_base64: Buffer.from(randomUUID()).toString('base64'),
      });
      assert.equal(slow.json().data.outcome, 'timeout');
      assert.equal(slow.json().data.pending_funds.status, 'validated_pending_receiver_confirm');
      assert.equal(slow.json().data.pending_funds.attempts, 1);
      assert.equal(slow.json().data.pending_funds.unverified_attempts, 0);
    });
  });
});

function pick(verdict: { outcome: string; reason?: string }): [string, string | undefined] {
  return [verdict.outcome, verdict.reason];
}
