/**
 * The SQL the AWS lake runs for compacted runs (core/lake/athena-storage.ts), run on DuckDB: moto's
 * Athena runs no SQL, so what Athena would do with it is checked here on the engine the local lake
 * uses, with the same statements. The UNLOAD's SELECT writes hive-partitioned Parquet as UNLOAD with
 * partitioned_by does (dt=<dt>/run_id=<run>/), the Parquet table reads it back with run_id and dt from
 * the path as Athena's partition keys, and "<table>_parquet$partitions" holds the registered
 * partitions as Athena's metadata table does.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import {
  addRunPartitionSql,
  checkCompactableRun,
  compactedRunPrefix,
  parquetDataColumns,
  runPartitionCountSql,
  storageViewSql,
  unloadSelectSql,
  unloadSql,
} from '../../core/lake/athena-storage';
import { DUCKDB_TYPES, LAKE_COLUMNS } from '../../core/lake/schema';
import { allViewSql } from '../../core/lake/views';

const DT = '2026-11-20';
const RUN_A = 'nightly-a';
const RUN_B = 'nightly-b';

let root: string;
let instance: DuckDBInstance;
let db: DuckDBConnection;

const rows = async (sql: string) => (await db.runAndReadAll(sql)).getRowObjectsJS();
const count = async (sql: string) => Number((await rows(sql))[0]!['n']);

/** intervals_json as the JSON Lines Glue table gives it: the row columns with their types, dt from the key. */
async function createJsonTable(): Promise<void> {
  const columns = Object.entries(LAKE_COLUMNS.intervals).map(([c, t]) => `"${c}" ${DUCKDB_TYPES[t]}`);
  await db.run(`CREATE TABLE intervals_json (${columns.join(', ')}, dt VARCHAR)`);
  for (const [run, clients] of [
    [RUN_A, 2],
    [RUN_B, 1],
  ] as const) {
    for (let client = 0; client < clients; client++) {
      for (let t = 1; t <= 5; t++) {
        await db.run(
          `INSERT INTO intervals_json (run_id, cell_id, variant, step_id, client_id, t, threads, tps, qps, ` +
            `lat_pct_ms, dt) VALUES ('${run}', 'c1', 'base', 's1', 'client-${client}', ${t}, ` +
            `8, ${100 + t}.5, ${2000 + t}.25, 3.125, '${DT}')`,
        );
      }
    }
  }
}

/**
 * intervals_parquet over what the UNLOAD wrote, partitions
 * registered in "$partitions" (as ALTER TABLE ADD PARTITION does).
 */
async function createParquetTable(dir: string): Promise<void> {
  const data = parquetDataColumns('intervals')
    .map((c) => `"${c}"`)
    .join(', ');
  await db.run(`CREATE TABLE "intervals_parquet$partitions" (dt VARCHAR, run_id VARCHAR)`);
  // A partition Athena does not know of is not read: the table reads only registered partitions.
  await db.run(
    `CREATE VIEW intervals_parquet AS SELECT ${data}, dt, run_id FROM read_parquet('${dir}/**/*.parquet', ` +
      `hive_partitioning = true, hive_types = {'dt': 'VARCHAR', 'run_id': 'VARCHAR'}) WHERE (dt, run_id) IN ` +
      `(SELECT (dt, run_id) FROM "intervals_parquet$partitions")`,
  );
}

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'ab-athena-storage-'));
  instance = await DuckDBInstance.create(':memory:');
  db = await instance.connect();
  await createJsonTable();
});
afterEach(() => {
  db.closeSync();
  instance.closeSync();
  rmSync(root, { recursive: true, force: true });
});

/**
 * What UNLOAD ... WITH (partitioned_by = ARRAY['dt', 'run_id'])
 * writes, by DuckDB's hive-partitioned COPY of the same SELECT.
 */
async function unload(dir: string, run: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  await db.run(
    `COPY (${unloadSelectSql('intervals', { runId: run, dt: DT })}) TO '${dir}' (FORMAT parquet, COMPRESSION ` +
      `zstd, PARTITION_BY (dt, run_id), OVERWRITE_OR_IGNORE)`,
  );
}

