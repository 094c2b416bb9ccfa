/** PlanRun validates and plans the spec, then writes the plan and the Map's items to the lake. */
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
  /** Notes the caller made before the workflow, kept in the manifest. */
  readonly notes?: readonly PlanNote[];
}

export interface PlanRunOutput {
  readonly run: RunContext;
  /**
   * The cell Map's items are positions only, so the parent's state grows a few bytes per cell.
   * RunCells' ItemSelector makes each the child's {group: {index}}.
   * The groups, cell plans and cell list are in the lake.
   */
  readonly items: readonly number[];
  readonly maxConcurrency: number;
  /** The round the items are, first being 1. JudgeRound follows RunCells. Absent for one pass. */
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
    // The CLI already scaled the input's spec.
    // The backend's own checks need the plan, so deps.preflight runs below.
    ({ plan } = preparePlan(
      { spec, scripts: event.scripts ?? {} },
      {
        backend: deps.backend.kind,
        writeForwarding: deps.backend.writeForwarding,
        ...(event.runId ? { runId: event.runId } : {}),
        now: deps.now(),
      },
    ));
    // Refusals stop the run. Warnings and unchecked items stay in its manifest.
    const checked = deps.preflight ? await deps.preflight(plan, spec) : [];
    const refusals = checked.filter((n) => n.level === 'refused');
    if (refusals.length > 0) throw new PlanError(refusals);
    for (const [name, body] of Object.entries(plan.scripts))
      await deps.backend.lake.put(lakeKeys.script(plan.runId, name), body);
    // The state carries references, so the Tasks read each cell's plan here.
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
    // Which group each Map item is, since the state carries only the item's position.
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
    // Under the name the ASL's Catch reports. The message is what crosses the state machine.
    if (e instanceof SpecError || e instanceof PlanError) throw new InvalidSpecError(e.message, { cause: e });
    throw e;
  }
  // Positions only. Groups are in plan order, so a group's index is its position.
  const groups = mapGroups(plan);
  if (plan.rounds !== undefined) {
    // Round by round. JudgeRound gives each next round's items.
    const first = groups.filter((g) => groupRound(plan, g) === 1).map((g) => g.index);
    return { run: runContext(plan), items: first, maxConcurrency: plan.maxConcurrency, round: 1 };
  }
  const items = groups.map((g) => g.index);
  return { run: runContext(plan), items, maxConcurrency: plan.maxConcurrency };
}

/** The round of a Map item is its first member's. */
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
