/**
 * The shared lake views, in the SQL Trino and DuckDB both run.
 * DuckDB creates them locally, and the CDK stack makes the same text Athena views.
 * Order matters, since a view may use an earlier one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stepSummaryViewSql } from './step-summary';

/** @internal Exported for its tests. */
export const LAKE_VIEWS = [
  'step_summary',
  'variant_summary',
  'interval_totals',
  'latest_run',
  'verdict_history',
] as const;
export type LakeView = (typeof LAKE_VIEWS)[number];

/** The views generated in code rather than read from a .sql file. */
const GENERATED: Partial<Record<LakeView, () => string>> = { step_summary: stepSummaryViewSql };

/**
 * The views whose SQL is a file of core/lake/sql.
 * @internal Exported for its tests.
 */
export const SQL_FILE_VIEWS = LAKE_VIEWS.filter((v) => GENERATED[v] === undefined);

/**
 * The folder holding the .sql files, next to this module or found from dist/.
 * @internal Exported for its tests.
 */
export function viewSqlDir(): string {
  let dir = __dirname;
  for (;;) {
    for (const candidate of [join(dir, 'sql'), join(dir, 'core', 'lake', 'sql')]) {
      if (existsSync(join(candidate, `${SQL_FILE_VIEWS[0]!}.sql`))) return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the lake views (core/lake/sql/*.sql) above ${__dirname}`);
    dir = parent;
  }
}

/** The statement of one view, without trailing whitespace or semicolon. */
function viewSql(view: LakeView, dir: string): string {
  const generated = GENERATED[view];
  if (generated !== undefined) return generated();
  const text = readFileSync(join(dir, `${view}.sql`), 'utf8')
    .trim()
    .replace(/;\s*$/, '');
  if (!new RegExp(`CREATE OR REPLACE VIEW ${view} AS`, 'i').test(text)) {
    throw new Error(`${join(dir, `${view}.sql`)}: expected "CREATE OR REPLACE VIEW ${view} AS SELECT ..."`);
  }
  return text;
}

/** Every view's statement, in creation order. */
export function allViewSql(dir = viewSqlDir()): { name: LakeView; sql: string }[] {
  return LAKE_VIEWS.map((name) => ({ name, sql: viewSql(name, dir) }));
}
