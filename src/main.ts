#!/usr/bin/env node
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createApplication } from './app.ts';
import { bootstrapDemo, firstStartBanner } from './bootstrap.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { databaseTimeouts, openDatabase } from './db/database.ts';
import { migrateAsOwner } from './db/roles.ts';
import { startMetricsServer } from './http/metrics.ts';

/**
 * Live credentials go to a terminal only. Anywhere else (a log collector, a container's stdout) they are written to a
 * file only the owner can read, and stdout gets its path.
 */
function deliverBanner(banner: string, config: Config): string {
  if (process.stdout.isTTY) return banner;
  const in_memory = config.data_dir === 'memory://' || config.data_dir === ':memory:';
  const directory = in_memory ? mkdtempSync(join(tmpdir(), 'mpay-')) : config.data_dir;
  mkdirSync(directory, { recursive: true });
  const path = resolve(directory, 'first-start-credentials.txt');
  writeFileSync(path, `${banner}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return `mpay: first start: live credentials written to ${path} (readable by this user only; stdout is not a terminal)`;
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`mpay: invalid configuration: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }

  // Migrations run without the service's statement and lock timeouts (a long backfill, a wait on another starter's lock).
  const migrations = config.database_url
    ? await openDatabase({ database_url: config.database_url, data_dir: config.data_dir })
    : undefined;
  const database = await openDatabase({ ...config, timeouts: databaseTimeouts(config) });
  const { applied, grants } = await migrateAsOwner(config, migrations ?? database).finally(() => migrations?.close());
  const application = await createApplication({ config, database });
  const log = application.logger;
  if (applied.length) log.info({ migrations: applied }, 'migrations applied');
  if (grants)
    log.info(
      { role: grants.role, tables: grants.tables, append_only: grants.append_only },
      'least-privilege grants applied to the service role',
    );

  const banner = firstStartBanner(application, await bootstrapDemo(application));
  if (banner) process.stdout.write(`${deliverBanner(banner, config)}\n`);
  if (config.receipt_validator === 'null_validator') {
    log.warn(
      'RECEIPT_VALIDATOR=null_validator approves every live proof of payment without checking it; set RECEIPT_VALIDATOR=easyslip where slips are not verified elsewhere',
    );
  } else if (config.receipt_validator === 'slip_qr') {
    log.warn(
      'RECEIPT_VALIDATOR=slip_qr accepts THB slips with a new slip-verification QR without checking their amount or payee (RECEIPT_VALIDATOR=easyslip checks both); other rails use null_validator',
    );
  }

  if (config.roles.has('worker')) application.scheduler.start();
  let metrics_server: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  if (config.roles.has('api') || config.roles.has('ledger')) {
    const address = await application.app.listen({ port: config.port, host: config.host });
    log.info({ address, roles: [...config.roles], database: database.kind }, 'mpay listening');
  } else {
    // no API here: its jobs' counters are scraped from METRICS_PORT, when set
    metrics_server =
      config.metrics_port === undefined
        ? undefined
        : await startMetricsServer({
            port: config.metrics_port,
            host: config.host,
            token: config.metrics_token,
            registry: application.metrics,
          });
    log.info(
      { roles: [...config.roles], database: database.kind, metrics: metrics_server?.address },
      'mpay worker running',
    );
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await metrics_server?.close();
    await application.close();
    await database.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

await main();
