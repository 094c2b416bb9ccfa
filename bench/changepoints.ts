/**
 * Benchmark of the regression verdicts (issue targets in brackets):
 *   1. the change-point detector's precision and recall on synthetic series with known change
 *      points (steps down and up, a regression fixed later, a change of spread), a detected change
 *      point matching a true one within 2 runs; for both statistics;
 *   2. its false-positive rate on change-free series (with and without outliers): the share of
 *      series in which it finds any change point (the test's level is 1%);
 *   3. `history` over 1,000 runs x 200 series (50 steps x 4 metrics)  [< 1 s]: the analysis
 *      alone (buildHistory), and with --lake also through a real lake directory and DuckDB.
 *
 * Run: `node dist/bench/changepoints.js [--series 40] [--runs 1000] [--steps 50] [--lake]`
 * after `npm run build:dist`. Prints figures; asserts nothing.
 */
import '../core/polyfills';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { historyFromLake } from '../core/cli/regression-command';
import { readHistoryInput } from '../core/regression/judge';
import { localLakeOpener } from '../core/regression/judge-local';
import { eDivisive, type EDivisiveStatistic } from '../core/regression/edivisive';
import { buildHistory, HISTORY_DEFAULTS, type HistoryRunRow } from '../core/regression/history';
import type { StepRow } from '../core/regression/metrics';
import { NormalSource, segmentedSeries, seriesOfKind, type SyntheticSeries } from './synthetic-series';
import { planRun } from '../core/plan/plan';
import { validateSpec } from '../core/experiment/validate';
import { lakeKeys, toJsonLines, type RunRow, type StepRow as LakeStepRow } from '../core/lake/rows';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const { values } = parseArgs({
  options: {
    series: { type: 'string', default: '40' },
    runs: { type: 'string', default: '1000' },
    steps: { type: 'string', default: '50' },
    lake: { type: 'boolean', default: false },
  },
});
const perKind = Number(values.series);
const RUNS = Number(values.runs);
const STEPS = Number(values.steps);
const TOLERANCE = 2;
const DETECTOR = { significance: HISTORY_DEFAULTS.significance, permutations: HISTORY_DEFAULTS.permutations };

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** Greedy one-to-one matching of detected to true change points within TOLERANCE runs. */
function matches(found: readonly number[], truth: readonly number[]): number {
  const free = [...truth];
  let hit = 0;
  for (const f of found) {
    const k = free.findIndex((t) => Math.abs(t - f) <= TOLERANCE);
    if (k >= 0) {
      free.splice(k, 1);
      hit++;
    }
  }
  return hit;
}

function accuracy(statistic: EDivisiveStatistic): void {
  const kinds: { name: string; make: (seed: number) => SyntheticSeries }[] = [
    { name: 'step down 10%, 40 runs', make: (s) => seriesOfKind('step-down', 40, s) },
    { name: 'step up 10%, 40 runs', make: (s) => seriesOfKind('step-up', 40, s) },
    { name: 'step down 5%, 100 runs', make: (s) => seriesOfKind('step-down', 100, s, 0.02, 0.05) },
    {
      name: 'down 30% for 6 runs, then back (18 runs)',
      make: (s) =>
        segmentedSeries(
          'fixed later',
          [
            { length: 6, mean: 1000, sd: 20 },
            { length: 6, mean: 700, sd: 20 },
            { length: 6, mean: 1000, sd: 20 },
          ],
          s,
        ),
    },
    { name: 'down 10% then back, 60 runs', make: (s) => seriesOfKind('down-up', 60, s) },
    { name: 'spread x5, 160 runs', make: (s) => seriesOfKind('variance', 160, s) },
  ];
  let tp = 0;
  let fp = 0;
  let fn = 0;
  console.log(
    `\n${statistic} (significance ${DETECTOR.significance}, ${DETECTOR.permutations} permutations, a match ` +
      `within ${TOLERANCE} runs), ${perKind} series per kind:`,
  );
  for (const kind of kinds) {
    let kTp = 0;
    let kFound = 0;
    let kTrue = 0;
    for (let seed = 1; seed <= perKind; seed++) {
      const s = kind.make(seed);
      const found = eDivisive(s.values, { ...DETECTOR, statistic, seed }).changePoints.map((c) => c.index);
      const hit = matches(found, s.changePoints);
      kTp += hit;
      kFound += found.length;
      kTrue += s.changePoints.length;
    }
    tp += kTp;
    fp += kFound - kTp;
    fn += kTrue - kTp;
    console.log(
      `  ${kind.name.padEnd(42)} precision ${pct(kFound === 0 ? 1 : kTp / kFound).padStart(6)}  ` +
        `recall ${pct(kTp / kTrue).padStart(6)}`,
    );
  }
  console.log(
    `  ${'all'.padEnd(42)} precision ${pct(tp / (tp + fp)).padStart(6)}  recall ${pct(tp / (tp + fn)).padStart(6)}`,
  );
}

