import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const HERE = dirname(fileURLToPath(import.meta.url));

/** The only files `/dashboard/assets/*` serves: ours, and htmx and Chart.js from node_modules (no CDN, no build step). */
const FILES: Record<string, { path: () => string; type: string }> = {
  'dashboard.css': { path: () => join(HERE, 'assets', 'dashboard.css'), type: 'text/css; charset=utf-8' },
  'dashboard.js': { path: () => join(HERE, 'assets', 'dashboard.js'), type: 'text/javascript; charset=utf-8' },
  'htmx.min.js': { path: () => require.resolve('htmx.org/dist/htmx.min.js'), type: 'text/javascript; charset=utf-8' },
  // chart.js exports no subpaths; its UMD bundle sits beside the CommonJS entry.
  'chart.umd.min.js': {
    path: () => join(dirname(require.resolve('chart.js')), 'chart.umd.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
};

const cache = new Map<string, Buffer>();

export function asset(name: string): { body: Buffer; type: string } | null {
  // An own property only: `toString` or `__proto__` are names, not files.
  const file = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
  if (!file) return null;
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(file.path());
    cache.set(name, body);
  }
  return { body, type: file.type };
}

export const ASSET_NAMES = Object.keys(FILES);
