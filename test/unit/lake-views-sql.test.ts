import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LAKE_VIEWS, SQL_FILE_VIEWS, allViewSql, viewSqlDir } from '../../core/lake/views';

/**
 * The views run on Athena (Trino) as well as DuckDB, but only DuckDB runs in tests: these checks keep
 * the text inside the subset both engines share, so an engine-specific shortcut fails here first.
 */
const NOT_PORTABLE: [RegExp, string][] = [
  [/::/, 'DuckDB/Postgres cast shorthand (use CAST(x AS T))'],
  [/\bFILTER\s*\(/i, 'aggregate FILTER clause (use CASE inside the aggregate)'],
  [/\bQUALIFY\b/i, 'QUALIFY (DuckDB only)'],
  [/\bILIKE\b/i, 'ILIKE (DuckDB only)'],
  [/\bEXCLUDE\b|\bREPLACE\s*\(/i, 'SELECT * EXCLUDE/REPLACE (DuckDB only)'],
  [/\bGROUP BY ALL\b/i, 'GROUP BY ALL (DuckDB only)'],
  [
    /\b(list_|struct_|strftime|epoch_ms|regexp_matches|string_agg|median|quantile)\w*\s*\(/i,
    'a function one engine lacks',
  ],
  [/"[^"]*"/, 'double-quoted text (a string literal in DuckDB, an identifier in Trino)'],
  [/\bSTDDEV\s*\(|\bVARIANCE\s*\(/i, 'ambiguous stddev/variance (use STDDEV_SAMP)'],
];

describe('shared lake views (core/lake/sql)', () => {
  it('has one file per declared view not generated in code (all but step_summary) and no other', () => {
    // Arrange
    const files = readdirSync(viewSqlDir())
      .filter((f) => f.endsWith('.sql'))
      .map((f) => f.replace(/\.sql$/, ''))
      .sort();
    // Act / Assert
    expect(files).toEqual([...SQL_FILE_VIEWS].sort());
    expect(LAKE_VIEWS.filter((v) => !SQL_FILE_VIEWS.includes(v))).toEqual(['step_summary']);
  });

  it.each(LAKE_VIEWS.map((v) => [v]))('%s is one CREATE OR REPLACE VIEW statement in the portable subset', (view) => {
    // Arrange: the file's text as written (with its comments), a generated view's as generated
    const raw = SQL_FILE_VIEWS.includes(view)
      ? readFileSync(join(viewSqlDir(), `${view}.sql`), 'utf8')
      : allViewSql().find((v) => v.name === view)!.sql;
    const code = raw.replace(/--.*$/gm, '');
    // Act
    const problems = NOT_PORTABLE.filter(([re]) => re.test(code)).map(([, why]) => why);
    const statements = code.split(';').filter((s) => s.trim() !== '');
    // Assert
    expect(problems).toEqual([]);
    expect(statements).toHaveLength(1);
    expect(code.trim()).toMatch(new RegExp(`^CREATE OR REPLACE VIEW ${view} AS\\s+SELECT\\b`));
    expect(code.trim().endsWith(';')).toBe(false);
  });

  it('orders views so each uses only tables and earlier views', () => {
    // Arrange
    const known = new Set<string>(['runs', 'steps', 'intervals', 'server_metrics', 'metric_windows', 'verdicts']);
    // Act / Assert
    for (const { name, sql } of allViewSql()) {
      const used = [...sql.replace(/--.*$/gm, '').matchAll(/\b(?:FROM|JOIN)\s+([a-z_]+)/gi)].map((m) => m[1]!);
      for (const u of used)
        expect({ view: name, uses: u, known: known.has(u) }).toEqual({ view: name, uses: u, known: true });
      known.add(name);
    }
  });
});
