/**
 * The lake at a year of nightly runs: interval rows as the workflow writes them (JSON Lines, one
 * file per step) and as compaction leaves them (one Parquet file per run and table,
 * core/lake/compact.ts), queried through the same views (core/lake/duckdb.ts LocalLake) with DuckDB.
 *
 * 1. JSON: --json-runs runs of --steps steps x --clients clients x --intervals intervals each are
 *    written as the workflow writes them (tables/intervals/dt=.../<run>__<cell>__<step>.jsonl).
 *    A summary over every row and a one-run query run on them; then every run is compacted with
 *    compactRun and the same two queries run on the Parquet files: rows, bytes on disk, bytes read,
 *    seconds, JSON vs Parquet, on the same rows.
 * 2. Parquet at scale: runs are added as compacted Parquet files (written by DuckDB with the
 *    compaction's settings, rows generated in SQL with the same spread: a year of JSON would be
 *    ~8 GB) until --rows
 *    interval rows, and the summary and one-run queries run over all of them.
 * Bytes read: what this process read from files while the query ran (/proc/self/io rchar, Linux);
 * on AWS Athena bills the bytes it scans, which this stands in for. Seconds: wall time of the query
 * (the views are created first, as results --sql does).
 *
 * Run: `node dist/bench/lake-scale.js [--rows 20000000] [--json-runs 20] [--keep]` after
 * `npm run build`. Prints figures; asserts nothing. Scratch space under TMPDIR.
 */
import '../core/polyfills';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { compactRun } from '../core/lake/compact';
import { LocalLake } from '../core/lake/duckdb';
import { lakeKeys, toJsonLines, type IntervalRow } from '../core/lake/rows';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000000' },
    'json-runs': { type: 'string', default: '20' },
    steps: { type: 'string', default: '50' },
    clients: { type: 'string', default: '2' },
    intervals: { type: 'string', default: '548' },
    keep: { type: 'boolean', default: false },
  },
});
const targetRows = Number(values.rows);
const jsonRuns = Number(values['json-runs']);
const steps = Number(values.steps);
const clients = Number(values.clients);
const intervals = Number(values.intervals);
const rowsPerRun = steps * clients * intervals;

const SUMMARY =
  'SELECT variant, step_id, count(*) AS intervals, avg(tps) AS tps, avg(qps) AS qps, max(lat_pct_ms) AS ' +
  'lat_max_ms FROM intervals GROUP BY variant, step_id';
const oneRun = (runId: string) =>
  `SELECT step_id, count(*) AS intervals, avg(tps) AS tps, max(lat_pct_ms) AS lat_max_ms FROM intervals WHERE ` +
  `run_id = '${runId}' GROUP BY step_id`;

/** A seeded generator (mulberry32): the same rows every run of the bench. */
let seed = 42;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
}
const round3 = (n: number) => Math.round(n * 1000) / 1000;

const runIdOf = (i: number) => `nightly-${String(i).padStart(4, '0')}`;
const dtOf = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);
const variantOf = (s: number) => (s % 2 === 0 ? 'r6g' : 'r7g');

/** Bytes this process has read from files so far (Linux /proc/self/io, rchar). */
function bytesReadSoFar(): number {
  const line = readFileSync('/proc/self/io', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('rchar:'));
  return Number(line?.split(':')[1]?.trim() ?? 0);
}

function bytesOnDisk(dir: string, suffix: string): number {
  let total = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith(suffix)) total += statSync(join(d, e.name)).size;
    }
  };
  walk(dir);
  return total;
}

/** One run's interval rows, one JSON Lines file per step, as collectStepTask writes them. */
function writeJsonRun(lakeDir: string, i: number): void {
  const runId = runIdOf(i);
  const dt = dtOf(i);
  for (let s = 0; s < steps; s++) {
    const variant = variantOf(s);
    const cellId = `${variant}-r1`;
    const stepId = `rw-t${2 ** (s % 8)}-${s}`;
    const rows: IntervalRow[] = [];
    for (let c = 0; c < clients; c++) {
      for (let t = 1; t <= intervals; t++) {
        // Measured values are not regular: a seeded pseudo-random spread, rounded as the report hook prints them.
        const tps = round3(800 + 200 * random());
        rows.push({
          run_id: runId,
          cell_id: cellId,
          variant,
          step_id: stepId,
          client_id: `client-${c + 1}`,
          t,
          threads: 2 ** (s % 8),
          tps,
          qps: round3(tps * (19 + 2 * random())),
          reads_per_s: round3(tps * (13 + 2 * random())),
          writes_per_s: round3(tps * (3 + 2 * random())),
          other_per_s: round3(tps * (1 + 2 * random())),
          lat_pct_ms: round3(5 + 10 * random()),
          errors_per_s: 0,
          reconnects_per_s: 0,
          queue_length: null,
          concurrency: null,
          dt,
        });
      }
    }
    const key = lakeKeys.stepTable('intervals', dt, runId, cellId, stepId);
    mkdirSync(join(lakeDir, key, '..'), { recursive: true });
    writeFileSync(join(lakeDir, key), toJsonLines(rows));
  }
}

