import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

describe('first run without Chromium', () => {
  it('skips the browser tests with one loud line saying how to enable them, and passes', async () => {
    const file = resolve(import.meta.dirname, 'browser.test.ts');
    // A test run of its own (without NODE_TEST_CONTEXT, which makes a nested `node --test` refuse to run files).
    const env: NodeJS.ProcessEnv = { ...process.env, CHROMIUM_PATH: '/nonexistent/chromium' };
    delete env['NODE_TEST_CONTEXT'];
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--test', '--test-reporter=tap', file], {
      env,
    });
    // The runner forwards the test file's stderr into its report.
    const loud = `${stdout}\n${stderr}`.split('\n').filter((line) => line.includes('BROWSER TESTS SKIPPED'));
    assert.equal(loud.length, 1, stdout + stderr);
    assert.match(
      loud[0]!,
      /Chromium not found at \/nonexistent\/chromium\. Enable them: sudo apt-get install chromium/,
    );
    assert.match(
      stdout,
      /ok 1 - hosted checkout in headless Chromium # SKIP Chromium not found at \/nonexistent\/chromium/,
    );
    assert.match(stdout, /# fail 0/);
  });
});
