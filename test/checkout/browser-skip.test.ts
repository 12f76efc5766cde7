import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

describe('first run without Chromium', () => {
  it('skips the browser tests with one loud line saying how to enable them, and passes', async () => {
    const file = resolve(import.meta.dirname, 'browser.test.ts');
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--test', '--test-reporter=tap', file], {
      env: { ...process.env, CHROMIUM_PATH: '/nonexistent/chromium' },
    });
    const loud = stderr.split('\n').filter((line) => line.includes('BROWSER TESTS SKIPPED'));
    assert.equal(loud.length, 1, stderr);
    assert.match(loud[0]!, /Chromium not found at \/nonexistent\/chromium\. Enable them: sudo apt-get install chromium/);
    assert.match(stdout, /# skipped 1\b|# SKIP Chromium not found/);
    assert.match(stdout, /# fail 0/);
  });
});