/** Runs from..to-1 written straight as compacted Parquet files (the compaction's columns, order and codec). */
async function writeParquetRuns(lakeDir: string, from: number, to: number): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (let i = from; i < to; i++) {
      const file = join(lakeDir, lakeKeys.compacted('intervals', dtOf(i), runIdOf(i)));
      mkdirSync(join(file, '..'), { recursive: true });
      await connection.run(
        `COPY (
           SELECT '${runIdOf(i)}' AS run_id, (CASE WHEN s % 2 = 0 THEN 'r6g' ELSE 'r7g' END) || '-r1' AS cell_id,
                  CASE WHEN s % 2 = 0 THEN 'r6g' ELSE 'r7g' END AS variant,
                  'rw-t' || CAST(pow(2, s % 8) AS INTEGER) || '-' || s AS step_id, 'client-' || (c + 1) AS client_id,
                  CAST(t AS DOUBLE) AS t, CAST(pow(2, s % 8) AS INTEGER) AS threads,
                  tps, round(tps * (19 + 2 * random()), 3) AS qps, round(tps * (13 + 2 * random()), 3) AS reads_per_s,
                  round(tps * (3 + 2 * random()), 3) AS writes_per_s, round(tps * (1 + 2 * random()), 3) AS other_per_s,
                  round(5 + 10 * random(), 3) AS lat_pct_ms, 0.0 AS errors_per_s, 0.0 AS reconnects_per_s,
                  CAST(NULL AS DOUBLE) AS queue_length, CAST(NULL AS DOUBLE) AS concurrency
           FROM (SELECT s, c, t, round(800 + 200 * random(), 3) AS tps
                 FROM range(${steps}) r1(s), range(${clients}) r2(c), range(1, ${intervals + 1}) r3(t))
           ORDER BY cell_id, step_id, client_id, t
         ) TO '${file}' (FORMAT parquet, COMPRESSION zstd)`,
      );
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

interface Measured {
  readonly rows: number;
  readonly seconds: number;
  readonly bytesRead: number;
}

async function measure(lakeDir: string, sql: string): Promise<Measured> {
  const lake = await LocalLake.open(lakeDir);
  try {
    const before = bytesReadSoFar();
    const started = process.hrtime.bigint();
    const result = await lake.query<{ intervals: number }>(sql);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { rows: result.reduce((a, r) => a + r.intervals, 0), seconds, bytesRead: bytesReadSoFar() - before };
  } finally {
    lake.close();
  }
}

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
const line = (what: string, m: Measured) =>
  `  ${what.padEnd(34)} ${String(m.rows).padStart(11)} rows  ${m.seconds.toFixed(3).padStart(7)} ` +
  `s  ${mb(m.bytesRead).padStart(10)} read`;

async function main(): Promise<void> {
  const lakeDir = mkdtempSync(join(process.env['TMPDIR'] ?? tmpdir(), 'ab-lake-scale-'));
  try {
    console.log(
      `lake at ${lakeDir}: ${rowsPerRun.toLocaleString('en-US')} interval rows per run (${steps} steps ` +
        `x ${clients} clients x ${intervals} intervals)`,
    );
    // 1. The same rows as JSON Lines, then compacted.
    for (let i = 0; i < jsonRuns; i++) writeJsonRun(lakeDir, i);
    const jsonBytes = bytesOnDisk(lakeDir, '.jsonl');
    console.log(
      `JSON Lines: ${jsonRuns} runs, ${(jsonRuns * rowsPerRun).toLocaleString('en-US')} rows, ${mb(jsonBytes)} on disk`,
    );
    const probe = runIdOf(Math.floor(jsonRuns / 2));
    const jsonSummary = await measure(lakeDir, SUMMARY);
    const jsonOne = await measure(lakeDir, oneRun(probe));
    console.log(line('summary (JSON Lines)', jsonSummary));
    console.log(line(`one run ${probe} (JSON Lines)`, jsonOne));
    const started = process.hrtime.bigint();
    for (let i = 0; i < jsonRuns; i++) await compactRun(lakeDir, { runId: runIdOf(i), dt: dtOf(i) });
    const compactS = Number(process.hrtime.bigint() - started) / 1e9;
    const parquetBytes = bytesOnDisk(lakeDir, '.parquet');
    console.log(
      `compacted to Parquet in ${compactS.toFixed(1)} s: ${mb(parquetBytes)} on disk ` +
        `(${((100 * parquetBytes) / jsonBytes).toFixed(1)}% of the JSON)`,
    );
    const pqSummary = await measure(lakeDir, SUMMARY);
    const pqOne = await measure(lakeDir, oneRun(probe));
    console.log(line('summary (Parquet)', pqSummary));
    console.log(line(`one run ${probe} (Parquet)`, pqOne));
    console.log(
      `  one-run query reads ${((100 * pqOne.bytesRead) / Math.max(1, jsonOne.bytesRead)).toFixed(1)}% of the ` +
        `JSON bytes [target <= 10%]`,
    );
    // 2. Parquet at scale.
    const runs = Math.ceil(targetRows / rowsPerRun);
    if (runs > jsonRuns) await writeParquetRuns(lakeDir, jsonRuns, runs);
    const allBytes = bytesOnDisk(lakeDir, '.parquet');
    console.log(
      `Parquet: ${runs} runs, ${(runs * rowsPerRun).toLocaleString('en-US')} rows, ${mb(allBytes)} on disk ` +
        `(JSON Lines of the same rows: ~${mb((jsonBytes / jsonRuns) * runs)})`,
    );
    const bigSummary = await measure(lakeDir, SUMMARY);
    const bigOne = await measure(lakeDir, oneRun(probe));
    console.log(line('summary (Parquet)', bigSummary) + `  [target < 1 s] ${bigSummary.seconds < 1 ? 'ok' : 'MISSED'}`);
    console.log(line(`one run ${probe} (Parquet)`, bigOne));
  } finally {
    if (values.keep) console.log(`kept ${lakeDir}`);
    else rmSync(lakeDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
