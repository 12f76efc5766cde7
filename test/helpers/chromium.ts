import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

/** Debian's `chromium` package, or CHROMIUM_PATH. */
export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] || '/usr/bin/chromium';

/**
 * The browser tests' skip reason when Chromium is missing (undefined when it is there), after one loud line on
 * stderr saying how to enable them: `./scripts/setup.sh` installs it when run as root with apt-get.
 */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  const reason = `Chromium not found at ${CHROMIUM_PATH}`;
  process.stderr.write(
    `\n*** BROWSER TESTS SKIPPED: ${reason}. Enable them: sudo apt-get install chromium (./scripts/setup.sh does it when run as root), or set CHROMIUM_PATH. ***\n\n`,
  );
  return reason;
}

/**
 * The browser tests' skip reason: Chromium missing (above), or a run on PostgreSQL (`DATABASE_URL` set) unless
 * `BROWSER_TESTS_ON_POSTGRES=true`. What a browser checks (the HTML a page renders, its layout at a width, its
 * accessibility, its script) does not depend on the store, and the routes behind every page run on PostgreSQL in
 * their own tests; so the suite drives Chromium once, on its PGlite run.
 */
export function browserTestsSkipped(): string | undefined {
  const missing = chromiumMissing();
  if (missing) return missing;
  if (process.env['DATABASE_URL'] && process.env['BROWSER_TESTS_ON_POSTGRES'] !== 'true')
    return 'browser tests run on the PGlite run (BROWSER_TESTS_ON_POSTGRES=true runs them on PostgreSQL too)';
  return undefined;
}

/** Headless, and nothing that reaches for the network on its own (this machine's network is closed). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** A free loopback port, so the app can listen where its PUBLIC_BASE_URL says before it starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
