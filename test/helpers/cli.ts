import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { ADMIN_TOKEN } from './app.ts';

const run = promisify(execFile);
const MAIN = resolve(import.meta.dirname, '../../src/cli/main.ts');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `mpay` as a separate process (as an operator would) and resolves even on a non-zero exit. The admin token of
 * the test app is in its environment; `env` adds or overrides variables.
 */
export async function runMpay(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], { env: { ...process.env, ADMIN_SERVICE_TOKEN: ADMIN_TOKEN, ...env }, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: typeof failure.code === 'number' ? failure.code : 1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
  }
}