function falsePositives(statistic: EDivisiveStatistic): void {
  console.log(
    `\nfalse positives of ${statistic}: share of change-free series with any change point (${perKind * 5} ` +
      `series per row)`,
  );
  for (const [kind, length] of [
    ['none', 30],
    ['none', 100],
    ['outliers', 60],
  ] as const) {
    let withAny = 0;
    let points = 0;
    const n = perKind * 5;
    for (let seed = 1; seed <= n; seed++) {
      const s = seriesOfKind(kind, length, 10_000 + seed);
      const found = eDivisive(s.values, { ...DETECTOR, statistic, seed }).changePoints.length;
      if (found > 0) withAny++;
      points += found;
    }
    console.log(
      `  ` +
        `${kind === 'none' ? 'no change' : 'no change, 3 outliers of 6 sd'}, ${length} runs`.padEnd(42) +
        ` ${pct(withAny / n).padStart(6)} ` +
        `of series (${points} change points)`,
    );
  }
}

/** A nightly-like history: STEPS steps over RUNS runs, each step's level changing 0-3 times by 5-30%. */
function syntheticHistory(): { runs: HistoryRunRow[]; steps: StepRow[]; truth: number } {
  const spec = validateSpec(
    {
      name: 'bench-history',
      engine: { version: '3.10.4' },
      variants: [{ name: 'v', instanceClass: 'db.r6g.large' }],
      data: { tables: 4, tableSize: 10000 },
      workloads: Array.from({ length: STEPS }, (_, i) => ({ name: `w${i}`, test: 'oltp_read_write', threads: [8] })),
    },
    'bench',
  );
  const planFor = (runId: string) => JSON.stringify(planRun(spec, { backend: 'local', runId }));
  const template = planFor('bench-0000');
  const normal = new NormalSource(99);
  const runs: HistoryRunRow[] = [];
  for (let r = 0; r < RUNS; r++) {
    const runId = `bench-${String(r).padStart(4, '0')}`;
    // The same plan with the run's id: measurement hashes are per step, ids do not enter them.
    runs.push({
      run_id: runId,
      started_at: new Date(Date.UTC(2024, 0, 1) + r * 86_400_000).toISOString(),
      status: 'succeeded',
      backend: 'local',
      plan: template,
    });
  }
  const steps: StepRow[] = [];
  let truth = 0;
  for (let w = 0; w < STEPS; w++) {
    const changes = Math.floor(normal.uniform() * 4);
    truth += changes;
    const at = Array.from({ length: changes }, () => 1 + Math.floor(normal.uniform() * (RUNS - 2))).sort(
      (a, b) => a - b,
    );
    let level = 1000 + 500 * normal.uniform();
    let next = 0;
    for (let r = 0; r < RUNS; r++) {
      while (next < at.length && at[next] === r) {
        level *= 1 + (normal.uniform() < 0.5 ? -1 : 1) * (0.05 + 0.25 * normal.uniform());
        next++;
      }
      const tps = level * (1 + 0.02 * normal.next());
      steps.push({
        run_id: runs[r]!.run_id,
        cell_id: 'v-r1',
        step_id: `w${w}-t8-max`,
        variant: 'v',
        repeat: 1,
        workload: `w${w}`,
        threads: 8,
        rate: 0,
        target: 'writer',
        status: 'ok',
        error: null,
        saturated_clients: 0,
        tps,
        qps: tps * 20,
        lat_pct: 95,
        lat_pct_ms: 8000 / tps,
        errors_per_s: 0,
      });
    }
  }
  return { runs, steps, truth };
}

