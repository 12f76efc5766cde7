import { listMerchantDisputes } from '../../disputes/service.ts';
import { dailyPaymentStats } from '../../payments/stats.ts';
import { listPendingFunds } from '../../pending-funds/service.ts';
import { listDeliveries } from '../../webhooks/service.ts';
import { sendPage } from '../context.ts';
import { homePage } from '../pages/home.ts';
import { balanceOrNull, type PageRouter } from '../routing.ts';

const DAY_MS = 24 * 3600 * 1000;

export function homeRoutes({ deps, get }: PageRouter): void {
  get(
    '/dashboard',
    'Home: volume, count and success rate per currency, PAY balance, things that need action',
    {},
    async ({ reply, context, scope }) => {
      const now = deps.users.clock.now();
      const today = now.toISOString().slice(0, 10);
      const from = new Date(Date.parse(`${today}T00:00:00.000Z`) - 29 * DAY_MS);
      const days = Array.from({ length: 30 }, (_, index) =>
        new Date(from.getTime() + index * DAY_MS).toISOString().slice(0, 10),
      );
      const [stats, balance, pending, disputes, failed] = await Promise.all([
        dailyPaymentStats(deps.payments.db, scope, from),
        balanceOrNull(deps, scope),
        listPendingFunds(deps.pending_funds, scope, { status: ['validated_pending_receiver_confirm'], limit: 100 }),
        listMerchantDisputes(deps.disputes, scope, { status: ['opened'], limit: 100 }),
        listDeliveries(deps.webhooks, scope, { status: ['failed'], limit: 100 }),
      ]);
      return sendPage(
        reply,
        homePage(context, {
          today,
          days,
          stats,
          balance,
          pending_to_confirm: pending.data.length,
          disputes_opened: disputes.data.length,
          failed_deliveries: failed.data.length,
        }),
      );
    },
  );
}
