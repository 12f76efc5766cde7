#!/usr/bin/env node
import { readdir } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { CliError, type CliContext, type CommandGroup } from './context.ts';
import { present } from '../lib/assert.ts';

const COMMANDS_DIR = new URL('./commands/', import.meta.url);

async function loadGroups(): Promise<Map<string, CommandGroup>> {
  const groups = new Map<string, CommandGroup>();
  for (const file of (await readdir(COMMANDS_DIR)).filter((name) => name.endsWith('.ts')).sort()) {
    const module = (await import(new URL(file, COMMANDS_DIR).href)) as { default: CommandGroup };
    groups.set(file.replace(/\.ts$/, ''), module.default);
  }
  return groups;
}

function usage(groups: Map<string, CommandGroup>): string {
  const lines = [
    'mpay: operator command line for a running mpay server',
    '',
    'Usage: mpay <command> ... [--url URL] [--admin-token TOKEN] [--api-key KEY] [--json]',
    '  (the options below may stand anywhere: before the command, after it, or among its arguments)',
    '  --url          server base URL (env MPAY_URL, default http://localhost:3000)',
    '  --admin-token  admin service token (env ADMIN_SERVICE_TOKEN)',
    '  --api-key      merchant API key for merchant commands (env MPAY_API_KEY)',
    '  --json         machine-readable output',
    '  --version      print the version',
    '',
    'Commands (`mpay help <command>` or `mpay <command> --help` for one):',
  ];
  for (const [name, group] of groups)
    lines.push(`  ${name.padEnd(12)} ${group.summary}`, `  ${''.padEnd(12)} ${group.usage}`);
  return lines.join('\n');
}

/** One command's help: its summary and usage, one alternative per line. */
function commandHelp(name: string, group: CommandGroup): string {
  const usage = group.usage.split(' | ').join('\n    | ');
  return [
    `mpay ${name}: ${group.summary}`,
    '',
    'Usage:',
    `  ${usage}`,
    '',
    'Global options (anywhere on the line): --url, --admin-token, --api-key, --json. `mpay --help` lists every command.',
  ].join('\n');
}

async function packageVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

/** Where a run's output goes and the environment it reads: the process's own unless a caller (a test) passes others. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}

const PROCESS_IO: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env };

export function createContext(
  options: {
    url: string;
    admin_token?: string | undefined;
    api_key?: string | undefined;
    json: boolean;
    actor_user_id?: string;
  },
  io: CliIo = PROCESS_IO,
): CliContext {
  const base = options.url.replace(/\/+$/, '');
  return {
    url: base,
    admin_token: options.admin_token,
    api_key: options.api_key,
    json: options.json,
    actor_user_id: options.actor_user_id ?? 'cli',
    stdout: io.stdout,
    stderr: io.stderr,
    env: io.env,
    print(value, human) {
      io.stdout.write(`${options.json || human === undefined ? JSON.stringify(value, null, 2) : human}\n`);
    },
    async request(method, path, request_options = {}) {
      const headers: Record<string, string> = { ...request_options.headers };
      const auth = request_options.auth ?? 'admin';
      if (auth === 'admin') {
        if (!options.admin_token) throw new CliError('this command needs --admin-token or ADMIN_SERVICE_TOKEN', 2);
        headers['authorization'] = `Bearer ${options.admin_token}`;
        headers['x-actor-user-id'] = options.actor_user_id ?? 'cli';
        headers['x-actor-role'] = 'super_admin';
      } else if (auth === 'key') {
        if (!options.api_key) throw new CliError('this command needs --api-key or MPAY_API_KEY', 2);
        headers['x-api-key'] = options.api_key;
      }
      if (request_options.body !== undefined) headers['content-type'] = 'application/json';
      let response: Response;
      try {
        response = await fetch(`${base}${path}`, {
          method,
          headers,
          ...(request_options.body === undefined ? {} : { body: JSON.stringify(request_options.body) }),
        });
      } catch (error) {
        throw new CliError(`cannot reach ${base}: ${(error as Error).message}`, 3);
      }
      const text = await response.text();
      let body: any = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // not JSON (CSV, PNG): keep the text
      }
      if (!response.ok) {
        const error = body?.error;
        throw new CliError(
          `${method} ${path} -> ${response.status} ${error?.code ?? ''} ${error?.message ?? text}`.trim(),
        );
      }
      return { status: response.status, body, headers: response.headers };
    },
  };
}

const GLOBAL_WITH_VALUE = new Set(['--url', '--admin-token', '--api-key']);
const GLOBAL_FLAGS = new Set(['--json', '--help', '-h', '--version', '-V']);

/**
 * The global options wherever they stand before a `--` (before the command, after it, or among its arguments), and
 * the command with its own arguments in their order. `--help` after a `--` is the command's argument, not a global.
 */
