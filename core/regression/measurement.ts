/**
 * What defines a measurement, as opposed to what is measured.
 * A change in the system under test is what the history should show as a change point.
 * A change in the measurement itself starts a new series, and the history says what changed.
 * The definition comes per step from the run's stored plan.
 * So adding a workload to an experiment does not break the other series.
 */
import { createHash } from 'node:crypto';
import type { CellPlan, Plan, StepPlan } from '../plan/types';
import { canonicalJson } from '../experiment/canonical-json';
import { stepKeyText, type StepKey } from './metrics';

/** The measurement-defining parts of one step of one variant, as stored in a run's plan. */
export interface StepMeasurement {
  readonly backend: string;
  readonly region: string;
  readonly test: string | null;
  /** sha256 of a custom Lua script. Null for a stock test. */
  readonly script: string | null;
  readonly options: Readonly<Record<string, unknown>>;
  readonly durationS: number;
  readonly warmupS: number;
  readonly reportIntervalS: number;
  readonly percentile: number;
  readonly clients: number;
  readonly clientInstanceType: string | null;
  readonly tables: number;
  readonly tableSize: number;
  readonly dataReuse: string;
}

export interface MeasuredStep {
  readonly key: StepKey;
  readonly measurement: StepMeasurement;
  /** Short sha256 of the canonical JSON of `measurement`. */
  readonly hash: string;
}

/**
 * A plan as a run row stores it.
 * Whichever version ran it wrote it, so fields added since may be missing.
 */
type StoredStep = Omit<StepPlan, 'options'> & { readonly options?: StepPlan['options'] };
type StoredCell = Omit<CellPlan, 'steps' | 'variant'> & {
  readonly steps?: readonly StoredStep[];
  readonly variant: Omit<CellPlan['variant'], 'clients'> & { readonly clients?: CellPlan['variant']['clients'] };
};
type StoredPlan = Pick<Plan, 'backend' | 'region'> & { readonly cells?: unknown };

function stepMeasurement(plan: Pick<Plan, 'backend' | 'region'>, cell: StoredCell, step: StoredStep): StepMeasurement {
  return {
    backend: plan.backend,
    region: plan.region,
    test: step.test ?? null,
    script: step.script?.sha256 ?? null,
    options: step.options ?? {},
    durationS: step.durationS,
    warmupS: step.warmupS,
    reportIntervalS: step.reportIntervalS,
    percentile: step.percentile,
    clients: step.clients,
    clientInstanceType: cell.variant.clients?.instanceType ?? null,
    tables: cell.data.tables,
    tableSize: cell.data.tableSize,
    dataReuse: cell.data.reuse,
  };
}

/** Hashes already computed, by canonical text. A history reads the same definitions from every run. */
const hashes = new Map<string, string>();

function measurementHash(m: StepMeasurement): string {
  // A cheap exact key first.
  const key = JSON.stringify([
    m.backend,
    m.region,
    m.test,
    m.script,
    canonicalJson(m.options),
    m.durationS,
    m.warmupS,
    m.reportIntervalS,
    m.percentile,
    m.clients,
    m.clientInstanceType,
    m.tables,
    m.tableSize,
    m.dataReuse,
  ]);
  let hash = hashes.get(key);
  if (hash === undefined) {
    hash = createHash('sha256').update(canonicalJson(m)).digest('hex').slice(0, 12);
    if (hashes.size > 10_000) hashes.clear();
    hashes.set(key, hash);
  }
  return hash;
}

/**
 * The measured steps of a run, keyed by stepKeyText, from its stored plan.
 * A variant's repeats are one measured step.
 * Empty when the plan cannot be read. The caller says such a run's steps are left out.
 */
export function measuredSteps(planJson: string | null | undefined): Map<string, MeasuredStep> {
  const out = new Map<string, MeasuredStep>();
  let plan: StoredPlan | null;
  try {
    plan = JSON.parse(planJson ?? '') as StoredPlan | null;
  } catch {
    return out;
  }
  if (!plan || !Array.isArray(plan.cells)) return out;
  for (const cell of plan.cells as StoredCell[]) {
    for (const step of cell.steps ?? []) {
      const key: StepKey = {
        variant: cell.variant.name,
        workload: step.workload,
        threads: step.threads,
        rate: step.rate,
        target: step.target,
      };
      const text = stepKeyText(key);
      if (out.has(text)) continue;
      const measurement = stepMeasurement(plan, cell, step);
      out.set(text, { key, measurement, hash: measurementHash(measurement) });
    }
  }
  return out;
}

/** What differs between two definitions, e.g. "durationS 60 → 120". */
export function measurementDifferences(before: StepMeasurement, after: StepMeasurement): string[] {
  const out: string[] = [];
  for (const k of Object.keys(after) as (keyof StepMeasurement)[]) {
    const a = canonicalJson(before[k] ?? null);
    const b = canonicalJson(after[k] ?? null);
    if (a !== b) out.push(`${k} ${a} → ${b}`);
  }
  return out;
}
