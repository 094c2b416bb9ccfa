/**
 * Loading one run for the report: its manifest (spec and plan), the step summaries, the
 * per-interval totals and the server metrics, from any lake (DuckDB locally, Athena on AWS).
 */
import type { LakeReader } from '../lake/duckdb';
import { findRun, stepResults, type RunInfo, type StepResult } from '../lake/results';
import type { VerdictsRow } from '../lake/rows';
import type { Plan } from '../plan/types';
import type { Spec } from '../experiment/schema';
import { loadAuroraUsage, type AuroraUsage } from './aurora-usage';

interface IntervalTotal {
  readonly cell_id: string;
  readonly step_id: string;
  readonly t: number;
  readonly tps: number;
  readonly qps: number;
  readonly lat_pct_ms: number;
  readonly errors_per_s: number;
}

interface MetricMean {
  readonly cell_id: string;
  readonly step_id: string;
  readonly role: string;
  readonly instance_id: string;
  readonly metric: string;
  readonly avg_value: number;
  readonly max_value: number;
  readonly samples: number;
  readonly source: string;
  /**
   * The mean over the seconds the load filled: without the window's first and last datapoint and any below half
   * the others' mean (null with fewer than 3). Each edge covers a second the load filled only in part (a step
   * whose load starts late in its window has two), which a short step's mean cannot absorb.
   */
  readonly steady_value?: number | null;
  /**
   * Some datapoints of the window never arrived (metric_windows.complete = false): the average
   * covers only the ones received, not the whole step.
   */
  readonly partial: boolean;
}

/** One reader's replica lag datapoint in a step's window (AuroraReplicaLag in ms; RDS ReplicaLag converted). */
interface ReplicaLagSample {
  readonly cell_id: string;
  readonly step_id: string;
  readonly instance_id: string;
  readonly ts: string;
  readonly lag_ms: number;
}

/** One value a cell's server ran with, read at prepare (the server_config table, core/workflow/effective-config.ts). */
interface ServerConfigValue {
  readonly variant: string;
  /** 'requested' (a parameter the variant set, checked in effect) or 'performance' (recorded whether set or not). */
  readonly kind: string;
  readonly name: string;
  readonly value: string | null;
}

export interface RunData {
  readonly run: RunInfo;
  readonly spec: Spec | null;
  readonly plan: Plan | null;
  readonly steps: readonly StepResult[];
  /** Keyed `${cell_id}/${step_id}`, in time order. */
  readonly intervals: ReadonlyMap<string, readonly IntervalTotal[]>;
  readonly metrics: readonly MetricMean[];
  /** The run's verdicts against its experiment's history (the verdicts table), when it was judged. */
  readonly verdicts?: readonly VerdictsRow[];
  /** Serverless v2 capacity and cluster volume I/O datapoints (core/report/aurora-usage.ts). */
  readonly auroraUsage?: AuroraUsage;
  /** The readers' replica lag datapoints in time order: what a step that reads a replica started from. */
  readonly replicaLag?: readonly ReplicaLagSample[];
  /** What each variant's server ran with: which parameter differences act on these servers. */
  readonly serverConfig?: readonly ServerConfigValue[];
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

function parseJson(text: string | null | undefined): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null; // an unreadable manifest field: the report falls back to what the step rows say
  }
}

export const stepKey = (cellId: string, stepId: string): string => `${cellId}/${stepId}`;

export async function loadRun(lake: LakeReader, runId?: string): Promise<RunData> {
  const run = await findRun(lake, runId);
  const steps = await stepResults(lake, run.run_id);
  const intervalRows = await lake.query<IntervalTotal>(
    `SELECT cell_id, step_id, t, tps, qps, lat_pct_ms, errors_per_s FROM interval_totals WHERE run_id ` +
      `= ${quote(run.run_id)} ORDER BY cell_id, step_id, t`,
  );
  const intervals = new Map<string, IntervalTotal[]>();
  for (const r of intervalRows) {
    const k = stepKey(r.cell_id, r.step_id);
    const list = intervals.get(k) ?? [];
    list.push(r);
    intervals.set(k, list);
  }
  // An aggregate has no row order of its own, and DuckDB's and Trino's differ: the tables keep one.
  const means = await lake.query<Omit<MetricMean, 'partial'>>(
    `SELECT cell_id, step_id, role, instance_id, metric, AVG(value) AS avg_value, MAX(value) AS max_value,
            COUNT(*) AS samples, MAX(source) AS source,
            AVG(CASE WHEN rn > 1 AND rn < n AND value >= inner_avg / 2 THEN value END) AS steady_value
     FROM (SELECT *, AVG(CASE WHEN rn > 1 AND rn < n THEN value END)
                       OVER (PARTITION BY cell_id, step_id, instance_id, metric) AS inner_avg
           FROM (SELECT cell_id, step_id, role, instance_id, metric, value, source,
                        ROW_NUMBER() OVER (PARTITION BY cell_id, step_id, instance_id, metric ORDER BY ts) AS rn,
                        COUNT(*) OVER (PARTITION BY cell_id, step_id, instance_id, metric) AS n
                 FROM server_metrics WHERE run_id = ${quote(run.run_id)}) AS e) AS m
     GROUP BY cell_id, step_id, role, instance_id, metric
     ORDER BY cell_id, step_id, role, instance_id, metric`,
  );
  const incomplete = await lake.query<{ cell_id: string; step_id: string; instance_id: string; metric: string }>(
    `SELECT cell_id, step_id, instance_id, metric FROM metric_windows WHERE run_id = ${quote(run.run_id)} AND ` +
      `NOT complete`,
  );
  const partialKeys = new Set(
    incomplete.map((w) => `${w.cell_id}\u0000${w.step_id}\u0000${w.instance_id}\u0000${w.metric}`),
  );
  const metrics = means.map((m) => ({
    ...m,
    partial: partialKeys.has(`${m.cell_id}\u0000${m.step_id}\u0000${m.instance_id}\u0000${m.metric}`),
  }));
  // RDS read replicas publish ReplicaLag in seconds, Aurora readers AuroraReplicaLag in ms (core/lake/rows.ts).
  const replicaLag = await lake.query<ReplicaLagSample>(
    `SELECT cell_id, step_id, instance_id, ts, ` +
      `CASE WHEN metric = 'ReplicaLag' THEN value * 1000 ELSE value END AS lag_ms FROM server_metrics ` +
      `WHERE run_id = ${quote(run.run_id)} AND role = 'reader' AND metric IN ('AuroraReplicaLag', 'ReplicaLag') ` +
      `ORDER BY cell_id, step_id, ts`,
  );
  const verdicts = await lake.query<VerdictsRow>(`SELECT * FROM verdicts WHERE run_id = ${quote(run.run_id)}`);
  const auroraUsage = await loadAuroraUsage(lake, run.run_id);
  const serverConfig = await lake.query<ServerConfigValue>(
    `SELECT DISTINCT variant, kind, name, value FROM server_config WHERE run_id = ${quote(run.run_id)} AND ` +
      `kind IN ('requested', 'performance') ORDER BY variant, name`,
  );
  return {
    run,
    spec: parseJson(run.spec) as Spec | null,
    plan: parseJson(run.plan) as Plan | null,
    steps,
    intervals,
    metrics,
    verdicts,
    auroraUsage,
    replicaLag,
    serverConfig,
  };
}
