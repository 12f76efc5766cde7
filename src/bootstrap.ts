import type { Application } from './app.ts';
import { createSellerFunding } from './modules/liquidity/funding.ts';
import { createSeller } from './modules/liquidity/service.ts';
import { countMerchants, createMerchant, type CreatedMerchant } from './modules/merchants/service.ts';
import { bootstrapDashboardDemo } from './modules/dashboard/demo.ts';

/** The demo merchant plus its dashboard sign-in. */
export type DemoMerchant = CreatedMerchant & { dashboard?: { email: string; password: string; sign_in_url: string } };

/**
 * First start on an empty store: a demo merchant with keys, a JWT and a webhook secret, plus live demo sellers,
 * so the README's quickstart works at once. Returns what to print, or null when the store already has merchants.
 */
export async function bootstrapDemo(application: Application): Promise<DemoMerchant | null> {
  const { db } = application.database;
  if ((await countMerchants(db)) > 0) return null;
  const demo = await createMerchant(application.merchants, { name: 'Demo Merchant' });
  const sellers = [
    {
      currency: 'THB',
      payment_method: 'promptpay',
      display_name: 'Demo Seller Bangkok',
      liquidity_minor: 100_000_000,
      rate: '35.00',
      promptpay_id: '0812345678',
    },
    {
      currency: 'THB',
      payment_method: 'bank_transfer',
      display_name: 'Demo Seller KBank',
      liquidity_minor: 100_000_000,
      rate: '35.05',
      bank: { code: '004', account_number: '1234567890', account_name: 'Demo Seller Co., Ltd.' },
    },
    {
      currency: 'AUD',
      payment_method: 'payid',
      display_name: 'Demo Seller Sydney',
      liquidity_minor: 10_000_000,
      rate: '1.52',
      payid: 'payments@demo-seller.example',
    },
    {
      currency: 'AUD',
      payment_method: 'bank_transfer',
      display_name: 'Demo Seller Melbourne',
      liquidity_minor: 10_000_000,
      rate: '1.52',
      bank: { code: '062-000', account_number: '12345678', account_name: 'Demo Seller Pty Ltd' },
    },
    {
      currency: 'USD',
      payment_method: 'bank_transfer',
      display_name: 'Demo Seller New York',
      liquidity_minor: 10_000_000,
      rate: '1.00',
      bank: { code: '026009593', account_number: '000123456789', account_name: 'Demo Seller LLC' },
    },
    {
      currency: 'SGD',
      payment_method: 'bank_transfer',
      display_name: 'Demo Seller Singapore',
      liquidity_minor: 10_000_000,
      rate: '1.34',
      bank: { code: '7171', account_number: '0123456789', account_name: 'Demo Seller Pte Ltd' },
    },
  ] as const;
  for (const seller of sellers)
    await createSeller(db, application.clock, seller, createSellerFunding(application.ledger));
  return { ...demo, dashboard: await bootstrapDashboardDemo(application, demo.merchant.id) };
}

export function firstStartBanner(application: Application, demo: DemoMerchant | null): string | null {
  const { generated } = application.secrets;
  if (!demo && !generated.admin_token && !generated.internal_token) return null;
  const lines = ['', '=== mpay: first start on an empty store. These secrets are shown once; keep them. ==='];
  if (generated.admin_token) lines.push(`ADMIN_SERVICE_TOKEN=${generated.admin_token}`);
  if (generated.internal_token) lines.push(`INTERNAL_SERVICE_TOKEN=${generated.internal_token}`);
  if (demo) {
    lines.push(
      `Demo merchant: ${demo.merchant.name} (${demo.merchant.id})`,
      `  live key:       ${demo.api_keys.live}`,
      `  test key:       ${demo.api_keys.test}`,
      `  sandbox key:    ${demo.api_keys.sandbox}`,
      `  merchant JWT:   ${demo.jwt}`,
      `  webhook secret: ${demo.webhook_secret}`,
    );
    if (demo.dashboard) {
      lines.push(
        `Dashboard: ${demo.dashboard.sign_in_url}`,
        `  email:          ${demo.dashboard.email}`,
        `  password:       ${demo.dashboard.password}`,
      );
    }
  }
  const mint_source = application.config.ledger_mint_source_account;
  lines.push(
    `Payout mint source (LEDGER_MINT_SOURCE_ACCOUNT): live:issuance:${mint_source}, sandbox:issuance:${mint_source}`,
  );
  lines.push(
    '',
    `Try: curl -s -X POST ${application.config.public_base_url}/v1/trades -H "X-API-Key: ${demo?.api_keys.live ?? '<live key>'}" -H 'Content-Type: application/json' -d '{"order_id":"order-1","amount":"100.00","currency":"THB","return_url":"https://shop.example/return"}'`,
    '',
  );
  return lines.join('\n');
}