describe('the intervals view over JSON Lines and compacted Parquet', () => {
  it(
    'counts a run once: from JSON Lines until its partition is registered, from Parquet after, with the same ' +
      'values and types',
    async () => {
      // Arrange: run A unloaded (its JSON Lines still there, as between UNLOAD and their deletion).
      const dir = join(root, 'compacted', 'intervals');
      await unload(dir, RUN_A);
      await createParquetTable(dir);
      await db.run(storageViewSql('intervals'));
      const byRun =
        'SELECT run_id, count(*) AS n, sum(tps) AS tps, max(t) AS t FROM intervals GROUP BY run_id ORDER BY run_id';
      const before = await rows(byRun);

      // Act: the commit (the registration ALTER TABLE ADD PARTITION does), then a query.
      await db.run(`INSERT INTO "intervals_parquet$partitions" VALUES ('${DT}', '${RUN_A}')`);
      const registered = await count(
        runPartitionCountSql('intervals', { runId: RUN_A, dt: DT }).replace('count(*) AS partitions', 'count(*) AS n'),
      );
      const after = await rows(byRun);
      const fromParquet = await count(`SELECT count(*) AS n FROM intervals_parquet WHERE run_id = '${RUN_A}'`);

      // Assert: the files landed where the registered partition points, relative to the table's location.
      expect(readdirSync(join(root, compactedRunPrefix('intervals', DT, RUN_A)))).not.toHaveLength(0);
      expect(before).toEqual([
        { run_id: RUN_A, n: 10n, tps: 1035, t: 5 },
        { run_id: RUN_B, n: 5n, tps: 517.5, t: 5 },
      ]);
      expect(registered).toBe(1);
      expect(after).toEqual(before);
      expect(fromParquet).toBe(10);
      const types = async (table: string) =>
        (await rows(`DESCRIBE SELECT * FROM ${table}`)).map((r) => [r['column_name'], r['column_type']]);
      expect(await types('intervals')).toEqual(await types('intervals_json'));
    },
  );

  it(
    'reads the Parquet rows alone once the JSON Lines objects are deleted, and the shared view over it ' +
      'answers the same',
    async () => {
      // Arrange
      const dir = join(root, 'compacted', 'intervals');
      await unload(dir, RUN_A);
      await createParquetTable(dir);
      await db.run(`INSERT INTO "intervals_parquet$partitions" VALUES ('${DT}', '${RUN_A}')`);
      await db.run(storageViewSql('intervals'));
      const totals = allViewSql().find((v) => v.name === 'interval_totals')!.sql;
      await db.run(totals);
      const before = await rows('SELECT * FROM interval_totals ORDER BY ALL');

      // Act: the compaction's last step.
      await db.run(`DELETE FROM intervals_json WHERE run_id = '${RUN_A}'`);

      // Assert
      expect(await count('SELECT count(*) AS n FROM intervals')).toBe(15);
      expect(await rows('SELECT * FROM interval_totals ORDER BY ALL')).toEqual(before);
    },
  );
});

describe('the compaction statements', () => {
  it('UNLOAD writes one run as ZSTD Parquet partitioned by dt and run_id, the partition columns last', () => {
    // Act
    const sql = unloadSql('steps', { runId: RUN_A, dt: DT }, 's3://lake-bucket/p/compacted/steps/');
    const select = unloadSelectSql('steps', { runId: RUN_A, dt: DT });

    // Assert
    expect(sql).toContain(`UNLOAD (${select})`);
    expect(sql).toContain("TO 's3://lake-bucket/p/compacted/steps/'");
    expect(sql).toContain("WITH (format = 'PARQUET', compression = 'ZSTD', partitioned_by = ARRAY['dt', 'run_id'])");
    expect(select).toMatch(
      /"dt", "run_id" FROM steps_json WHERE dt = '2026-11-20' AND "run_id" = 'nightly-a' ORDER BY cell_id, step_id$/,
    );
    expect(select).not.toMatch(/"run_id".*"run_id".*"run_id"/);
    expect(
      addRunPartitionSql('steps', { runId: RUN_A, dt: DT }, 's3://b/compacted/steps/dt=2026-11-20/run_id=nightly-a/'),
    ).toBe(
      "ALTER TABLE steps_parquet ADD IF NOT EXISTS PARTITION (dt = '2026-11-20', run_id = 'nightly-a') " +
        "LOCATION 's3://b/compacted/steps/dt=2026-11-20/run_id=nightly-a/'",
    );
  });

  it(
    'refuses a run id that cannot name a partition folder, a bad date and an UNLOAD location without a ' +
      'trailing slash',
    () => {
      // Act / Assert
      expect(() => checkCompactableRun({ runId: "a'b", dt: DT })).toThrow(/run id "a'b" has characters outside/);
      expect(() => checkCompactableRun({ runId: 'a/b', dt: DT })).toThrow(/cannot name a Parquet partition/);
      expect(() => checkCompactableRun({ runId: RUN_A, dt: '20261120' })).toThrow(/not YYYY-MM-DD/);
      expect(() => unloadSql('steps', { runId: RUN_A, dt: DT }, 's3://b/compacted/steps')).toThrow(/trailing slash/);
    },
  );
});
