import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { sqlFiles } from '../../src/db/repeatable.ts';
import { MODULES } from '../../src/modules/index.ts';
import { PLATFORM_TABLES } from '../../src/modules/module.ts';
import { DELIVERY_TRIGGER } from '../../src/modules/webhooks/module.ts';
import { openTestDatabase } from '../helpers/database.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MODULES_DIR = join(ROOT, 'src/modules');

/**
 * Writes into another module's table that remain (each a TODO with its way out). The test fails when a new one
 * appears, and when one listed here is gone (so the list only shrinks).
 */
const KNOWN_FOREIGN_WRITES = new Set<string>([]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The module a file under src/modules belongs to (its first folder), or undefined for src/modules/*.ts. */
function moduleOf(path: string): string | undefined {
  const parts = relative(MODULES_DIR, path).split('/');
  return parts.length > 1 ? parts[0] : undefined;
}

/** Every module another module's files import (static `from '…'` and dynamic `import('…')`), type-only included. */
function importGraph(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of sourceFiles(MODULES_DIR)) {
    const from = moduleOf(file);
    if (!from) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.[^']+)'/g)) {
      const target = resolve(dirname(file), match[1]!);
      if (!target.startsWith(`${MODULES_DIR}/`)) continue;
      const to = moduleOf(target);
      if (!to || to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string[]>();
      edges.set(to, [...(edges.get(to) ?? []), relative(ROOT, file)]);
      graph.set(from, edges);
    }
  }
  return graph;
}

