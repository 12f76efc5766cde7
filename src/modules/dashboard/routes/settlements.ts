import {
  exportSettlementCsv,
  getSettlement,
  listSettlementPayments,
  listSettlements,
} from '../../settlements/service.ts';
import { securityHeaders, sendPage } from '../context.ts';
import { settlementDetailPage, settlementsPage } from '../pages/settlements.ts';
import type { PageRouter } from '../routing.ts';

export function settlementRoutes({ deps, get }: PageRouter): void {
  get('/dashboard/settlements', 'Settlement batches', {}, async ({ reply, context, scope }) => {
    const list = await listSettlements(deps.settlements.db, scope, { limit: 50 });
    return sendPage(reply, settlementsPage(context, { settlements: list.data }));
  });

  get(
    '/dashboard/settlements/:id',
    'A settlement batch: payments and fee arithmetic',
    {},
    async ({ id, reply, context, scope }) => {
      const settlement = await getSettlement(deps.settlements.db, scope, id);
      const payments = await listSettlementPayments(deps.settlements.db, scope, id, { limit: 100 });
      return sendPage(reply, settlementDetailPage(context, { settlement, payments: payments.data }));
    },
  );

  get('/dashboard/settlements/:id/export.csv', 'A settlement batch as CSV', {}, async ({ id, reply, scope }) => {
    const { filename, csv } = await exportSettlementCsv(deps.settlements.db, scope, id);
    return securityHeaders(reply)
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="${filename}"`)
      .send(csv);
  });
}
