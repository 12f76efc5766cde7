// Builds dist/ as CommonJS (what Medusa's loader requires): tsc compiles src/, and the typed client @mpay/client
// (clients/typescript, built here when its dist/ is missing or older than its sources) is copied into
// dist/mpay-client/ so the package installs with no dependency beyond @medusajs/framework.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const client = join(root, '../typescript');
const dist = join(root, 'dist');
const require = createRequire(join(root, 'package.json'));

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return latest;
}

let built = 0;
try {
  built = newest(join(client, 'dist'));
} catch {}
if (built < newest(join(client, 'src'))) {
  execFileSync(process.execPath, [join(client, 'scripts/build.mjs')], { stdio: 'inherit', cwd: client });
}

rmSync(dist, { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });

// The client is ESM: Node 20.19+ and 22.12+ (Medusa's engines) require() it without a flag.
cpSync(join(client, 'dist'), join(dist, 'mpay-client'), { recursive: true });
writeFileSync(join(dist, 'mpay-client/package.json'), `${JSON.stringify({ type: 'module', main: './index.js' })}\n`);

// The compiled code names the client by its package name; point it at the copy beside it.
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  const file = join(entry.parentPath ?? entry.path, entry.name);
  if (!entry.isFile() || file.startsWith(join(dist, 'mpay-client'))) continue;
  if (!/\.(js|d\.ts)$/.test(entry.name)) continue;
  const target = relative(dirname(file), join(dist, 'mpay-client/index.js')).replace(/^(?!\.)/, './');
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(/(["'])@mpay\/client\1/g, `$1${target}$1`);
  if (rewritten !== text) writeFileSync(file, rewritten);
}
