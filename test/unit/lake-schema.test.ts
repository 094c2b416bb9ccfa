/**
 * The lake's one schema (core/lake/schema.ts) against what DuckDB really reads, and the lake's
 * versions: test/fixtures/lake-v1 is a lake written by aurora-bench before versions were recorded
 * (one local run on real MariaDB and sysbench, its tables as that code left them: runs and verdicts
 * as JSON Lines, the step tables compacted to Parquet); this code must read it, and bring it to its
 * version when it writes.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalLakeStore } from '../../core/backends/local/local-lake';
import { LocalLake, withLake } from '../../core/lake/duckdb';
import { findRun, stepResults } from '../../core/lake/results';
import {
  DUCKDB_TYPES,
  LAKE_COLUMNS,
  LAKE_SCHEMA_VERSION,
  LAKE_TABLES,
  LAKE_VERSION_KEY,
  PARTITION_COLUMN,
  VIEW_COLUMNS,
} from '../../core/lake/schema';
import { lakeKeys, toJsonLines, type StepRow } from '../../core/lake/rows';
import { stepTotals } from '../../core/lake/step-rows';
import { summarizeStep } from '../../core/lake/step-summary';

const FIXTURE = join(__dirname, '..', 'fixtures', 'lake-v1');
let work: string;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'ab-lake-schema-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** A copy of the version-1 lake to write into. */
function lakeV1(): string {
  const dir = join(work, 'lake');
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

/** DuckDB's own names for the types DESCRIBE prints (an INTEGER column of a view may come out as such). */
const describedType = (t: string): string => t.toUpperCase();

describe('the lake schema module against DuckDB', () => {
  it('every table view has exactly the schema columns and types, plus the partition column', async () => {
    // Arrange / Act
    const described = await withLake(lakeV1(), async (lake) =>
      Promise.all(
        LAKE_TABLES.map(
          async (t) => [t, await lake.query<{ column_name: string; column_type: string }>(`DESCRIBE ${t}`)] as const,
        ),
      ),
    );
    // Assert
    for (const [table, columns] of described) {
      const expected = [
        ...Object.entries(LAKE_COLUMNS[table]).map(([c, type]) => [c, DUCKDB_TYPES[type]]),
        [PARTITION_COLUMN, 'VARCHAR'],
      ];
      expect([table, columns.map((c) => [c.column_name, describedType(c.column_type)])]).toEqual([table, expected]);
    }
  });

  it.each(Object.keys(VIEW_COLUMNS) as (keyof typeof VIEW_COLUMNS)[])(
    "%s's columns and types are the schema's VIEW_COLUMNS (the row type the code reads)",
    async (view) => {
      // Arrange / Act
      const columns = await withLake(lakeV1(), (lake) =>
        lake.query<{ column_name: string; column_type: string }>(`DESCRIBE ${view}`),
      );
      // Assert: the names in order; each type is the schema's (nullable or not is the SQL's business)
      const expected = Object.entries(VIEW_COLUMNS[view]).map(([c, t]) => [
        c,
        DUCKDB_TYPES[t.replace(/\?$/, '') as keyof typeof DUCKDB_TYPES],
      ]);
      // SUM and COUNT widen integers (DuckDB: SUM(INTEGER) is HUGEINT, COUNT is BIGINT): read as numbers alike.
      const widened = (t: string) => (['HUGEINT', 'BIGINT', 'INTEGER', 'DECIMAL(38,0)'].includes(t) ? 'integer' : t);
      expect(columns.map((c) => [c.column_name, widened(describedType(c.column_type))])).toEqual(
        expected.map(([c, t]) => [c, widened(t!)]),
      );
    },
  );

  it("step_summary's generated SQL and its TypeScript evaluation agree on every column of real rows", async () => {
    // Arrange: the fixture's real step row, and (as another run: the fixture's is compacted) the same step as three
    // clients, two ok and one failed without a summary, as two clients of which one overloaded, and a skipped step
    const lake = lakeV1();
    const real = await withLake(lake, (l) =>
      l.query<StepRow>("SELECT * EXCLUDE (dt), dt FROM steps WHERE run_id = 'lake-v1-fixture'"),
    );
    expect(real).toHaveLength(1);
    const [one] = real;
    const other = { ...one!, run_id: 'agree' };
    const failedClient = {
      status: 'failed',
      error: 'sysbench exited with code 1',
      tps: null,
      qps: null,
      events: null,
      lat_avg_ms: null,
      errors: null,
    };
    const clients: StepRow[] = [
      { ...other, step_id: 'three', client_id: 'client-1', client_index: 0, client_saturated: true },
      {
        ...other,
        step_id: 'three',
        client_id: 'client-2',
        client_index: 1,
        tps: one!.tps! / 2,
        qps: one!.qps! / 2,
        events: one!.events! * 3,
        lat_avg_ms: 2 * one!.lat_avg_ms!,
      },
      { ...other, step_id: 'three', client_id: 'client-3', client_index: 2, ...failedClient },
    ];
    const overloaded: StepRow[] = [
      {
        ...other,
        step_id: 'over',
        client_id: 'client-1',
        client_index: 0,
        status: 'overloaded',
        error: 'could not keep the rate',
        rate: 500,
      },
      { ...other, step_id: 'over', client_id: 'client-2', client_index: 1, rate: 500, total_time_s: 0 },
    ];
    const skipped: StepRow[] = [
      {
        ...other,
        step_id: 'skip',
        ...failedClient,
        status: 'skipped',
        error: 'not tried',
        lat_avg_ms: null,
        events: null,
        total_time_s: null,
      },
    ];
    const store = new LocalLakeStore(lake);
    for (const rows of [clients, overloaded, skipped]) {
      await store.put(lakeKeys.stepTable('steps', one!.dt, 'agree', one!.cell_id, rows[0]!.step_id), toJsonLines(rows));
    }
    // Act
    const summary = await withLake(lake, async (l) => [
      ...(await stepResults(l, 'lake-v1-fixture')),
      ...(await stepResults(l, 'agree')),
    ]);
    const byTs = [real, clients, overloaded, skipped].map((rows) => summarizeStep(rows));
    // Assert: the same rows both ways, every column (doubles to 9 digits: the sums' order may differ)
    const bySql = new Map(summary.map((s) => [s.step_id, s]));
    expect([...bySql.keys()].sort()).toEqual(['over', 'ro-t1', 'skip', 'three']);
    for (const ts of byTs) {
      const sql = bySql.get(ts.step_id)!;
      const expected = Object.fromEntries(
        Object.entries(ts).map(([c, v]) => [
          c,
          typeof v === 'number' && !Number.isInteger(v) ? expect.closeTo(v, 9) : v,
        ]),
      );
      expect({ ...sql }).toEqual(expected);
    }
    expect(byTs.map((s) => [s.step_id, s.status])).toEqual([
      ['ro-t1', 'ok'],
      ['three', 'failed'],
      ['over', 'overloaded'],
      ['skip', 'skipped'],
    ]);
    // stepTotals, what the workflow records of a step, is those columns
    expect(stepTotals(clients)).toEqual({
      status: 'failed',
      tps: byTs[1]!.tps,
      qps: byTs[1]!.qps,
      error: 'client-3: sysbench exited with code 1',
    });
  });
});

describe('a lake written by the previous release (version 1)', () => {
  it('is read by this code: its run and its step, as that run printed them', async () => {
    // Arrange
    const lake = lakeV1();
    // Act
    const { run, steps } = await withLake(lake, async (l) => ({
      run: await findRun(l),
      steps: await stepResults(l, 'lake-v1-fixture'),
    }));
    // Assert: the figures the run printed when it was made (161.24 tps, 2,257.32 qps)
    expect([run.run_id, run.spec_name, run.status, run.backend]).toEqual([
      'lake-v1-fixture',
      'lake-v1',
      'succeeded',
      'local',
    ]);
    expect(
      steps.map((s) => [s.step_id, s.status, Math.round(s.tps! * 100) / 100, Math.round(s.qps! * 100) / 100]),
    ).toEqual([['ro-t1', 'ok', 161.24, 2257.32]]);
  });

  it('is brought to this version when this code first writes it, without changing a file of it', async () => {
    // Arrange
    const lake = lakeV1();
    const store = new LocalLakeStore(lake);
    const runFile = join(lake, 'tables', 'runs', 'dt=2026-11-27', 'lake-v1-fixture.jsonl');
    const before = readFileSync(runFile);
    expect(await store.schemaVersion()).toBe(1);
    // Act
    await store.assertWritable();
    // Assert
    expect(await store.schemaVersion()).toBe(LAKE_SCHEMA_VERSION);
    expect(JSON.parse(readFileSync(join(lake, LAKE_VERSION_KEY), 'utf8'))).toEqual({
      schemaVersion: LAKE_SCHEMA_VERSION,
    });
    expect(readFileSync(runFile).equals(before)).toBe(true);
    expect(await withLake(lake, (l) => l.query('SELECT run_id FROM runs'))).toEqual([{ run_id: 'lake-v1-fixture' }]);
  });

  it('a lake of a newer version is refused, for writing and for reading, saying so', async () => {
    // Arrange
    const lake = lakeV1();
    writeFileSync(join(lake, LAKE_VERSION_KEY), JSON.stringify({ schemaVersion: LAKE_SCHEMA_VERSION + 1 }));
    // Act / Assert
    await expect(new LocalLakeStore(lake).assertWritable()).rejects.toThrow(
      new RegExp(
        `schema version ${LAKE_SCHEMA_VERSION + 1}, written by a newer aurora-bench; this one writes ` +
          `version ${LAKE_SCHEMA_VERSION}: upgrade`,
      ),
    );
    await expect(LocalLake.open(lake)).rejects.toThrow(
      /written by a newer aurora-bench; this one reads versions up to \d+: upgrade aurora-bench/,
    );
    expect(existsSync(join(lake, 'tables', 'runs'))).toBe(true);
  });

  it('a version record that does not read is named', async () => {
    // Arrange
    const lake = lakeV1();
    writeFileSync(join(lake, LAKE_VERSION_KEY), '{"schemaVersion": "two"}');
    // Act / Assert
    await expect(LocalLake.open(lake)).rejects.toThrow(
      `${join(lake, LAKE_VERSION_KEY)}: schemaVersion must be a whole number from 1 (it is "two")`,
    );
  });
});
