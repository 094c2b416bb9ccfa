import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactRun } from '../../core/lake/compact';
import { lakeTableFiles, LocalLake, withLake } from '../../core/lake/duckdb';
import { resultsText } from '../../core/lake/results';
import {
  DT,
  intervalRow,
  metricRow,
  runRow,
  stepRow,
  verdictRow,
  writeRun,
  writeStepTable,
  writeVerdicts,
} from '../helpers/lake-fixtures';

describe('results lake through DuckDB', () => {
  let lakeDir: string;
  beforeEach(() => {
    lakeDir = mkdtempSync(join(tmpdir(), 'aurora-bench-lake-'));
  });
  afterEach(() => rmSync(lakeDir, { recursive: true, force: true }));

  it('opens an empty lake: every table and view exists and is empty', async () => {
    // Arrange: nothing written
    // Act
    const counts = await withLake(lakeDir, async (lake) => {
      const out: Record<string, number> = {};
      for (const t of [
        'runs',
        'steps',
        'intervals',
        'server_metrics',
        'verdicts',
        'step_summary',
        'variant_summary',
        'interval_totals',
        'latest_run',
        'verdict_history',
      ]) {
        out[t] = (await lake.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${t}`))[0]!.n;
      }
      return out;
    });
    // Assert
    expect(Object.values(counts)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    await expect(resultsText(lakeDir)).rejects.toThrow(/no run in the results lake/);
  });

  it('sums clients per step, keeps the worst percentile, and averages repeats with their stddev', async () => {
    // Arrange: variant a, 2 repeats x 2 clients; variant b 1 repeat; an older run
    writeRun(lakeDir, runRow({ run_id: 'old', started_at: '2024-05-01T09:00:00.000Z' }));
    writeRun(lakeDir, runRow({ run_id: 'new', started_at: '2024-05-01T10:00:00.000Z' }));
    writeStepTable(lakeDir, 'steps', [
      stepRow({
        run_id: 'new',
        variant: 'a',
        step_id: 'rw-t4',
        repeat: 1,
        client_id: 'c1',
        tps: 100,
        qps: 2000,
        lat_pct_ms: 20,
        events: 6000,
        lat_avg_ms: 10,
      }),
      stepRow({
        run_id: 'new',
        variant: 'a',
        step_id: 'rw-t4',
        repeat: 1,
        client_id: 'c2',
        tps: 110,
        qps: 2200,
        lat_pct_ms: 25,
        events: 2000,
        lat_avg_ms: 14,
      }),
      stepRow({
        run_id: 'new',
        variant: 'a',
        step_id: 'rw-t4',
        repeat: 2,
        client_id: 'c1',
        tps: 120,
        qps: 2400,
        lat_pct_ms: 22,
      }),
      stepRow({
        run_id: 'new',
        variant: 'a',
        step_id: 'rw-t4',
        repeat: 2,
        client_id: 'c2',
        tps: 130,
        qps: 2600,
        lat_pct_ms: 21,
      }),
      stepRow({
        run_id: 'new',
        variant: 'b',
        step_id: 'rw-t4',
        repeat: 1,
        tps: 50,
        qps: 1000,
        instance_class: 'db.r5.large',
      }),
      stepRow({ run_id: 'old', variant: 'a', step_id: 'rw-t4', tps: 1, qps: 1 }),
    ]);
    // Act
    const { steps, variants, latest } = await withLake(lakeDir, async (lake) => ({
      steps: await lake.query(
        `SELECT cell_id, clients, tps, qps, lat_pct_ms, lat_avg_ms, status FROM step_summary WHERE run_id = ` +
          `'new' ORDER BY cell_id`,
      ),
      variants: await lake.query(
        `SELECT variant, n, n_failed, tps_mean, tps_stddev, qps_mean FROM variant_summary WHERE run_id = 'new' ` +
          `ORDER BY variant`,
      ),
      latest: await lake.query(`SELECT run_id, dt FROM latest_run`),
    }));
    // Assert
    expect(steps).toEqual([
      { cell_id: 'a-r1', clients: 2, tps: 210, qps: 4200, lat_pct_ms: 25, lat_avg_ms: 11, status: 'ok' },
      { cell_id: 'a-r2', clients: 2, tps: 250, qps: 5000, lat_pct_ms: 22, lat_avg_ms: 10, status: 'ok' },
      { cell_id: 'b-r1', clients: 1, tps: 50, qps: 1000, lat_pct_ms: 20, lat_avg_ms: 10, status: 'ok' },
    ]);
    expect(variants[0]).toMatchObject({ variant: 'a', n: 2, n_failed: 0, tps_mean: 230, qps_mean: 4600 });
    expect(variants[0]!['tps_stddev']).toBeCloseTo(Math.sqrt(800), 9);
    expect(variants[1]).toMatchObject({ variant: 'b', n: 1, tps_mean: 50, tps_stddev: null });
    expect(latest).toEqual([{ run_id: 'new', dt: DT }]);
  });

  it('reports a failed step with null metrics as failed, with its reason, and leaves it out of the means', async () => {
    // Arrange
    writeRun(lakeDir, runRow({ run_id: 'r', status: 'failed', error: 'cell a-r2 failed: step rw-t4' }));
    writeStepTable(lakeDir, 'steps', [
      stepRow({ run_id: 'r', variant: 'a', step_id: 'rw-t4', repeat: 1, tps: 100, qps: 2000 }),
      stepRow({
        run_id: 'r',
        variant: 'a',
        step_id: 'rw-t4',
        repeat: 2,
        status: 'failed',
        error: "FATAL: Can't connect to MySQL server",
        tps: null,
        qps: null,
        events: null,
        total_time_s: null,
        reads: null,
        writes: null,
        other: null,
        errors: null,
        reconnects: null,
        lat_min_ms: null,
        lat_avg_ms: null,
        lat_max_ms: null,
        lat_pct_ms: null,
        interval_count: 0,
        client_cpu_avg_pct: null,
        client_cpu_max_pct: null,
      }),
    ]);
    // Act
    const text = await resultsText(lakeDir);
    const json = JSON.parse(await resultsText(lakeDir, { json: true })) as Record<string, unknown>[];
    const summary = await withLake(lakeDir, (lake) => lake.query(`SELECT n, n_failed, tps_mean FROM variant_summary`));
    // Assert
    expect(json.map((s) => [s['cell_id'], s['status'], s['tps'], s['lat_pct_ms'], s['errors']])).toEqual([
      ['a-r1', 'ok', 100, 20, 0],
      ['a-r2', 'failed', null, null, 0],
    ]);
    expect(json[1]!['error']).toBe("FATAL: Can't connect to MySQL server");
    expect(text).toMatch(/Run r \(test-spec\) on local: failed/);
    expect(text).toMatch(/failed .*FATAL: Can't connect to MySQL server/);
    expect(summary).toEqual([{ n: 1, n_failed: 1, tps_mean: 100 }]);
  });

  it('reads intervals and server metrics across partitions, with dt from the key', async () => {
    // Arrange: the same run split over two date partitions (a run that crossed midnight)
    writeRun(lakeDir, runRow({ run_id: 'r' }));
    writeStepTable(lakeDir, 'intervals', [
      intervalRow({ run_id: 'r', variant: 'a', step_id: 's', t: 1, client_id: 'c1', tps: 10 }),
      intervalRow({ run_id: 'r', variant: 'a', step_id: 's', t: 1, client_id: 'c2', tps: 12 }),
      intervalRow({ run_id: 'r', variant: 'a', step_id: 's', t: 2, client_id: 'c1', tps: 11, dt: '2024-05-02' }),
    ]);
    writeStepTable(lakeDir, 'server_metrics', [
      metricRow({ run_id: 'r', variant: 'a', step_id: 's', metric: 'CPUUtilization', value: 87.5 }),
    ]);
    // Act
    const { totals, metrics } = await withLake(lakeDir, async (lake) => ({
      totals: await lake.query(`SELECT t, clients, tps, dt FROM interval_totals ORDER BY t`),
      metrics: await lake.query(`SELECT metric, value, source FROM server_metrics`),
    }));
    // Assert
    expect(totals).toEqual([
      { t: 1, clients: 2, tps: 22, dt: DT },
      { t: 2, clients: 1, tps: 11, dt: '2024-05-02' },
    ]);
    expect(metrics).toEqual([{ metric: 'CPUUtilization', value: 87.5, source: 'local' }]);
  });

  it('runs arbitrary SQL and names a bad query clearly', async () => {
    // Arrange
    writeRun(lakeDir, runRow({ run_id: 'r' }));
    // Act
    const text = await resultsText(lakeDir, { sql: 'SELECT run_id, status FROM runs' });
    // Assert
    expect(text).toMatch(/run_id.*status/);
    expect(text).toMatch(/succeeded/);
    expect(text).toMatch(/\(1 row\)/);
    await expect(resultsText(lakeDir, { sql: 'SELECT nope FROM runs' })).rejects.toThrow(/query failed: .*nope/s);
  });

  it('names a run that is not in the lake and lists the latest ones', async () => {
    // Arrange
    writeRun(lakeDir, runRow({ run_id: 'exists' }));
    // Act / Assert
    await expect(resultsText(lakeDir, { runId: 'missing' })).rejects.toThrow(
      /run "missing" is not in the results lake .*latest runs: exists/,
    );
  });

  it("verdict_history: each run's verdicts with the run's start and status, in the SQL Athena runs too", async () => {
    // Arrange: two nights of one experiment, the second regressed on TPS; a run without verdicts.
    writeRun(
      lakeDir,
      runRow({ run_id: 'n1', spec_name: 'exp', started_at: '2024-05-01T02:00:00.000Z', status: 'succeeded' }),
    );
    writeRun(
      lakeDir,
      runRow({ run_id: 'n2', spec_name: 'exp', started_at: '2024-05-02T02:00:00.000Z', status: 'failed' }),
    );
    writeRun(lakeDir, runRow({ run_id: 'n3', spec_name: 'exp', started_at: '2024-05-03T02:00:00.000Z' }));
    writeVerdicts(lakeDir, [
      verdictRow({ run_id: 'n1', metric: 'tps', verdict: 'within-noise' }),
      verdictRow({ run_id: 'n1', metric: 'latency', verdict: 'unknown', ratio: null }),
    ]);
    writeVerdicts(lakeDir, [
      verdictRow({ run_id: 'n2', metric: 'tps', verdict: 'regressed', value: 70, ratio: 0.7 }),
      verdictRow({ run_id: 'n2', metric: 'latency', verdict: 'within-noise' }),
    ]);

    // Act
    const rows = await withLake(lakeDir, (lake) =>
      lake.query(
        `SELECT run_id, started_at, run_status, metric, verdict, regressed, ratio FROM verdict_history WHERE ` +
          `experiment = 'exp' ORDER BY started_at, metric`,
      ),
    );

    // Assert
    expect(rows).toEqual([
      {
        run_id: 'n1',
        started_at: '2024-05-01T02:00:00.000Z',
        run_status: 'succeeded',
        metric: 'latency',
        verdict: 'unknown',
        regressed: 0,
        ratio: null,
      },
      {
        run_id: 'n1',
        started_at: '2024-05-01T02:00:00.000Z',
        run_status: 'succeeded',
        metric: 'tps',
        verdict: 'within-noise',
        regressed: 0,
        ratio: 1,
      },
      {
        run_id: 'n2',
        started_at: '2024-05-02T02:00:00.000Z',
        run_status: 'failed',
        metric: 'latency',
        verdict: 'within-noise',
        regressed: 0,
        ratio: 1,
      },
      {
        run_id: 'n2',
        started_at: '2024-05-02T02:00:00.000Z',
        run_status: 'failed',
        metric: 'tps',
        verdict: 'regressed',
        regressed: 1,
        ratio: 0.7,
      },
    ]);
  });

  it('opened for some runs or tables, reads only their files', async () => {
    // Arrange: three runs with a step each (one run id with "__" in it)
    for (const id of ['r1', 'r2', 'r__3']) {
      writeRun(lakeDir, runRow({ run_id: id }));
      writeStepTable(lakeDir, 'steps', [stepRow({ run_id: id, variant: 'a', step_id: 'rw-t4' })]);
    }
    const count = (table: string) => async (lake: { query<T extends object>(sql: string): Promise<T[]> }) =>
      (await lake.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n;

    // Act
    const scoped = await withLake(
      lakeDir,
      async (lake) => [await count('runs')(lake), await count('step_summary')(lake)],
      { runIds: ['r2', 'r__3'] },
    );
    const runsOnly = await withLake(lakeDir, async (lake) => [await count('runs')(lake), await count('steps')(lake)], {
      tables: ['runs'],
    });

    // Assert
    expect(scoped).toEqual([2, 2]);
    expect(runsOnly).toEqual([3, 0]);
  });

  it("reads a run that another run's end compacted after the lake was opened, from its Parquet file", async () => {
    // Arrange: two runs' steps as JSON Lines; the lake opened (its views list those files)
    for (const id of ['mine', 'other']) {
      writeRun(lakeDir, runRow({ run_id: id }));
      writeStepTable(lakeDir, 'steps', [
        stepRow({ run_id: id, variant: 'a', step_id: 'rw-t4', client_id: 'c1', tps: 100 }),
        stepRow({ run_id: id, variant: 'a', step_id: 'rw-t4', client_id: 'c2', tps: 50 }),
      ]);
    }
    const lake = await LocalLake.open(lakeDir);
    try {
      // Act: the other run compacted (its JSON Lines files removed) before the query
      await compactRun(lakeDir, { runId: 'other', dt: DT });
      const rows = await lake.query<{ run_id: string; client_id: string; tps: number }>(
        'SELECT run_id, client_id, tps FROM steps ORDER BY run_id, client_id',
      );
      const summary = await lake.query<{ run_id: string; tps: number }>(
        'SELECT run_id, tps FROM step_summary ORDER BY run_id',
      );

      // Assert: every row, read from the Parquet file, and no file left out
      expect(rows).toEqual([
        { run_id: 'mine', client_id: 'c1', tps: 100 },
        { run_id: 'mine', client_id: 'c2', tps: 50 },
        { run_id: 'other', client_id: 'c1', tps: 100 },
        { run_id: 'other', client_id: 'c2', tps: 50 },
      ]);
      expect(summary).toEqual([
        { run_id: 'mine', tps: 150 },
        { run_id: 'other', tps: 150 },
      ]);
      expect(lake.skippedFiles).toEqual([]);
    } finally {
      lake.close();
    }
  });

  it.each([
    ['truncated', (f: string) => truncateSync(f, 100)],
    ['foreign', (f: string) => writeFileSync(f, 'PAR1 not a Parquet file')],
  ])("serves the other runs when one run's Parquet file is %s, naming it", async (_kind, spoil) => {
    // Arrange: two runs compacted to Parquet, one of their steps files spoiled
    for (const id of ['good', 'bad']) {
      writeRun(lakeDir, runRow({ run_id: id }));
      writeStepTable(lakeDir, 'steps', [stepRow({ run_id: id, variant: 'a', step_id: 'rw-t4', client_id: 'c1' })]);
      await compactRun(lakeDir, { runId: id, dt: DT });
    }
    const spoiled = lakeTableFiles(lakeDir, 'steps').find((f) => f.endsWith('bad.parquet'))!;
    spoil(spoiled);

    // Act
    const { runs, skipped } = await withLake(lakeDir, async (lake) => ({
      runs: await lake.query<{ run_id: string }>('SELECT DISTINCT run_id FROM steps ORDER BY run_id'),
      skipped: lake.skippedFiles,
    }));

    // Assert
    expect(runs).toEqual([{ run_id: 'good' }]);
    expect(skipped.map((f) => f.file)).toEqual([spoiled]);
    expect(skipped[0]!.reason).toMatch(/Parquet|magic bytes/);
  });
});
