/** PlanRun: the spec validated and planned, the plan and the Map's items written to the lake. */
import type { RunContext } from '../../backend';
import { lakeKeys, toJsonLines, type RunRow } from '../../lake/rows';
import { PlanError } from '../../plan/plan';
import { preparePlan } from '../../plan/prepare';
import type { Plan, PlanNote } from '../../plan/types';
import type { GroupRef } from './group';
import { SpecError, validateSpec } from '../../experiment/validate';
import { InvalidSpecError } from '../errors';
import type { Spec } from '../../experiment/schema';
import { namedQuestions, repeatRange } from '../../experiment/rounds';
import { bundledPrices, estimatePlanCost, regionPrices, variantHourly } from '../../plan/cost';
import type { RoundsConfig } from './judge-round';
import { need } from './need';
import type { TaskDeps } from './types';

export interface PlanRunEvent {
  readonly spec: unknown;
  readonly scripts?: Record<string, string>;
  readonly runId?: string;
  /** Notes the caller made before the workflow (e.g. what --scale small changed), kept in the manifest. */
  readonly notes?: readonly PlanNote[];
}

export interface PlanRunOutput {
  readonly run: RunContext;
  /**
   * The cell Map's items: their positions 0..n-1 in the plan's cells (its duets with order "duet"),
   * nothing of their names, so the parent execution's state grows by a few bytes per cell whatever
   * the variant names: RunCells' ItemSelector makes each the child's {group: {index}}. Which group is
   * at a position (lakeKeys.workflow.item), each cell's plan with its steps
   * (lakeKeys.workflow.cellPlan) and the list of cells (lakeKeys.workflow.cellList) are in the lake.
   */
  readonly items: readonly number[];
  readonly maxConcurrency: number;
  /** A run with questions: the round the items are (1 first); JudgeRound follows RunCells. Absent: one pass. */
  readonly round?: number;
}

function runContext(plan: Plan): RunContext {
  return {
    runId: plan.runId,
    specName: plan.specName,
    backend: plan.backend,
    region: plan.region,
    engineVersion: plan.engine.version,
    dt: plan.dt,
    ttlHours: plan.ttlHours,
  };
}

