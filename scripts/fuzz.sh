#!/usr/bin/env bash
# The longer fuzz run: FUZZ_RUNS requests per OpenAPI operation (default 500), FUZZ_SEED to vary the inputs
# (default: a new seed each run, printed so that a failure can be replayed). Add DATABASE_URL to fuzz PostgreSQL.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
export PATH="$root/.tools/node_modules/.bin:$root/node_modules/.bin:$PATH"
cd "$root"
export FUZZ_RUNS="${FUZZ_RUNS:-500}"
export FUZZ_SEED="${FUZZ_SEED:-$RANDOM$RANDOM}"
echo "fuzz: FUZZ_RUNS=$FUZZ_RUNS FUZZ_SEED=$FUZZ_SEED (replay with the same FUZZ_SEED)"
exec node --test --test-timeout=0 test/http/fuzz.test.ts