function writeLake(dir: string, runs: readonly HistoryRunRow[], steps: readonly StepRow[]): void {
  const put = (key: string, rows: object[]) => {
    const file = join(dir, key);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, toJsonLines(rows));
  };
  for (const r of runs) {
    const row: RunRow = {
      run_id: r.run_id,
      spec_name: 'bench-history',
      spec: '{}',
      spec_sha256: '0',
      plan: r.plan ?? '{}',
      backend: 'local',
      region: 'us-east-1',
      engine_version: '3.10.4',
      server_version: null,
      sysbench_version: null,
      tool_version: 'bench',
      git_sha: null,
      started_at: r.started_at,
      ended_at: r.started_at,
      status: 'succeeded',
      error: null,
      cells: '[]',
      notes: '[]',
      dt: r.started_at.slice(0, 10),
    };
    put(lakeKeys.run(row.dt, row.run_id), [row]);
  }
  const dtOf = new Map(runs.map((r) => [r.run_id, r.started_at.slice(0, 10)]));
  for (const s of steps) {
    const dt = dtOf.get(s.run_id)!;
    const row: LakeStepRow = {
      run_id: s.run_id,
      cell_id: s.cell_id,
      variant: s.variant,
      repeat: 1,
      instance_class: 'db.r6g.large',
      az: null,
      step_id: s.step_id,
      step_index: 0,
      workload: s.workload,
      test: 'oltp_read_write',
      threads: s.threads,
      rate: 0,
      target: 'writer',
      endpoint_instance: 'w',
      client_id: 'c1',
      client_index: 0,
      started_at: '',
      ended_at: '',
      status: 'ok',
      error: null,
      tps: s.tps,
      qps: s.qps,
      events: Math.round(s.tps! * 60),
      total_time_s: 60,
      reads: 0,
      writes: 0,
      other: 0,
      errors: 0,
      reconnects: 0,
      lat_min_ms: 1,
      lat_avg_ms: 5,
      lat_max_ms: 50,
      lat_pct: 95,
      lat_pct_ms: s.lat_pct_ms,
      lat_p50_ms: null,
      lat_p90_ms: null,
      lat_p95_ms: null,
      lat_p99_ms: null,
      lat_p999_ms: null,
      interval_count: 60,
      client_cpu_avg_pct: 20,
      client_cpu_max_pct: 30,
      client_saturated: false,
      read_back_checks: null,
      stale_reads: null,
      dt,
    };
    put(lakeKeys.stepTable('steps', dt, s.run_id, s.cell_id, s.step_id), [row]);
  }
}

async function historyTiming(): Promise<void> {
  const { runs, steps, truth } = syntheticHistory();
  console.log(
    `\nhistory over ${RUNS} runs x ${STEPS * 4} series (${STEPS} steps x TPS, QPS, p95 latency, ` +
      `errors/s; ${truth} level changes across the steps), defaults: ${HISTORY_DEFAULTS.statistic}, ` +
      `last ${HISTORY_DEFAULTS.window} runs, ${HISTORY_DEFAULTS.permutations} permutations`,
  );
  const times: number[] = [];
  const cpu: number[] = [];
  let history = buildHistory({ experiment: 'bench-history', runs, steps });
  for (let i = 0; i < 3; i++) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    history = buildHistory({ experiment: 'bench-history', runs, steps });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  cpu.sort((a, b) => a - b);
  const changePoints = history.steps.reduce((a, s) => a + s.metrics.reduce((b, m) => b + m.changePoints.length, 0), 0);
  const regressed = history.steps.reduce(
    (a, s) => a + s.metrics.filter((m) => m.latest?.verdict === 'regressed').length,
    0,
  );
  times.sort((a, b) => a - b);
  // The analysis is single-threaded: its CPU time is its wall time on a machine nobody else uses;
  // the wall time here includes waiting for whatever else runs on the machine.
  console.log(
    `  analysis (buildHistory), median of 3: CPU ${(cpu[1]! / 1000).toFixed(3)} s, ` +
      `wall ${(times[1]! / 1000).toFixed(3)} s   [target < 1 s, on CPU ` +
      `time] ${cpu[1]! < 1000 ? 'ok' : 'MISSED'}   (${changePoints} change points in the searched ` +
      `windows, ${regressed} latest-run regressions)`,
  );
  if (!values.lake) return;
  const dir = mkdtempSync(join(tmpdir(), 'ab-bench-history-'));
  try {
    const w0 = process.hrtime.bigint();
    writeLake(dir, runs, steps);
    console.log(
      `  lake written: ${runs.length} run files + ${steps.length} step files ` +
        `in ${(Number(process.hrtime.bigint() - w0) / 1e9).toFixed(1)} s`,
    );
    const t0 = process.hrtime.bigint();
    await historyFromLake(localLakeOpener(dir), 'bench-history');
    console.log(
      `  through the lake, default window (the runs table, then the ${HISTORY_DEFAULTS.window} latest runs' ` +
        `step files only, then the analysis): ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(2)} s`,
    );
    // What `history` read before it read by window: every run's step files, then the same analysis.
    const t1 = process.hrtime.bigint();
    buildHistory(await readHistoryInput(localLakeOpener(dir), 'bench-history', { window: 'all' }));
    console.log(
      `  through the lake, reading every step file, then the same ` +
        `analysis: ${(Number(process.hrtime.bigint() - t1) / 1e9).toFixed(2)} s`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log('aurora-bench change-point benchmark (seeded: the same figures every run on the same code)');
  for (const statistic of ['u-statistic-best-end', 'v-statistic-to-end'] as const) {
    accuracy(statistic);
    falsePositives(statistic);
  }
  await historyTiming();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
