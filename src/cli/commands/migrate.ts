import { loadConfig } from '../../config.ts';
import { openDatabase } from '../../db/database.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import type { CommandGroup } from '../context.ts';

/** Applies pending migrations to DATABASE_URL (or the PGlite store in DATA_DIR) directly, without a server. */
const migrate: CommandGroup = {
  summary: 'apply pending database migrations (DATABASE_URL or DATA_DIR)',
  usage: 'mpay migrate',
  async run(_args, context) {
    const config = loadConfig();
    const database = await openDatabase(config);
    try {
      const applied = await migrateToLatest(database.db);
      context.print({ database: database.kind, applied }, applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      return 0;
    } finally {
      await database.close();
    }
  },
};
export default migrate;
