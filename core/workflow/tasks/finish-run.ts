/** FinishRun reads every cell's outcome from the lake into the run's row, then compacts the run. */
import type { RunContext } from '../../backend';
import { lakeKeys, toJsonLines, type RunRow, type ServerConfigRow } from '../../lake/rows';
import type { ActualCellCost } from '../../plan/bill';
import { bundledPrices } from '../../plan/cost';
import type { Plan, PlanNote } from '../../plan/types';
import { runCellCosts } from '../cell-bill';
import { causeText } from './cause-text';
import { readJson } from './lake-json';
import { need } from './need';
import type { CellOutcome } from './teardown-cell';
import { questionsResolvedText, stopText, type RoundsJudged } from './judge-round';
import { ROUNDS_NOTE_PATH, roundsSpan } from '../../experiment/rounds';
import type { TaskDeps, TaskError } from './types';

export interface FinishRunEvent {
  readonly run: RunContext;
  /**
   * The Map's items of an execution planned before items became positions.
   * Read only when the run's cell list is not in the lake.
   */
  readonly cells?: readonly (string | { readonly cellId: string; readonly members?: readonly string[] })[];
  readonly error?: TaskError;
}

export interface FinishRunOutput {
  readonly status: 'succeeded' | 'failed';
  readonly runId: string;
  readonly error: string | null;
  readonly cause: string | null;
  readonly steps: number;
  readonly failedSteps: number;
  /**
   * What compaction did, or why it did not. Absent when the deps compact nothing.
   * Uncompacted JSON Lines rows are read as they are.
   */
  readonly compaction?: string;
}

/** Per cell, the writer's version and the values read at prepare. */
async function serverConfigSummary(deps: TaskDeps, run: RunContext): Promise<string | null> {
  const keys = (await deps.backend.lake.list(lakeKeys.runTablePrefix('server_config', run.dt, run.runId))).filter((k) =>
    k.endsWith('.jsonl'),
  );
  if (keys.length === 0) return null;
  const summary: Record<
    string,
    { version: string | null; values: Record<string, string | null>; notInEffect: string[] }
  > = {};
  for (const key of keys.sort()) {
    const rows = ((await deps.backend.lake.get(key)) ?? '')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as ServerConfigRow);
    for (const r of rows) {
      const cell = (summary[r.cell_id] ??= { version: null, values: {}, notInEffect: [] });
      if (r.kind === 'version' && (r.name === 'version' || r.name === 'aurora_version' || r.name === 'server_version'))
        cell.version = cell.version === null ? r.value : `${cell.version} / ${r.value}`;
      else if (r.kind !== 'version') cell.values[r.name] = r.value;
      if (r.in_effect === false) cell.notInEffect.push(r.name);
    }
  }
  return JSON.stringify(summary);
}

async function readRunRow(deps: TaskDeps, run: RunContext): Promise<RunRow | undefined> {
  const text = await deps.backend.lake.get(lakeKeys.run(run.dt, run.runId));
  if (text === undefined || text.trim() === '') return undefined;
  return JSON.parse(text.trim().split('\n')[0]!) as RunRow;
}

