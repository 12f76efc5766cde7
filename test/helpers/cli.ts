import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { main } from '../../src/cli/main.ts';
import { ADMIN_TOKEN } from './app.ts';

const run = promisify(execFile);
const MAIN = resolve(import.meta.dirname, '../../src/cli/main.ts');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The test app's admin token, then the process environment with `env` over it (an undefined value removes a variable). */
function environment(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, ADMIN_SERVICE_TOKEN: ADMIN_TOKEN, ...env };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  return merged;
}

/**
 * Runs `mpay` in this process (its `main` with its own output and environment) and resolves even on a non-zero
 * exit: a new Node process per command cost about a CPU-second. An exception that escapes `main` ends like an
 * uncaught one in the real process: exit code 1 and the stack on stderr. `runMpayProcess` keeps the real boundary.
 */
export async function runMpay(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: environment(env),
  };
  try {
    const code = await main(args, io);
    return { code, stdout, stderr };
  } catch (error) {
    return { code: 1, stdout, stderr: `${stderr}${(error as Error).stack ?? String(error)}\n` };
  }
}

/** Runs `mpay` as a separate process, as an operator would (the bin entry, exit codes and streams of a real process). */
export async function runMpayProcess(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], {
      env: environment(env),
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return {
      code: typeof failure.code === 'number' ? failure.code : 1,
      stdout: failure.stdout ?? '',
      stderr: failure.stderr ?? '',
    };
  }
}
