#!/usr/bin/env bash
# Brings Node.js 24 (when the machine's node is older than 22.12) and the project's packages.
# Idempotent and quick when everything is already there. Source it or run it; `./run` calls it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=12)?0:1)'
}

export PATH="$root/.tools/node_modules/.bin:$PATH"
if ! node_ok; then
  echo "setup: installing Node.js 24 into .tools (machine node: $(node --version 2>/dev/null || echo none))" >&2
  npm install --silent --no-audit --no-fund --prefix "$root/.tools" node@24 >&2
  hash -r
  node_ok || { echo "setup: could not bring Node.js >= 22.12" >&2; exit 1; }
fi

stamp="node_modules/.setup-stamp"
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  echo "setup: installing packages with $(node --version)" >&2
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund >&2; else npm install --no-audit --no-fund >&2; fi
  touch "$stamp"
fi

# The typed client generates its types with openapi-typescript 7 and TypeScript 5, kept in its own devDependencies.
client_stamp="clients/typescript/node_modules/.setup-stamp"
if [ ! -f "$client_stamp" ] || [ clients/typescript/package-lock.json -nt "$client_stamp" ]; then
  echo "setup: installing the typed client's generator (clients/typescript)" >&2
  (cd clients/typescript && npm ci --no-audit --no-fund >&2)
  touch "$client_stamp"
fi

# The Medusa payment provider (clients/medusa) keeps Medusa's packages in its own devDependencies, never the gateway's.
medusa_stamp="clients/medusa/node_modules/.setup-stamp"
if [ ! -f "$medusa_stamp" ] || [ clients/medusa/package-lock.json -nt "$medusa_stamp" ]; then
  echo "setup: installing the Medusa provider's packages (clients/medusa)" >&2
  (cd clients/medusa && npm ci --no-audit --no-fund >&2)
  touch "$medusa_stamp"
fi

# The checkout's browser tests drive Debian's `chromium`. Install it when we can (root with apt-get), once; otherwise
# the tests skip themselves with one loud line saying how to enable them. MPAY_SKIP_CHROMIUM=1 leaves it alone.
chromium_stamp=".tools/.chromium-attempted"
if [ "${MPAY_SKIP_CHROMIUM:-}" != 1 ] && [ -z "${CHROMIUM_PATH:-}" ] && [ ! -x /usr/bin/chromium ] && [ ! -f "$chromium_stamp" ]; then
  mkdir -p .tools && touch "$chromium_stamp"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium for the browser tests" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "setup: could not install chromium; the browser tests will be skipped" >&2
  else
    echo "setup: chromium is missing and this user cannot install it; the browser tests will be skipped (sudo apt-get install chromium)" >&2
  fi
fi