/** Plan notes plus each cell's backend notes, once each, since cells of one variant repeat them. */
function mergeNotes(planNotes: readonly PlanNote[], cellNotes: readonly PlanNote[]): PlanNote[] {
  const seen = new Set<string>();
  return [...planNotes, ...cellNotes].filter((n) => {
    const key = `${n.level}|${n.path}|${n.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The run's cells in plan order, from the list PlanRun wrote.
 * Older runs lack the list, so the Map's items name them.
 */
async function runCellIds(deps: TaskDeps, event: FinishRunEvent): Promise<string[]> {
  const listed = await readJson<string[]>(deps, lakeKeys.workflow.cellList(event.run.runId));
  if (listed !== undefined) return listed;
  return (event.cells ?? []).flatMap((item) => (typeof item === 'string' ? [item] : (item.members ?? [item.cellId])));
}

/** Each cell's cost from what really ran, priced with the bundled price table. */
function runCosts(row: RunRow, results: readonly CellOutcome[]): Map<string, ActualCellCost> {
  const facts = new Map(results.flatMap((r) => (r.bill !== undefined ? [[r.cellId, r.bill] as const] : [])));
  if (facts.size === 0) return new Map();
  try {
    return runCellCosts(JSON.parse(row.plan) as Plan, bundledPrices(), facts);
  } catch {
    // Pricing is a view of the facts, which the manifest keeps.
    // So an unreadable plan or price table leaves the cost out instead of failing the run.
    return new Map();
  }
}

/** A cell id is `${variant}-r${repeat}`. */
const cellRound = (cellId: string): number => Number(/-r(\d+)$/.exec(cellId)?.[1] ?? 1);

/** How many rounds of the range ran, and why they stopped. */
function roundsNote(j: RoundsJudged): PlanNote {
  const why = stopText(j);
  return {
    level: 'info',
    path: ROUNDS_NOTE_PATH,
    message:
      `${j.rounds} round${j.rounds === 1 ? '' : 's'} of ${roundsSpan(j.minRounds, j.maxRounds)} ran, ` +
      `stopped: ${why}: ${questionsResolvedText(j.questions)}`,
  };
}

export async function finishRunTask(deps: TaskDeps, event: FinishRunEvent): Promise<FinishRunOutput> {
  need(event, ['run'], 'finish-run');
  // The run's cells and outcomes are in the lake, so nothing of them travels in the state.
  const judged = await readJson<RoundsJudged>(deps, lakeKeys.workflow.roundsJudged(event.run.runId));
  // Cells of rounds the judge did not start were never meant to run, so they did not fail to report.
  const cells = (await runCellIds(deps, event)).filter((id) => judged === undefined || cellRound(id) <= judged.rounds);
  const results: CellOutcome[] = [];
  const missing: string[] = [];
  const written = new Map<string, CellOutcome>();
  for (let i = 0; i < cells.length; i += 16) {
    const batch = cells.slice(i, i + 16);
    const outcomes = await Promise.all(
      batch.map((cellId) => readJson<CellOutcome>(deps, lakeKeys.workflow.cellOutcome(event.run.runId, cellId))),
    );
    outcomes.forEach((o, j) => {
      if (o) written.set(batch[j]!, o);
    });
  }
  for (const cellId of cells) {
    const outcome = written.get(cellId);
    if (outcome) results.push(outcome);
    else missing.push(cellId);
  }
  const failedCells = results.filter((r) => r.status !== 'succeeded');
  const problems = [
    ...(event.error ? [`run: ${causeText(event.error)}`] : []),
    ...failedCells.flatMap((c) => [
      `cell ${c.cellId} ${c.status}: ${c.error ?? 'unknown'}`,
      ...c.failedSteps.map((s) => `  step ${s.stepId}: ${s.error ?? 'failed'}`),
    ]),
    ...missing.map((id) => `cell ${id}: did not report (aborted?)`),
  ];
  const status = problems.length === 0 ? 'succeeded' : 'failed';
  const cause = problems.length === 0 ? null : problems.join('\n');
  const stepCount = results.reduce((a, r) => a + r.steps, 0);
  const failedStepCount = results.reduce((a, r) => a + r.failedStepCount, 0);
  const previous = await readRunRow(deps, event.run);
  if (previous) {
    const costs = runCosts(previous, results);
    const row: RunRow = {
      ...previous,
      status,
      error: cause,
      ended_at: deps.now().toISOString(),
      sysbench_version: results.find((r) => r.sysbenchVersion)?.sysbenchVersion ?? previous.sysbench_version,
      cells: JSON.stringify(
        results.map((r) => ({
          cell_id: r.cellId,
          status: r.status,
          error: r.error,
          ...(r.bill !== undefined ? { resources: r.bill.resources, measured: r.bill.measured } : {}),
          ...(costs.has(r.cellId) ? { cost: costs.get(r.cellId) } : {}),
        })),
      ),
      server_config: await serverConfigSummary(deps, event.run),
      notes: JSON.stringify(
        mergeNotes(JSON.parse(previous.notes || '[]') as PlanNote[], [
          ...results.flatMap((r) => r.notes),
          ...(judged !== undefined ? [roundsNote(judged)] : []),
        ]),
      ),
    };
    await deps.backend.lake.put(lakeKeys.run(event.run.dt, event.run.runId), toJsonLines([row]));
  }
  const onlyStepsFailed =
    event.error === undefined &&
    missing.length === 0 &&
    failedCells.every((c) => c.status === 'failed' && c.failedSteps.length > 0);
  // Every row of the run is written, late metrics included.
  // A failed compaction leaves the JSON Lines rows, which the lake reads as before.
  let compaction: string | undefined;
  if (deps.compactRun) {
    try {
      compaction = await deps.compactRun(event.run);
    } catch (e) {
      compaction = `not compacted: ${(e as Error).message}`;
    }
  }
  return {
    status,
    runId: event.run.runId,
    error: status === 'succeeded' ? null : onlyStepsFailed ? 'BenchmarkStepsFailed' : 'BenchmarkFailed',
    cause,
    steps: stepCount,
    failedSteps: failedStepCount,
    ...(compaction !== undefined ? { compaction } : {}),
  };
}
