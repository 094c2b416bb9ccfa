/**
 * The local lake through DuckDB, guarded: `results --sql` reads the lake and nothing else, writes
 * nothing (an explicit --export writes a new file), and one unreadable lake file is named and left
 * out while every other run is still served (results and report).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withLake } from '../../core/lake/duckdb';
import { resultsText } from '../../core/lake/results';
import { lakeKeys } from '../../core/lake/rows';
import { DT, runRow, stepRow, writeRun, writeStepTable } from '../helpers/lake-fixtures';

// Made when the file loads: the refused queries below name these paths.
const lakeDir = mkdtempSync(join(tmpdir(), 'ab-lake-guard-'));
const outside = mkdtempSync(join(tmpdir(), 'ab-outside-'));
beforeAll(() => {
  writeFileSync(join(outside, 'secret.txt'), 'top secret\n');
  writeRun(lakeDir, runRow({ run_id: 'good', started_at: '2024-05-01T09:00:00.000Z' }));
  writeRun(lakeDir, runRow({ run_id: 'other', started_at: '2024-05-01T10:00:00.000Z' }));
  writeStepTable(lakeDir, 'steps', [
    stepRow({ run_id: 'good', variant: 'a', step_id: 'rw-t1', tps: 100 }),
    stepRow({ run_id: 'other', variant: 'a', step_id: 'rw-t1', tps: 200 }),
  ]);
});
afterAll(() => {
  rmSync(lakeDir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe('results --sql is read-only over the lake', () => {
  it('answers a SELECT over the lake', async () => {
    const text = await resultsText(lakeDir, { sql: "SELECT run_id FROM runs WHERE run_id = 'good'", json: true });
    expect(JSON.parse(text)).toEqual([{ run_id: 'good' }]);
  });

  it.each([
    [
      'read_text of a file outside the lake',
      `SELECT * FROM read_text('${join('/', 'etc', 'passwd')}')`,
      /Permission Error: Cannot access file "\/etc\/passwd"/,
    ],
    [
      'a path that climbs out of the lake',
      `SELECT * FROM read_text('${lakeDir}/tables/../../${outside.split('/').pop()!}/secret.txt')`,
      /Permission Error/,
    ],
    ['read_csv outside the lake', `SELECT * FROM read_csv('${outside}/secret.txt')`, /Permission Error/],
    // Refused twice over: not a SELECT, and DuckDB cannot even plan a write outside the allowed folder.
    ['COPY to a file', `COPY (SELECT 1) TO '${outside}/copied.csv'`, /does not parse as a SELECT is refused/],
    ['COPY into the lake itself', `COPY runs TO '${lakeDir}/tables/runs/x.csv'`, /a COPY statement is refused/],
    [
      'EXPLAIN ANALYZE of a COPY into the lake (it runs the COPY)',
      `EXPLAIN ANALYZE COPY runs TO '${lakeDir}/tables/runs/x.csv'`,
      /an EXPLAIN statement is refused/,
    ],
    ['EXPLAIN of a SELECT', 'EXPLAIN SELECT * FROM runs', /an EXPLAIN statement is refused/],
    ['lifting the restriction', 'SET enable_external_access = true', /a SET statement is refused/],
    ['ATTACH of a database file', `ATTACH '${outside}/x.duckdb'`, /an ATTACH statement is refused/],
    ['CREATE', 'CREATE TABLE t AS SELECT 1', /a CREATE statement is refused/],
    ['a PRAGMA, even one that reads', 'PRAGMA version', /does not parse as a SELECT is refused/],
    ['CALL of a table function', 'CALL pragma_version()', /a CALL statement is refused/],
    ['INSTALL of an extension', 'INSTALL httpfs', /a LOAD statement is refused/],
    ['LOAD of an extension', 'LOAD httpfs', /a LOAD statement is refused/],
    [
      'a write hidden after a SELECT',
      `SELECT 1; COPY (SELECT 1) TO '${outside}/second.csv'`,
      /does not parse as a SELECT is refused/,
    ],
    [
      'a write hidden after a SELECT, into the lake',
      `SELECT 1; COPY runs TO '${lakeDir}/tables/runs/x.csv'`,
      /a COPY statement is refused/,
    ],
    ['glob outside the lake', `SELECT * FROM glob('${outside}/*')`, /Permission Error/],
    ['an extension loaded by a function that needs it', "SELECT * FROM read_xlsx('x.xlsx')", /Error/],
  ])('refuses %s, and nothing is written', async (_what, sql, message) => {
    // Act / Assert
    await expect(resultsText(lakeDir, { sql })).rejects.toThrow(message);
    expect(['copied.csv', 'second.csv', 'x.duckdb'].filter((f) => existsSync(join(outside, f)))).toEqual([]);
    expect(existsSync(join(lakeDir, 'tables', 'runs', 'x.csv'))).toBe(false);
  });

  it.each([
    ['WITH ... SELECT', 'WITH r AS (SELECT run_id FROM runs) SELECT count(*) AS n FROM r', [{ n: 2 }]],
    ['VALUES', 'VALUES (1)', [{ col0: 1 }]],
    ['FROM first', "FROM runs SELECT run_id WHERE run_id = 'good'", [{ run_id: 'good' }]],
  ])('runs %s', async (_what, sql, rows) => {
    expect(JSON.parse(await resultsText(lakeDir, { sql, json: true }))).toEqual(rows);
  });

  it.each(['DESCRIBE runs', 'SHOW TABLES', 'SUMMARIZE SELECT 1 AS x'])('runs %s', async (sql) => {
    expect(JSON.parse(await resultsText(lakeDir, { sql, json: true }))).not.toEqual([]);
  });

  it("DuckDB's temp directory is its own: ./.tmp is neither read nor written, even by the code's queries", async () => {
    // Arrange: an in-memory DuckDB's default temp_directory is .tmp in the working directory
    const cwd = process.cwd();
    mkdirSync(join(outside, '.tmp'), { recursive: true });
    writeFileSync(join(outside, '.tmp', 'kept.txt'), 'tmp secret\n');
    process.chdir(outside);
    try {
      // Act / Assert
      await withLake(lakeDir, async (lake) => {
        await expect(lake.query("SELECT content FROM read_text('.tmp/kept.txt')")).rejects.toThrow(/Permission Error/);
        await expect(lake.query("COPY (SELECT 1) TO '.tmp/written.csv'")).rejects.toThrow(/Permission Error/);
      });
      expect(existsSync(join(outside, '.tmp', 'written.csv'))).toBe(false);
    } finally {
      process.chdir(cwd);
    }
  });

  it('writes a result to a new file with --export, never over an existing one', async () => {
    // Arrange
    const csv = join(outside, 'tps.csv');
    // Act
    const said = await resultsText(lakeDir, { sql: 'SELECT run_id, tps FROM steps ORDER BY run_id', exportFile: csv });
    // Assert
    expect(said).toBe(`2 rows written to ${csv}\n`);
    expect(readFileSync(csv, 'utf8')).toBe('run_id,tps\ngood,100\nother,200\n');
    await expect(resultsText(lakeDir, { sql: 'SELECT 1 AS x', exportFile: csv })).rejects.toThrow(
      /the file exists; choose a new name/,
    );
    expect(readFileSync(csv, 'utf8')).toBe('run_id,tps\ngood,100\nother,200\n');
    await expect(resultsText(lakeDir, { sql: 'SELECT 1 AS x', exportFile: join(outside, 'x.txt') })).rejects.toThrow(
      /must end in \.csv, \.json or \.jsonl/,
    );
  });
});

describe('one bad file in the lake', () => {
  it.each([
    ['a truncated last line', '{"run_id": "broken", "variant": "a", "step_id": "rw-t1", "tps": 3'],
    [
      'a value of the wrong type',
      JSON.stringify({ ...stepRow({ run_id: 'broken', variant: 'a', step_id: 'rw-t1' }), tps: 'fast' }) + '\n',
    ],
  ])('with %s is named and left out; the other runs are still served', async (_what, content) => {
    // Arrange: the bad file is a step file of a third run
    const key = lakeKeys.stepTable('steps', DT, 'broken', 'a-r1', 'rw-t1');
    const bad = join(lakeDir, key);
    writeFileSync(bad, content);
    try {
      // Act
      const table = await resultsText(lakeDir, { runId: 'good' });
      const counted = await withLake(lakeDir, async (lake) => ({
        rows: await lake.query('SELECT run_id, tps FROM steps ORDER BY run_id'),
        skipped: lake.skippedFiles,
      }));
      // Assert
      expect(table).toMatch(/^Run good /);
      expect(table).toContain(`warning: lake file ${bad} left out (`);
      expect(counted.rows).toEqual([
        { run_id: 'good', tps: 100 },
        { run_id: 'other', tps: 200 },
      ]);
      expect(counted.skipped.map((s) => s.file)).toEqual([bad]);
    } finally {
      rmSync(bad);
    }
  });
});
