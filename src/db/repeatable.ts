import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';

const SRC_DIR = fileURLToPath(new URL('../', import.meta.url));

/**
 * Code that lives in the database (functions, triggers) has one current file in the module that owns it:
 * `src/modules/<owner>/sql/<name>.sql`, or `src/db/sql`, `src/http/sql` for the platform's own tables. After the
 * versioned migrations, every file whose text changed since it was last applied runs again (Flyway's repeatable
 * migrations): the statements are CREATE OR REPLACE, so a deployed database takes the new text and a fresh one the
 * same. `schema_sql_files` keeps each file's SHA-256.
 *
 * Order: files run by path (module folder, then file name). A file holds one function and the triggers that run it,
 * after it; PL/pgSQL resolves the functions it calls when it runs, so files do not depend on each other. A file whose
 * function changes its signature starts with the `drop function if exists` of the old one.
 */
export function sqlFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.sql') && dir.endsWith('/sql')) found.push(relative(SRC_DIR, path));
    }
  };
  walk(SRC_DIR);
  return found.sort();
}

/**
 * Applies the changed files (all of them, or `only` these paths relative to src/: a migration whose data step calls a
 * function applies its file first). Serialised by an advisory lock, so processes starting together apply each once.
 * Returns the paths applied.
 */
export async function applySqlFiles<T>(db: Kysely<T>, only?: readonly string[]): Promise<string[]> {
  const files = only ?? sqlFiles();
  await sql`create table if not exists schema_sql_files (name text primary key, sha256 text not null, applied_at timestamptz not null)`.execute(
    db,
  );
  const apply = async (trx: Kysely<T>) => {
    await sql`select pg_advisory_xact_lock(hashtext('mpay_schema_sql_files'))`.execute(trx);
    const stored = new Map(
      (await sql<{ name: string; sha256: string }>`select name, sha256 from schema_sql_files`.execute(trx)).rows.map(
        (row) => [row.name, row.sha256],
      ),
    );
    const applied: string[] = [];
    for (const name of files) {
      const text = readFileSync(join(SRC_DIR, name), 'utf8');
      const sha256 = createHash('sha256').update(text).digest('hex');
      if (stored.get(name) === sha256) continue;
      for (const statement of splitStatements(text)) await sql.raw(statement).execute(trx);
      await sql`insert into schema_sql_files (name, sha256, applied_at) values (${name}, ${sha256}, now())
                on conflict (name) do update set sha256 = excluded.sha256, applied_at = excluded.applied_at`.execute(
        trx,
      );
      applied.push(name);
    }
    return applied;
  };
  return db.isTransaction ? apply(db) : db.transaction().execute(apply);
}

/**
 * Splits SQL text into statements at the `;` that end them: not inside a quoted string, a quoted name, a
 * dollar-quoted body (`$$ ... $$`, `$fn$ ... $fn$`) or a comment. PGlite takes one statement per query.
 */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (char === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (char === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (char === "'" || char === '"') {
      const end = text.indexOf(char, i + 1);
      i = end < 0 ? text.length : end + 1;
    } else if (char === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(text.slice(i))?.[0];
      if (tag) {
        const end = text.indexOf(tag, i + tag.length);
        i = end < 0 ? text.length : end + tag.length;
      } else i++;
    } else if (char === ';') {
      statements.push(text.slice(start, i));
      i++;
      start = i;
    } else i++;
  }
  statements.push(text.slice(start));
  return statements
    .map((statement) => statement.trim())
    .filter((statement) => statement && !/^(--[^\n]*\n?\s*)+$/.test(statement));
}
