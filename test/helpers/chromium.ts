import { existsSync } from 'node:fs';

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