/** insertInto/updateTable/deleteFrom('t') and raw `insert into t`, `update t`, `delete from t` in a module's files. */
function writesByModule(): Map<string, Set<string>> {
  const writes = new Map<string, Set<string>>();
  for (const file of sourceFiles(MODULES_DIR)) {
    const module = moduleOf(file);
    if (!module) continue;
    const text = readFileSync(file, 'utf8');
    const tables = [
      ...[...text.matchAll(/\.(?:insertInto|updateTable|deleteFrom)\(\s*'([a-z_]+)/g)].map((match) => match[1]!),
      ...[...text.matchAll(/\b(?:insert\s+into|delete\s+from)\s+([a-z_]+)/gi)].map((match) => match[1]!),
      ...[...text.matchAll(/`\s*update\s+([a-z_]+)\s+set\b/gi)].map((match) => match[1]!),
    ];
    for (const table of tables) writes.set(module, (writes.get(module) ?? new Set()).add(table));
  }
  return writes;
}

/** The owner of a SQL file (a path under src/): its module, or `src/db` / `src/http` for the platform's files. */
function sqlOwner(name: string): string {
  const parts = name.split('/');
  return parts[0] === 'modules' ? parts[1]! : `src/${parts[0]}`;
}

/** The tables a SQL file writes: INSERT INTO, UPDATE ... SET, DELETE FROM and MERGE INTO targets, comments left out. */
function sqlWrites(text: string): string[] {
  const code = text.replace(/--[^\n]*/g, '');
  const name = '([a-z_][a-z0-9_]*)';
  return [
    ...[...code.matchAll(new RegExp(`\\b(?:insert\\s+into|delete\\s+from|merge\\s+into)\\s+${name}`, 'gi'))].map(
      (match) => match[1]!,
    ),
    ...[...code.matchAll(new RegExp(`\\bupdate\\s+${name}(?:\\s+(?:as\\s+)?[a-z_][a-z0-9_]*)?\\s+set\\b`, 'gi'))].map(
      (match) => match[1]!,
    ),
  ].map((table) => table.toLowerCase());
}

/** Every table's owner: a module's name, or `src/<layer>` for the platform's tables. */
function tableOwners(): Map<string, string> {
  return new Map<string, string>([
    ...MODULES.flatMap((module) => module.owns.map((table): [string, string] => [table, module.name])),
    ...Object.entries(PLATFORM_TABLES).flatMap(([layer, names]) =>
      names.map((table): [string, string] => [table, `src/${layer}`]),
    ),
  ]);
}

describe('module layout', () => {
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let tables: string[];
  before(async () => {
    database = await openTestDatabase();
    const rows = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(
      database.db,
    );
    tables = rows.rows.map((row) => row.table_name).sort();
  });
  after(async () => database.close());

  it('every folder under src/modules is one declared module, and names are unique', () => {
    const folders = readdirSync(MODULES_DIR)
      .filter((name) => statSync(join(MODULES_DIR, name)).isDirectory())
      .sort();
    assert.deepEqual(MODULES.map((module) => module.name).sort(), folders);
    for (const folder of folders)
      assert.ok(statSync(join(MODULES_DIR, folder, 'module.ts')).isFile(), `${folder}/module.ts`);
  });

  it('every table of the migrated database has exactly one owner, and every declared table exists', () => {
    const owners = new Map<string, string[]>();
    const own = (table: string, owner: string) => owners.set(table, [...(owners.get(table) ?? []), owner]);
    for (const module of MODULES) for (const table of module.owns) own(table, module.name);
    for (const [layer, names] of Object.entries(PLATFORM_TABLES)) for (const table of names) own(table, `src/${layer}`);
    const problems = [
      ...tables
        .filter((table) => (owners.get(table) ?? []).length !== 1)
        .map((table) => `${table}: owned by [${(owners.get(table) ?? []).join(', ')}]`),
      ...[...owners.keys()]
        .filter((table) => !tables.includes(table))
        .map((table) => `${table}: declared by ${owners.get(table)!.join(', ')} but not in the database`),
    ];
    assert.deepEqual(problems, []);
  });

  it('each module declares the row types of the tables it owns in its own tables.ts', () => {
    const missing: string[] = [];
    for (const module of MODULES) {
      if (module.owns.length === 0) continue;
      const text = readFileSync(join(MODULES_DIR, module.name, 'tables.ts'), 'utf8');
      for (const table of module.owns)
        if (!new RegExp(`^  ${table}: `, 'm').test(text)) missing.push(`${module.name}/tables.ts: ${table}`);
    }
    assert.deepEqual(missing, []);
  });

  it('modules import only the modules they declare in `calls`, and the calls have no cycle', () => {
    const graph = importGraph();
    const declared = new Map(MODULES.map((module) => [module.name as string, new Set<string>(module.calls)]));
    const undeclared: string[] = [];
    for (const [from, edges] of graph) {
      for (const [to, files] of edges)
        if (!declared.get(from)?.has(to)) undeclared.push(`${from} -> ${to} (${[...new Set(files)].join(', ')})`);
    }
    assert.deepEqual(undeclared, [], 'imports a module that its module.ts does not list in calls');
    const unused = MODULES.flatMap((module) =>
      module.calls.filter((to) => !graph.get(module.name)?.has(to)).map((to) => `${module.name} -> ${to}`),
    );
    assert.deepEqual(unused, [], 'lists a module in calls that it does not import');
    const upward = MODULES.flatMap((module, index) =>
      module.calls
        .filter((to) => !MODULES.slice(0, index).some((lower) => lower.name === to))
        .map((to) => `${module.name} -> ${to}`),
    );
    assert.deepEqual(upward, [], 'MODULES lists the lowest first: a module calls only modules listed before it');

    // Depth-first search over the declared calls: a back edge is a cycle.
    const state = new Map<string, 'visiting' | 'done'>();
    const cycles: string[] = [];
    const visit = (name: string, path: string[]) => {
      if (state.get(name) === 'done') return;
      if (state.get(name) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(name)), name].join(' -> '));
        return;
      }
      state.set(name, 'visiting');
      for (const next of declared.get(name) ?? []) visit(next, [...path, name]);
      state.set(name, 'done');
    };
    for (const module of MODULES) visit(module.name, []);
    assert.deepEqual(cycles, []);
  });

  it('a module writes only the tables it owns (the known exceptions shrink, never grow)', () => {
    const owner = new Map(
      MODULES.flatMap((module) => module.owns.map((table) => [table as string, module.name as string])),
    );
    const foreign = new Set<string>();
    for (const [module, written] of writesByModule()) {
      for (const table of written) if (owner.get(table) !== module) foreign.add(`${module} -> ${table}`);
    }
    assert.deepEqual(
      [...foreign].filter((write) => !KNOWN_FOREIGN_WRITES.has(write)).sort(),
      [],
      "new writes into another module's table",
    );
    assert.deepEqual(
      [...KNOWN_FOREIGN_WRITES].filter((write) => !foreign.has(write)).sort(),
      [],
      'a known exception is gone: drop it from the list',
    );
  });

  it("a SQL file writes only the tables its owner owns (another module's rows go through that module's function)", () => {
    const owners = tableOwners();
    const foreign = sqlFiles().flatMap((name) => {
      const owner = sqlOwner(name);
      return sqlWrites(readFileSync(join(ROOT, 'src', name), 'utf8'))
        .filter((table) => owners.get(table) !== owner)
        .map((table) => `src/${name} (${owner}) writes ${table} (${owners.get(table) ?? 'no owner'})`);
    });
    assert.deepEqual([...new Set(foreign)].sort(), []);
  });

  it('the SQL write parser finds the targets, inside PL/pgSQL too', () => {
    const body = `create or replace function f() returns void language plpgsql as $$
      begin
        -- update commented_out set x = 1
        insert into a_table (x) values (1) on conflict (x) do update set x = excluded.x;
        update b_table b set x = 2 from c_table c where c.x = b.x;
        update ONLY_UPPER as u set x = 3;
        with gone as (delete from d_table returning *) select 1 from gone for update;
        merge into e_table t using f_table f on t.x = f.x when matched then update set x = f.x;
        execute format('insert into %I select 1', 'dynamic');
      end $$;`;
    assert.deepEqual(sqlWrites(body).sort(), ['a_table', 'b_table', 'd_table', 'e_table', 'only_upper']);
  });

  it('every function and trigger in the migrated database has exactly one SQL file, which names it', async () => {
    const defined = sqlFiles().flatMap((name) => {
      const text = readFileSync(join(ROOT, 'src', name), 'utf8');
      return [...text.matchAll(/create\s+or\s+replace\s+(function|trigger)\s+([a-z_][a-z0-9_]*)/gi)].map(
        (match) => `${match[1]!.toLowerCase()} ${match[2]!}`,
      );
    });
    const functions = await sql<{ name: string }>`
      select p.proname as name from pg_proc p where p.pronamespace = current_schema()::regnamespace`.execute(
      database.db,
    );
    const triggers = await sql<{ name: string }>`
      select t.tgname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where c.relnamespace = current_schema()::regnamespace and not t.tgisinternal`.execute(database.db);
    const present = [
      ...functions.rows.map((row) => `function ${row.name}`),
      // each append-only table's guard is made by mpay_append_only (src/db/sql/mpay_append_only.sql)
      ...triggers.rows.filter((row) => !row.name.endsWith('_append_only_guard')).map((row) => `trigger ${row.name}`),
    ];
    assert.deepEqual([...defined].sort(), [...new Set(present)].sort());
  });

  it(`webhook_deliveries rows come from the trigger the webhooks module names (${DELIVERY_TRIGGER}, after insert on events)`, async () => {
    const rows = await sql<{ event_object_table: string; action_timing: string; event_manipulation: string }>`
      select event_object_table, action_timing, event_manipulation from information_schema.triggers where trigger_name = ${DELIVERY_TRIGGER}`.execute(
      database.db,
    );
    assert.deepEqual(rows.rows, [
      { event_object_table: 'events', action_timing: 'AFTER', event_manipulation: 'INSERT' },
    ]);
  });

  it("docs/architecture.md's module table lists every module with exactly what it owns and may call", () => {
    const readme = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const start = readme.indexOf('| module | owns (tables) | may call |');
    assert.ok(start >= 0, 'docs/architecture.md has the module table');
    const table = readme.slice(start, readme.indexOf('\n\n', start));
    const rows = new Map<string, { owns: string[]; calls: string[] }>();
    for (const match of table.matchAll(/^\| `([a-z-]+)` \| ([^|]*) \| ([^|]*) \|/gm)) {
      const names = (cell: string) => [...cell.matchAll(/`([a-z_-]+)`/g)].map((name) => name[1]!).sort();
      rows.set(match[1]!, { owns: names(match[2]!), calls: names(match[3]!) });
    }
    for (const module of MODULES) {
      assert.deepEqual(
        rows.get(module.name),
        { owns: [...module.owns].sort(), calls: [...module.calls].sort() },
        `docs/architecture.md row of ${module.name}`,
      );
    }
    assert.deepEqual([...rows.keys()].sort(), MODULES.map((module) => module.name).sort());
  });
});
