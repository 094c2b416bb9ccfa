/**
 * Lakes whose truth is known: a study's experiment file run through the plan, every step's level
 * set by a planted truth (A = B, A 10% faster, a fall-off at a known thread count) and the noise
 * drawn from the model fitted to this machine's real runs (bench/noise-model.ts, as
 * test/unit/regression-simulation.test.ts draws it). A report over such a lake must state the
 * planted truth or say it cannot resolve it, never the opposite.
 *
 * A truth is a function of the cell and step, so a study's own truths (a knee between two offered
 * rates, a saturated client, replica lag during one step, a parameter difference) are written the
 * same way: levels and the step's other numbers (errors, client CPU, server metrics) in one place.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fitNoiseModel, NoiseSource, type NoiseModel, type RecordedRun } from '../../bench/noise-model';
import type { Scale } from '../../core/experiment/scale';
import type { CellPlan, Plan, StepPlan } from '../../core/plan/types';
import type { Spec } from '../../core/experiment/schema';
import { summarizeStep } from '../../core/lake/step-summary';
import type { StepResult } from '../../core/lake/results';
import { stepKey, type RunData } from '../../core/report/load';
import {
  runRowsFromSpec,
  type RunFixtureOptions,
  type RunRows,
  type StepNumbers,
  type StepFn,
} from './report-fixtures';

const REPO = join(__dirname, '..', '..');

/** The noise model of the latest recorded real runs (bench/results/regression-local.json). */
export function recordedNoise(): NoiseModel {
  const file = join(REPO, 'bench', 'results', 'regression-local.json');
  const recordings = (
    JSON.parse(readFileSync(file, 'utf8')) as {
      recordings: { runs: RecordedRun[]; withinRun?: { intervalTps: number[] } }[];
    }
  ).recordings;
  const latest = recordings.at(-1)!;
  return fitNoiseModel(latest.runs, latest.withinRun?.intervalTps);
}

/** A quiet machine: a tenth of the recorded spread, so a planted gap stands clear of the noise. */
export function quietNoise(): NoiseModel {
  const recorded = recordedNoise();
  return {
    ...recorded,
    runs: { ...recorded.runs, sigma: recorded.runs.sigma / 10 },
    intervals: { ...recorded.intervals, sigma: recorded.intervals.sigma / 10 },
  };
}

/** The Lua workloads experiment files name, by file name, as `run` loads them. */
function workloadScripts(): Record<string, string> {
  const dirs = [join(REPO, 'client', 'workloads'), join(REPO, 'experiments', 'workloads')];
  return Object.fromEntries(
    dirs.flatMap((dir) =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.lua'))
        .map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
    ),
  );
}

/** A study's experiment file, parsed. */
export function experiment(name: string): unknown {
  return JSON.parse(readFileSync(join(REPO, 'experiments', `${name}.json`), 'utf8')) as unknown;
}

/**
 * The true numbers of one step of one cell: its expected TPS (and optionally QPS per transaction,
 * latency, errors, client CPU, metrics). The noise is added by the generator, not here.
 */
export type Truth = (cell: CellPlan, step: StepPlan) => StepNumbers;

export interface PlantOptions {
  readonly seed: number;
  readonly runId: string;
  /** Default 'small', the scale a rehearsal runs at. */
  readonly scale?: Scale;
  /** Overrides of the experiment file (e.g. repeats) before scaling. */
  readonly spec?: Readonly<Record<string, unknown>>;
  /** Default: the recorded model. */
  readonly noise?: NoiseModel;
  /** Per-interval samples per step (default 8: an 8 s step at a 1 s report interval). */
  readonly intervals?: number;
}

