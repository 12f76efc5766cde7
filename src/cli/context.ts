/** What every `mpay` command gets: where the server is, the operator's credentials, and how to print. */
export interface CliContext {
  url: string;
  admin_token: string | undefined;
  api_key: string | undefined;
  json: boolean;
  actor_user_id: string;
  /** Raw output (a CSV, the listener's log) and the environment: the process's, or a test's in-process run's. */
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
  /** Prints a result: JSON with --json, else a readable form. */
  print(value: unknown, human?: string): void;
  /** Calls the server; throws CliError with the server's error code on non-2xx. */
  request(
    method: string,
    path: string,
    options?: { body?: unknown; auth?: 'admin' | 'key' | 'none'; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
}

export class CliError extends Error {
  readonly exit_code: number;
  constructor(message: string, exit_code = 1) {
    super(message);
    this.exit_code = exit_code;
  }
}

/** A command group (`mpay <group> ...`) lives in `src/cli/commands/<group>.ts` and exports these. */
export interface CommandGroup {
  summary: string;
  usage: string;
  run(args: string[], context: CliContext): Promise<number>;
}
