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
    'Usage: mpay [--url URL] [--admin-token TOKEN] [--api-key KEY] [--json] <command> ...',
    '  --url          server base URL (env MPAY_URL, default http://localhost:3000)',
    '  --admin-token  admin service token (env ADMIN_SERVICE_TOKEN)',
    '  --api-key      merchant API key for merchant commands (env MPAY_API_KEY)',
    '  --json         machine-readable output',
    '  --version      print the version',
    '',
    'Commands (`mpay help <command>` or `mpay <command> --help` for one):',
  ];
  for (const [name, group] of groups) lines.push(`  ${name.padEnd(12)} ${group.summary}`, `  ${''.padEnd(12)} ${group.usage}`);
  return lines.join('\n');
}

/** One command's help: its summary and usage, one alternative per line. */
function commandHelp(name: string, group: CommandGroup): string {
  const usage = group.usage.split(' | ').join('\n    | ');
  return [`mpay ${name}: ${group.summary}`, '', 'Usage:', `  ${usage}`, '', 'Global options (before the command): --url, --admin-token, --api-key, --json. `mpay --help` lists every command.'].join('\n');
}

/** `--help`/`-h` anywhere among a command's arguments (before a `--`) asks for help and nothing else. */
function wantsHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

async function packageVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** Where a run's output goes and the environment it reads: the process's own unless a caller (a test) passes others. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}

const PROCESS_IO: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env };

export function createContext(
  options: { url: string; admin_token?: string | undefined; api_key?: string | undefined; json: boolean; actor_user_id?: string },
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
        response = await fetch(`${base}${path}`, { method, headers, ...(request_options.body === undefined ? {} : { body: JSON.stringify(request_options.body) }) });
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
        throw new CliError(`${method} ${path} -> ${response.status} ${error?.code ?? ''} ${error?.message ?? text}`.trim());
      }
      return { status: response.status, body, headers: response.headers };
    },
  };
}

const GLOBAL_WITH_VALUE = new Set(['--url', '--admin-token', '--api-key']);
const GLOBAL_FLAGS = new Set(['--json', '--help', '-h', '--version', '-V']);

function globalOptionsEnd(argv: string[]): number {
  let index = 0;
  while (index < argv.length) {
    const token = present(argv[index], 'index is within argv');
    if (GLOBAL_WITH_VALUE.has(token)) index += 2;
    else if (GLOBAL_FLAGS.has(token) || [...GLOBAL_WITH_VALUE].some((name) => token.startsWith(`${name}=`))) index += 1;
    else break;
  }
  return Math.min(index, argv.length);
}

export async function main(argv: string[], io: CliIo = PROCESS_IO): Promise<number> {
  const groups = await loadGroups();
  // Global options come before the command; everything after it belongs to the command.
  const command_at = globalOptionsEnd(argv);
  const { values } = parseArgs({
    args: argv.slice(0, command_at),
    options: {
      url: { type: 'string' },
      'admin-token': { type: 'string' },
      'api-key': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'V', default: false },
    },
  });
  const positionals = argv.slice(command_at);
  const [name, ...rest] = positionals;
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
  if (values.help || wantsHelp(rest)) {
    io.stdout.write(`${commandHelp(name, group)}\n`);
    return 0;
  }
  const context = createContext({
    url: (values.url as string | undefined) ?? io.env['MPAY_URL'] ?? `http://localhost:${io.env['PORT'] ?? 3000}`,
    admin_token: (values['admin-token'] as string | undefined) ?? io.env['ADMIN_SERVICE_TOKEN'],
    api_key: (values['api-key'] as string | undefined) ?? io.env['MPAY_API_KEY'],
    json: values.json === true,
  }, io);
  try {
    return await group.run(rest, context);
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr.write(`mpay ${name}: ${error.message}\n`);
      return error.exit_code;
    }
    throw error;
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/mpay')) {
  process.exitCode = await main(process.argv.slice(2));
}
