/**
 * Every SQL text the stack and the AWS backend send to Athena (the views lib/app.ts creates, the
 * step tables' storage views, a run's compaction: UNLOAD, partition count, ADD PARTITION) runs only
 * on DuckDB in the other tests. Here each is parsed with a Trino/Athena-dialect parser, sqlglot's
 * "athena" (scripts/check-athena-sql.py, in the .venv scripts/setup.sh --test makes), and a broken
 * statement is shown to fail.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import {
  addRunPartitionSql,
  athenaViewSql,
  compactedRunPrefix,
  compactedTablePrefix,
  runPartitionCountSql,
  STEP_TABLES,
  unloadSql,
} from '../../core/lake/athena-storage';
import { PROJECT_ROOT } from './cdk-fixture';

const PYTHON = join(PROJECT_ROOT, '.venv', 'bin', 'python');
const CHECKER = join(PROJECT_ROOT, 'scripts', 'check-athena-sql.py');
const RUN = { runId: 'nightly-2026-11-27-0200-ab12', dt: '2026-11-27' };
const BUCKET = 's3://aurora-bench-lake-123456789012/';

function parseWithAthenaDialect(texts: readonly { name: string; sql: string }[]): {
  status: number | null;
  problems: { name: string; error: string }[];
  stderr: string;
} {
  const r = spawnSync(PYTHON, [CHECKER], { input: JSON.stringify(texts), encoding: 'utf8', timeout: 120_000 });
  return {
    status: r.status,
    problems: r.stdout ? (JSON.parse(r.stdout) as { name: string; error: string }[]) : [],
    stderr: r.stderr,
  };
}

/** What the stack and the AWS backend send to Athena, each named. */
function athenaTexts(): { name: string; sql: string }[] {
  return [
    ...athenaViewSql(join(PROJECT_ROOT, 'core', 'lake', 'sql')).map((v) => ({ name: `view ${v.name}`, sql: v.sql })),
    ...STEP_TABLES.flatMap((table) => [
      { name: `${table}: UNLOAD`, sql: unloadSql(table, RUN, BUCKET + compactedTablePrefix(table)) },
      { name: `${table}: partition count`, sql: runPartitionCountSql(table, RUN) },
      {
        name: `${table}: ADD PARTITION`,
        sql: addRunPartitionSql(table, RUN, BUCKET + compactedRunPrefix(table, RUN.dt, RUN.runId)),
      },
    ]),
  ];
}

describe('the SQL sent to Athena parses in the Athena (Trino) dialect', () => {
  it('parses every view, UNLOAD and partition statement', () => {
    // Arrange
    const texts = athenaTexts();
    // Act
    const r = parseWithAthenaDialect(texts);
    // Assert
    expect(texts.length).toBeGreaterThan(STEP_TABLES.length * 4);
    expect({
      status: r.status,
      problems: r.problems,
      stderr: r.stderr.replace(/^.*Falling back to parsing as a 'Command'\.\n?/gm, ''),
    }).toEqual({
      status: 0,
      problems: [],
      stderr: '',
    });
  });

  it('fails on a deliberately broken statement, naming it', () => {
    // Arrange: a view with its FROM cut off, and an UNLOAD whose WITH is missing.
    const view = athenaTexts()[0]!;
    const unload = athenaTexts().find((t) => t.name.endsWith('UNLOAD'))!;
    const broken = [
      { name: 'broken view', sql: view.sql.replace(/\bFROM\b[\s\S]*$/i, 'FROM WHERE') },
      { name: 'broken UNLOAD', sql: unload.sql.replace(/\s+WITH\s*\([\s\S]*$/i, '') },
    ];
    // Act
    const r = parseWithAthenaDialect(broken);
    // Assert
    expect(r.status).toBe(1);
    expect(r.problems.map((p) => p.name)).toEqual(['broken view', 'broken UNLOAD']);
  });
});
