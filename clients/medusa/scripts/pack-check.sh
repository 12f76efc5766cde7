#!/usr/bin/env bash
# The package as a shop gets it: `npm pack`, then a fresh Medusa project (package.json, tsconfig.json and
# medusa-config.ts as create-medusa-app writes them) installs @medusajs/framework and the tarball, type-checks a
# medusa-config.ts and a file that uses the package's exports, and loads the provider with the machine's Node.js
# the way Medusa's loader does (require). Prints "pack-check: ok" on success.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
framework="$(node -p "require('$here/node_modules/@medusajs/framework/package.json').version")"
typescript="$(node -p "require('$here/node_modules/typescript/package.json').version")"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/mpay-medusa-pack.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT

tarball="$(cd "$here" && npm pack --silent --pack-destination "$scratch" | tail -1)"
echo "pack-check: packed $tarball: $(tar tzf "$scratch/$tarball" | wc -l) files"
if tar tzf "$scratch/$tarball" | grep -vE '^package/(dist/|README\.md$|package\.json$)'; then
  echo "pack-check: the tarball holds files beyond dist/, README.md and package.json" >&2
  exit 1
fi

shop="$scratch/shop"
mkdir -p "$shop/src"
cat > "$shop/package.json" <<JSON
{ "name": "shop", "version": "0.0.1", "private": true, "engines": { "node": ">=20" } }
JSON
cat > "$shop/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "target": "ES2021",
    "esModuleInterop": true,
    "module": "Node16",
    "moduleResolution": "Node16",
    "emitDecoratorMetadata": true,
    "experimentalDecorators": true,
    "skipLibCheck": true,
    "skipDefaultLibCheck": true,
    "declaration": false,
    "sourceMap": false,
    "inlineSourceMap": true,
    "outDir": "./.medusa/server",
    "rootDir": "./",
    "jsx": "react-jsx",
    "forceConsistentCasingInFileNames": true,
    "resolveJsonModule": true,
    "checkJs": false,
    "strictNullChecks": true,
    "noEmit": true
  },
  "include": ["medusa-config.ts", "src"]
}
JSON
cat > "$shop/medusa-config.ts" <<'TS'
import { defineConfig, loadEnv } from "@medusajs/framework/utils"
import type { MpayOptions } from "@mpay/medusa"

loadEnv(process.env.NODE_ENV || "development", process.cwd())

const mpay: MpayOptions = {
  baseUrl: process.env.MPAY_BASE_URL!,
  apiKey: process.env.MPAY_API_KEY!,
  webhookSecret: process.env.MPAY_WEBHOOK_SECRET!,
  returnUrl: process.env.MPAY_RETURN_URL,
}

module.exports = defineConfig({
  projectConfig: {
    databaseUrl: process.env.DATABASE_URL,
    http: {
      storeCors: process.env.STORE_CORS!,
      adminCors: process.env.ADMIN_CORS!,
      authCors: process.env.AUTH_CORS!,
      jwtSecret: process.env.JWT_SECRET || "supersecret",
      cookieSecret: process.env.COOKIE_SECRET || "supersecret",
    },
  },
  modules: [
    {
      resolve: "@medusajs/medusa/payment",
      options: {
        providers: [{ resolve: "@mpay/medusa", id: "mpay", options: mpay }],
      },
    },
  ],
})
TS
cat > "$shop/src/uses-provider.ts" <<'TS'
import type { IPaymentProvider } from "@medusajs/framework/types"
import mpay, { MpayPromptPayService, toMinorUnits, sessionStatus } from "@mpay/medusa"

const service: IPaymentProvider = new MpayPromptPayService(
  {},
  { baseUrl: "https://pay.example.com", apiKey: "svc_test_x", webhookSecret: "whsec_eA==" },
)
export const identifiers: string[] = mpay.services.map((s) => String((s as { identifier?: string }).identifier))
export const minor: number = toMinorUnits("250.50", "THB")
export const status: string = sessionStatus("completed")
export const id: string = service.getIdentifier()
TS

(cd "$shop" && npm install --silent --no-audit --no-fund --prefer-offline \
  "@medusajs/framework@$framework" "typescript@$typescript" "@types/node@^20" "$scratch/$tarball" >/dev/null)
installed="$(ls "$shop/node_modules/@mpay")"
[ "$installed" = medusa ] || { echo "pack-check: expected only @mpay/medusa under @mpay, got: $installed" >&2; exit 1; }
(cd "$shop" && node node_modules/typescript/bin/tsc -p tsconfig.json)
echo "pack-check: a fresh project with @medusajs/framework@$framework type-checks medusa-config.ts and src/uses-provider.ts"

# Medusa's loader require()s a provider; the machine's Node.js (and the project's) must load it.
for node_bin in node /usr/bin/node; do
  command -v "$node_bin" >/dev/null 2>&1 || continue
  (cd "$shop" && "$node_bin" -e '
    const loaded = require("@mpay/medusa");
    const provider = loaded.default ?? loaded;
    const ids = provider.services.map((s) => s.identifier).join(",");
    if (provider.module !== "payment" || ids !== "mpay-promptpay,mpay-payid,mpay-bank-transfer") process.exit(1);
    console.log(`pack-check: Node.js ${process.version} requires @mpay/medusa: ${ids}`);
  ')
done
echo "pack-check: ok"
