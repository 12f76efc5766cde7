// Builds dist/: tsc compiles src/*.ts to ESM JavaScript with .d.ts beside it; the webhook verifier is plain
// JavaScript with a hand-written .d.ts and is copied as it is.
import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
for (const file of ['webhooks.js', 'webhooks.d.ts']) copyFileSync(join(root, 'src', file), join(dist, file));

// The sources import each other as `./x.ts` (so Node runs them as they are); tsc rewrites that in the JavaScript
// but not in the declarations, where a consumer's tsc wants `./x.js`.
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const file = join(entry.parentPath ?? entry.path, entry.name);
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(/(from\s+|import\()(['"])(\.{1,2}\/[^'"]+)\.ts\2/g, '$1$2$3.js$2');
  if (rewritten !== text) writeFileSync(file, rewritten);
}
