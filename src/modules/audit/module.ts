import { defineModule } from '../module.ts';

/** The admin audit log: one append-only row per operator action, written by recordAdminAction in the action's transaction. */
export const auditModule = defineModule({
  name: 'audit',
  owns: ['admin_audit_log'],
  calls: [],
  start: () => ({}),
});
