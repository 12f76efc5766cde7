import { archivalModule } from './archival/module.ts';
import { auditModule } from './audit/module.ts';
import { balanceModule } from './balance/module.ts';
import { buyOrdersModule } from './buy-orders/module.ts';
import { checkoutModule } from './checkout/module.ts';
import { dashboardModule } from './dashboard/module.ts';
import { disputesModule } from './disputes/module.ts';
import { eventsModule } from './events/module.ts';
import { fxModule } from './fx/module.ts';
import { ledgerModule } from './ledger/module.ts';
import { liquidityModule } from './liquidity/module.ts';
import { merchantsModule } from './merchants/module.ts';
import type { ModuleName, TableName } from './module.ts';
import { paymentLinksModule } from './payment-links/module.ts';
import { paymentsModule } from './payments/module.ts';
import { receiptsModule } from './receipts/module.ts';
import { payoutsModule } from './payouts/module.ts';
import { pendingFundsModule } from './pending-funds/module.ts';
import { reconciliationModule } from './reconciliation/module.ts';
import { referenceModule } from './reference/module.ts';
import { refundsModule } from './refunds/module.ts';
import { sandboxModule } from './sandbox/module.ts';
import { sellOrdersModule } from './sell-orders/module.ts';
import { settlementsModule } from './settlements/module.ts';
import { validatorsModule } from './validators/module.ts';
import { webhooksModule } from './webhooks/module.ts';

/**
 * Every module's declaration, lowest first: each calls only modules listed before it. What it owns and whom it may
 * call are checked by test/architecture against the database, the imports and the table in docs/architecture.md.
 */
export const MODULES: readonly { name: ModuleName; owns: readonly TableName[]; calls: readonly ModuleName[] }[] = [
  eventsModule,
  auditModule,
  validatorsModule,
  referenceModule,
  ledgerModule,
  merchantsModule,
  webhooksModule,
  liquidityModule,
  paymentsModule,
  checkoutModule,
  paymentLinksModule,
  receiptsModule,
  settlementsModule,
  fxModule,
  pendingFundsModule,
  buyOrdersModule,
  sellOrdersModule,
  balanceModule,
  disputesModule,
  payoutsModule,
  refundsModule,
  sandboxModule,
  dashboardModule,
  archivalModule,
  reconciliationModule,
];
