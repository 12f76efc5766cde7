import { loadConfig } from '../../config.ts';
import { openDatabase } from '../../db/database.ts';
import { migrateAsOwner } from '../../db/roles.ts';
import type { CommandGroup } from '../context.ts';

/** Applies pending migrations as the owner (DATABASE_OWNER_URL, else DATABASE_URL, or the PGlite store in DATA_DIR) and re-applies the service role's grants. */
const migrate: CommandGroup = {
  summary: 'apply pending database migrations (DATABASE_URL or DATA_DIR)',
  usage: 'mpay migrate',
  async run(_args, context) {
    const config = loadConfig(context.env);
    const database = await openDatabase(config);
    try {
      const { applied, grants } = await migrateAsOwner(config, database);
      const text =
        (applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date') +
        (grants
          ? `\ngrants: role ${grants.role}, ${grants.tables} tables, append-only: ${grants.append_only.join(', ')}`
          : '');
      context.print({ database: database.kind, applied, ...(grants ? { grants } : {}) }, text);
      return 0;
    } finally {
      await database.close();
    }
  },
};
export default migrate;
