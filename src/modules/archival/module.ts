import { defineModule } from '../module.ts';
import { archiveOldAuditRows } from './service.ts';

/**
 * The cold archive (contract section 8): the audit-archival job copies audit rows older than 90 days to
 * `<table>_archive` (the source row stays); the owning modules read their archive on request.
 */
export const archivalModule = defineModule({
  name: 'archival',
  owns: ['receiver_confirm_audit_archive', 'admin_audit_log_archive'],
  calls: ['audit', 'pending-funds'],
  start: ({ db, clock, logger }) => ({
    jobs: [{ name: 'audit-archival', interval_ms: 3600_000, run: () => archiveOldAuditRows({ db, clock, logger }) }],
  }),
});