export function splitGlobalOptions(argv: string[]): { globals: string[]; command: string[] } {
  const globals: string[] = [];
  const command: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const token = present(argv[index], 'index is within argv');
    if (token === '--') {
      command.push(...argv.slice(index));
      break;
    }
    if (GLOBAL_WITH_VALUE.has(token)) {
      const value = argv[index + 1];
      if (value === undefined || value === '--') throw new CliError(`${token} needs a value`, 2);
      globals.push(`${token}=${value}`);
      index += 1;
    } else if (GLOBAL_FLAGS.has(token) || [...GLOBAL_WITH_VALUE].some((name) => token.startsWith(`${name}=`))) {
      globals.push(token);
    } else {
      command.push(token);
    }
  }
  return { globals, command };
}

/** A mistake in how mpay was called (an unknown option, a missing value): node's parseArgs says which. */
function isUsageError(error: unknown): error is Error {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

export async function main(argv: string[], io: CliIo = PROCESS_IO): Promise<number> {
  try {
    return await runCommand(argv, io);
  } catch (error) {
    const where = error instanceof CommandFailure ? `mpay ${error.command}` : 'mpay';
    const cause = error instanceof CommandFailure ? error.cause : error;
    if (cause instanceof CliError) {
      io.stderr.write(`${where}: ${cause.message}\n`);
      return cause.exit_code;
    }
    if (isUsageError(cause)) {
      const help = error instanceof CommandFailure ? `mpay help ${error.command}` : 'mpay --help';
      io.stderr.write(`${where}: ${cause.message}\nSee \`${help}\` for the usage.\n`);
      return 2;
    }
    // Not a usage error: a bug or an unexpected failure. The message, and the stack only when asked for.
    const message = cause instanceof Error ? cause.message : String(cause);
    const stack =
      io.env['MPAY_DEBUG'] && cause instanceof Error ? `\n${cause.stack}` : ' (MPAY_DEBUG=1 shows the stack)';
    io.stderr.write(`${where}: unexpected error: ${message}${stack}\n`);
    return 1;
  }
}

/** An error thrown while a command ran, with the command's name for the message. */
class CommandFailure extends Error {
  readonly command: string;
  constructor(command: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.command = command;
  }
}

async function runCommand(argv: string[], io: CliIo): Promise<number> {
  const groups = await loadGroups();
  const { globals, command } = splitGlobalOptions(argv);
  const { values } = parseArgs({
    args: globals,
    options: {
      url: { type: 'string' },
      'admin-token': { type: 'string' },
      'api-key': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'V', default: false },
    },
  });
  // The command is the first word; an option of the command's standing before it still goes to the command.
  const at = command.findIndex((token) => !token.startsWith('-'));
  const name = at === -1 || command.slice(0, at).includes('--') ? undefined : command[at];
  const rest = name === undefined ? command : [...command.slice(0, at), ...command.slice(at + 1)];
  if (values.version || name === 'version') {
    io.stdout.write(`mpay ${await packageVersion()}\n`);
    return 0;
  }
  if (name === 'help') {
    const topic = rest[0];
    if (!topic) {
      io.stdout.write(`${usage(groups)}\n`);
      return 0;
    }
    const group = groups.get(topic);
    if (!group) {
      io.stderr.write(`mpay: unknown command "${topic}"\n${usage(groups)}\n`);
      return 2;
    }
    io.stdout.write(`${commandHelp(topic, group)}\n`);
    return 0;
  }
  if (!name || (values.help && !groups.has(name))) {
    io.stdout.write(`${usage(groups)}\n`);
    return values.help ? 0 : 2;
  }
  const group = groups.get(name);
  if (!group) {
    io.stderr.write(`mpay: unknown command "${name}"\n${usage(groups)}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${commandHelp(name, group)}\n`);
    return 0;
  }
  const context = createContext(
    {
      url: values.url ?? io.env['MPAY_URL'] ?? `http://localhost:${io.env['PORT'] ?? 3000}`,
      admin_token: values['admin-token'] ?? io.env['ADMIN_SERVICE_TOKEN'],
      api_key: values['api-key'] ?? io.env['MPAY_API_KEY'],
      json: values.json,
    },
    io,
  );
  try {
    return await group.run(rest, context);
  } catch (error) {
    throw new CommandFailure(name, error);
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/mpay')) {
  process.exitCode = await main(process.argv.slice(2));
}