export async function planRunTask(deps: TaskDeps, event: PlanRunEvent): Promise<PlanRunOutput> {
  need(event, ['spec'], 'plan-run');
  let plan: Plan;
  try {
    const spec = validateSpec(event.spec, 'execution input "spec"');
    // The input's spec is already scaled (the CLI prepared it); the
    // backend's own checks need the plan: deps.preflight below.
    ({ plan } = preparePlan(
      { spec, scripts: event.scripts ?? {} },
      {
        backend: deps.backend.kind,
        writeForwarding: deps.backend.writeForwarding,
        ...(event.runId ? { runId: event.runId } : {}),
        now: deps.now(),
      },
    ));
    // The backend's checks: refusals stop the run; what they warn about or could not check stays in its manifest.
    const checked = deps.preflight ? await deps.preflight(plan, spec) : [];
    const refusals = checked.filter((n) => n.level === 'refused');
    if (refusals.length > 0) throw new PlanError(refusals);
    for (const [name, body] of Object.entries(plan.scripts))
      await deps.backend.lake.put(lakeKeys.script(plan.runId, name), body);
    // Each cell's plan with its steps: the state carries references, the Tasks read the plan here.
    for (let i = 0; i < plan.cells.length; i += 16) {
      await Promise.all(
        plan.cells
          .slice(i, i + 16)
          .map((cell) =>
            deps.backend.lake.put(lakeKeys.workflow.cellPlan(plan.runId, cell.cellId), JSON.stringify(cell)),
          ),
      );
    }
    // FinishRun reads the cells from here, not from the state.
    await deps.backend.lake.put(
      lakeKeys.workflow.cellList(plan.runId),
      JSON.stringify(plan.cells.map((c) => c.cellId)),
    );
    // Which group each Map item is (a round's cells with order "duet", otherwise one cell): the state
    // carries only the item's position.
    const groups = mapGroups(plan);
    for (let i = 0; i < groups.length; i += 16) {
      await Promise.all(
        groups
          .slice(i, i + 16)
          .map((group) =>
            deps.backend.lake.put(lakeKeys.workflow.item(plan.runId, group.index), JSON.stringify(group)),
          ),
      );
    }
    if (spec.questions !== undefined) await writeRoundsConfig(deps, plan, spec, groups);
    const row: RunRow = {
      run_id: plan.runId,
      spec_name: plan.specName,
      spec: JSON.stringify(spec),
      spec_sha256: plan.specSha256,
      plan: JSON.stringify({ ...plan, scripts: Object.keys(plan.scripts) }),
      backend: plan.backend,
      region: plan.region,
      engine_version: plan.engine.version,
      server_version: deps.serverVersion,
      sysbench_version: null,
      tool_version: deps.toolVersion,
      git_sha: deps.gitSha,
      started_at: deps.now().toISOString(),
      ended_at: null,
      status: 'running',
      error: null,
      cells: '[]',
      notes: JSON.stringify([...(event.notes ?? []), ...plan.notes, ...checked]),
      dt: plan.dt,
    };
    await deps.backend.lake.put(lakeKeys.run(plan.dt, plan.runId), toJsonLines([row]));
  } catch (e) {
    // Under the name the ASL's Catch reports; the message is what crosses the state machine.
    if (e instanceof SpecError || e instanceof PlanError) throw new InvalidSpecError(e.message, { cause: e });
    throw e;
  }
  // Positions only (a group's index is its position: groups are in plan order).
  const groups = mapGroups(plan);
  if (plan.rounds !== undefined) {
    // Round by round: the first round's items now, JudgeRound gives each next round's.
    const first = groups.filter((g) => groupRound(plan, g) === 1).map((g) => g.index);
    return { run: runContext(plan), items: first, maxConcurrency: plan.maxConcurrency, round: 1 };
  }
  const items = groups.map((g) => g.index);
  return { run: runContext(plan), items, maxConcurrency: plan.maxConcurrency };
}

/** The round (repeat) of a Map item: its first member's. */
function groupRound(plan: Plan, group: GroupRef): number {
  const cellId = group.members[0]!.cellId;
  return plan.cells.find((c) => c.cellId === cellId)!.repeat;
}

/** Each round's items and estimated cost, the questions and the budget, for JudgeRound. */
async function writeRoundsConfig(deps: TaskDeps, plan: Plan, spec: Spec, groups: readonly GroupRef[]): Promise<void> {
  const { min, max } = repeatRange(spec);
  const prices = bundledPrices();
  const roundUsd: number[] = [];
  const items: number[][] = [];
  for (let r = 1; r <= max; r++) {
    items.push(groups.filter((g) => groupRound(plan, g) === r).map((g) => g.index));
    roundUsd.push(estimatePlanCost({ ...plan, cells: plan.cells.filter((c) => c.repeat === r) }, prices).total ?? 0);
  }
  const regional = regionPrices(prices, plan.region).prices;
  const hourlyUsd: Record<string, number> = {};
  for (const v of spec.variants) {
    const h = variantHourly(regional, v.instanceClass, v.readers);
    if (h !== null) hourlyUsd[v.name] = h;
  }
  const config: RoundsConfig = {
    questions: namedQuestions(spec),
    minRounds: min,
    maxRounds: max,
    confidence: 0.95,
    ...(plan.backend === 'aws' && spec.budget !== undefined ? { budgetUsd: spec.budget.maxUsd } : {}),
    roundUsd,
    items,
    hourlyUsd,
  };
  await deps.backend.lake.put(lakeKeys.workflow.rounds(plan.runId), JSON.stringify(config));
}

/** The cell Map's items in plan order: the plan's duets, or each cell as a group of one. */
function mapGroups(plan: Plan): GroupRef[] {
  return plan.duets !== undefined
    ? plan.duets.map((d, index) => ({ groupId: d.cellId, index, members: d.members.map((cellId) => ({ cellId })) }))
    : plan.cells.map((c, index) => ({ groupId: c.cellId, index, members: [{ cellId: c.cellId }] }));
}
