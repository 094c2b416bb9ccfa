/**
 * What the Aurora choices sections (serverless, storage, bill) read beyond the report's RunData: the
 * raw Serverless v2 capacity and cluster volume I/O datapoints of a run (RunData carries only
 * per-step averages), and the cells they apply to (cluster engines that ran steps).
 */
import { cellEngine, type CellPlan } from '../plan/types';
import { ENGINES, type EngineRef } from '../aurora/engines';
import type { LakeReader } from '../lake/duckdb';
import type { StepResult } from '../lake/results';
import type { Context } from './context';

/**
 * One CloudWatch datapoint of a Serverless v2 instance's capacity or of the cluster volume's I/O.
 */
export interface UsagePoint {
  readonly cell_id: string;
  readonly step_id: string;
  readonly instance_id: string;
  readonly metric: string;
  readonly ts: string;
  readonly value: number;
}

export interface AuroraUsage {
  /** ServerlessDatabaseCapacity datapoints (ACUs, one per instance and minute). */
  readonly capacity: readonly UsagePoint[];
  /** VolumeReadIOPs and VolumeWriteIOPs datapoints (requests per 5 minutes, per cluster). */
  readonly volumeIo: readonly UsagePoint[];
}

/** A run without Serverless v2 capacity or cluster volume I/O datapoints (a local run). */
export const NO_AURORA_USAGE: AuroraUsage = { capacity: [], volumeIo: [] };

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** The run's capacity and volume I/O datapoints (none for a local run: its servers publish neither). */
export async function loadAuroraUsage(lake: LakeReader, runId: string): Promise<AuroraUsage> {
  const rows = await lake.query<UsagePoint>(
    `SELECT cell_id, step_id, instance_id, metric, CAST(ts AS VARCHAR) AS ts, value FROM server_metrics
     WHERE run_id = ${quote(runId)} AND metric IN ('ServerlessDatabaseCapacity', 'VolumeReadIOPs', 'VolumeWriteIOPs')
     ORDER BY ts`,
  );
  return {
    capacity: rows.filter((r) => r.metric === 'ServerlessDatabaseCapacity'),
    volumeIo: rows.filter((r) => r.metric !== 'ServerlessDatabaseCapacity'),
  };
}

export const seconds = (from: string, to: string): number => Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000);

/** A step's capacity datapoints per instance, in time order. */
export function capacityOf(usage: AuroraUsage, cellId: string, stepId: string): Map<string, UsagePoint[]> {
  const out = new Map<string, UsagePoint[]>();
  for (const p of usage.capacity) {
    if (p.cell_id !== cellId || p.step_id !== stepId) continue;
    out.set(p.instance_id, [...(out.get(p.instance_id) ?? []), p]);
  }
  return out;
}

/**
 * The scaling lag of a step: seconds from its start to the first capacity datapoint of the writer
 * (the instance with the highest peak) that reaches 90% of the step's peak, at CloudWatch's
 * one-minute resolution. null without datapoints or when nothing scaled (peak equals the first value).
 */
export function scalingLagS(step: Pick<StepResult, 'started_at'>, points: readonly UsagePoint[]): number | null {
  if (points.length === 0) return null;
  const peak = Math.max(...points.map((p) => p.value));
  if (!(peak > points[0]!.value)) return null;
  const reached = points.find((p) => p.value >= 0.9 * peak)!;
  return Math.max(0, seconds(step.started_at, reached.ts));
}

/** The average total capacity (ACUs summed over instances) of a step, or undefined without datapoints. */
export function averageAcu(byInstance: ReadonlyMap<string, readonly UsagePoint[]>): number | undefined {
  if (byInstance.size === 0) return undefined;
  let total = 0;
  for (const points of byInstance.values()) total += points.reduce((a, p) => a + p.value, 0) / points.length;
  return total;
}

/** The volume's I/O requests in the 5-minute windows collected for a cell's steps (each window once). */
export function cellIoRequests(usage: AuroraUsage, cellId: string): number | undefined {
  const windows = new Map<string, number>();
  for (const p of usage.volumeIo) if (p.cell_id === cellId) windows.set(`${p.metric}\u0000${p.ts}`, p.value);
  return windows.size === 0 ? undefined : [...windows.values()].reduce((a, b) => a + b, 0);
}

export interface CellFacts {
  readonly cell: CellPlan;
  readonly steps: readonly StepResult[];
}

function isClusterEngine(engine: EngineRef | null): boolean {
  return engine !== null && ENGINES[engine.kind].topology === 'cluster';
}

/** The plan's cells on a cluster engine with the steps they ran (skipped ones left out). */
export function cellsOf(ctx: Context): CellFacts[] {
  const plan = ctx.data.plan;
  if (!plan) return [];
  return (
    plan.cells
      .map((cell) => ({
        cell,
        steps: ctx.data.steps.filter((s) => s.cell_id === cell.cellId && s.status !== 'skipped'),
      }))
      // An imported run's plan names no engine (core/cli/import-logs.ts): nothing here applies to it.
      .filter((c) => c.steps.length > 0 && isClusterEngine(cellEngine(plan, c.cell) as EngineRef | null))
  );
}

/** What the sections show of a variant: its name and what it runs on. */
export type VariantRef = Pick<CellPlan['variant'], 'name' | 'instanceClass' | 'serverless'>;

export const variantRef = (v: CellPlan['variant']): VariantRef => ({
  name: v.name,
  instanceClass: v.instanceClass,
  ...(v.serverless !== undefined ? { serverless: v.serverless } : {}),
});

export const variantLabel = (v: VariantRef): string =>
  v.serverless !== undefined ? `Serverless v2 ${v.serverless.minAcu}-${v.serverless.maxAcu} ACU` : v.instanceClass;