/** The step function and fixture options of a planted run: truth times the drawn noise. */
function planted(specDoc: unknown, truth: Truth, options: PlantOptions): [unknown, StepFn, RunFixtureOptions] {
  const model = options.noise ?? recordedNoise();
  const src = new NoiseSource(options.seed);
  const runs = { sigma: model.runs.sigma, phi: 0 };
  const within = { sigma: model.intervals.sigma, phi: model.intervals.phi };
  const doc = { ...(specDoc as Record<string, unknown>), ...(options.spec ?? {}) };
  const fn: StepFn = (cell, step) => {
    const t = truth(cell, step);
    // One run's deviation per cell and step: each repeat is a fresh server on a machine whose load wanders.
    const k = src.series(1, 1, runs)[0]!;
    // A rate step's truth is the server's capacity: sysbench --rate achieves the offered rate below it (the
    // noise moves the capacity, not the rate a client asked for), the capacity above it.
    const offered = step.rate * step.clients;
    const tps = offered > 0 ? Math.min(offered, t.tps * k) : t.tps * k;
    // Bytes moved scale with the step's throughput, so network metrics carry its noise too.
    const metrics =
      t.metrics === undefined
        ? undefined
        : Object.fromEntries(Object.entries(t.metrics).map(([m, v]) => [m, m.startsWith('Network') ? v * k : v]));
    return {
      ...t,
      tps,
      ...(t.qps !== undefined ? { qps: (t.qps * tps) / t.tps } : {}),
      ...(metrics !== undefined ? { metrics } : {}),
      latPctMs: (t.latPctMs ?? 10) / k,
    };
  };
  return [
    doc,
    fn,
    {
      runId: options.runId,
      backend: 'local',
      scale: options.scale ?? 'small',
      intervals: options.intervals ?? 8,
      scripts: workloadScripts(),
      wobble: (_cell, _step, _client, n) => src.series(1, n, within),
    },
  ];
}

/**
 * The same run as the report loads it (core/report/load.ts RunData), without a lake: steps summed
 * over their clients by the declarations the lake's step_summary view is generated from
 * (core/lake/step-summary.ts), intervals summed per second as interval_totals does. Many simulated
 * runs a second, where a lake costs a DuckDB query per table.
 */
export function plantedRunData(specDoc: unknown, truth: Truth, options: PlantOptions): RunData {
  return runData(runRowsFromSpec(...planted(specDoc, truth, options)));
}

function runData(rows: RunRows): RunData {
  const byStep = new Map<string, RunRows['steps'][number][]>();
  for (const r of rows.steps)
    byStep.set(stepKey(r.cell_id, r.step_id), [...(byStep.get(stepKey(r.cell_id, r.step_id)) ?? []), r]);
  const steps = [...byStep.values()].map((clients) => summarizeStep(clients) as StepResult);
  const cellStart = new Map<string, string>();
  for (const s of steps)
    if (!cellStart.has(s.cell_id) || s.started_at < cellStart.get(s.cell_id)!) cellStart.set(s.cell_id, s.started_at);
  steps.sort(
    (a, b) =>
      cellStart.get(a.cell_id)!.localeCompare(cellStart.get(b.cell_id)!) ||
      a.cell_id.localeCompare(b.cell_id) ||
      a.step_index - b.step_index,
  );
  const totals = new Map<string, Map<number, { tps: number; qps: number; lat: number; errors: number }>>();
  for (const i of rows.intervals) {
    const k = stepKey(i.cell_id, i.step_id);
    const perT = totals.get(k) ?? new Map<number, { tps: number; qps: number; lat: number; errors: number }>();
    const acc = perT.get(i.t) ?? { tps: 0, qps: 0, lat: 0, errors: 0 };
    perT.set(i.t, {
      tps: acc.tps + i.tps,
      qps: acc.qps + i.qps,
      lat: Math.max(acc.lat, i.lat_pct_ms),
      errors: acc.errors + i.errors_per_s,
    });
    totals.set(k, perT);
  }
  const [cellOf, stepOf] = [(k: string) => k.slice(0, k.indexOf('/')), (k: string) => k.slice(k.indexOf('/') + 1)];
  const intervals = new Map(
    [...totals.entries()].map(([k, perT]) => [
      k,
      [...perT.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([t, v]) => ({
          cell_id: cellOf(k),
          step_id: stepOf(k),
          t,
          tps: v.tps,
          qps: v.qps,
          lat_pct_ms: v.lat,
          errors_per_s: v.errors,
        })),
    ]),
  );
  const metricGroups = new Map<string, RunRows['metrics'][number][]>();
  for (const m of rows.metrics) {
    const k = [m.cell_id, m.step_id, m.role, m.instance_id, m.metric].join('\u0000');
    metricGroups.set(k, [...(metricGroups.get(k) ?? []), m]);
  }
  const metrics = [...metricGroups.values()].map((ms) => ({
    cell_id: ms[0]!.cell_id,
    step_id: ms[0]!.step_id,
    role: ms[0]!.role,
    instance_id: ms[0]!.instance_id,
    metric: ms[0]!.metric,
    avg_value: ms.reduce((a, m) => a + m.value, 0) / ms.length,
    max_value: Math.max(...ms.map((m) => m.value)),
    samples: ms.length,
    source: ms[0]!.source,
    partial: false,
  }));
  return {
    run: rows.run,
    spec: JSON.parse(rows.run.spec) as Spec,
    plan: JSON.parse(rows.run.plan) as Plan,
    steps,
    intervals,
    metrics,
    verdicts: [],
  };
}

/**
 * A planted replica lag: for every step `lagMs` returns a lag at the step's start (null: none
 * planted, the reader drained), the reader's lag datapoints halve each second from there, as a
 * replica catching up does; or, 'growing', the lag a step's own writes build up by its end. The
 * datapoints are what core/report/load.ts reads from server_metrics.
 */
export function withReplicaLag(
  data: RunData,
  lagMs: (step: StepResult) => number | null,
  /** 'draining': the planted lag is at the step's start; 'growing': it builds from 20 ms to it by the step's end. */
  shape: 'draining' | 'growing' = 'draining',
): RunData {
  const samples = data.steps
    .filter((s) => s.target !== 'writer')
    .flatMap((s) => {
      const start = Date.parse(s.started_at);
      const seconds = Math.max(1, Math.round((Date.parse(s.ended_at) - start) / 1000));
      const first = lagMs(s) ?? 20;
      return Array.from({ length: seconds }, (_, t) => ({
        cell_id: s.cell_id,
        step_id: s.step_id,
        instance_id: `${s.cell_id}-reader-1`,
        ts: new Date(start + t * 1000).toISOString(),
        lag_ms: shape === 'growing' ? 20 + ((first - 20) * t) / Math.max(1, seconds - 1) : Math.max(20, first / 2 ** t),
      }));
    });
  return { ...data, replicaLag: samples };
}

// ---------------------------------------------------------------------------------------------
// S4: one client against more

const MB = 1e6;

/**
 * S4's client-bound case, the original study's signature: one client's sysbench at `oneClientCpu` % of its
 * core, the server far below its CPU line (15%), and the most clients moving `gain` more bytes (their
 * sysbench at 50%). With `hostCpu` the machine's CPU busy % is planted too (the runner's ClientHostCPU): that
 * for the one client, 99% for more.
 */
export const s4ClientBound =
  (gain: number, oneClientCpu: number, hostCpu?: number): Truth =>
  (_cell, step) => ({
    tps: step.clients === 1 ? 5 : 5 * (1 + gain),
    clientCpuPct: step.clients === 1 ? oneClientCpu : 50,
    metrics: {
      NetworkTransmitThroughput: 140 * MB * (step.clients === 1 ? 1 : 1 + gain),
      NetworkReceiveThroughput: 0.1 * MB,
      CPUUtilization: 15,
      ...(hostCpu !== undefined ? { ClientHostCPU: step.clients === 1 ? hostCpu : 99 } : {}),
    },
  });

/**
 * A planted S4 run as the local backend stores it: the host CPU a client-side metric, and the plan note that
 * says how many CPUs the servers ran on (this machine's, "with 2 CPU(s)"). `coTenant`: other runs shared it.
 */
export function plantedS4(
  truth: Truth,
  options: PlantOptions & { readonly coTenant?: boolean; readonly cpus?: number },
): RunData {
  const d = plantedRunData(experiment('network-throughput'), truth, options);
  const notes = JSON.parse(d.run.notes || '[]') as unknown[];
  const cpus = options.cpus ?? 2;
  const variants = [...new Set(d.steps.map((s) => s.variant))];
  const cpuNotes = variants.map((v) => ({
    level: 'info',
    path: `variants[name=${v}].instanceClass`,
    message: `runs locally as MariaDB with ${cpus} CPU(s) (no CPU pinning)`,
  }));
  const host = options.coTenant === true ? [{ path: 'host', message: 'shared vm, 3 other runs' }] : [];
  return {
    ...d,
    run: { ...d.run, notes: JSON.stringify([...notes, ...cpuNotes, ...host]) },
    metrics: d.metrics.map((m) => (m.metric === 'ClientHostCPU' ? { ...m, role: 'client' } : m)),
  };
}
