/**
 * One way to prepare a run: scale the loaded experiment, apply what the backend refuses from the
 * spec alone, and plan it. `plan`, `validate`, `run` (local, AWS, rehearsal), `preflight` and the
 * workflow's PlanRun all come through here, so what `plan` shows is what `run` does. The account
 * checks that need the plan (AWS preflight, budget) follow it; they are backend code and are called
 * with the prepared plan.
 */
import type { Spec } from '../experiment/schema';
import { scaleSpec, type Scale } from '../experiment/scale';
import { maxRepeats } from '../experiment/rounds';
import { loadSpecFile } from '../experiment/validate';
import { awsEngineRefusals } from '../experiment/engine-checks';
import { awsDataRefusals } from './data-bounds';
import { drawOrderSeed, planRun, PlanError, writeForwardingOf, type PlanOptions } from './plan';
import { prepareDeadlineS, SEGMENT_EVENTS_BUDGET, worstStepEvents } from './step-looks';
import type { Plan, PlanNote, WriteForwardingSupport } from './types';

/**
 * Step Functions: "Maximum input or output size for a task, state, or execution: 256 KiB of data as
 * a UTF-8 encoded string" (Step Functions Developer Guide, "Step Functions service quotas").
 */
const STATE_BYTES_LIMIT = 256 * 1024;

/**
 * The least the workflow's parent execution carries: PlanRun's output holds the cell Map's items,
 * each only its position (a cell's, or a duet's with order "duet"), and FinishRun's input the same
 * (the cells' results are discarded, ResultPath null, and read from the lake by run id):
 * state-machines/benchmark.asl.json, RunCells. An item costs its decimal digits and a comma, whatever
 * the names. bench/workflow-scale.js measures the real states.
 * @internal exported for its tests (a test seam)
 */
export function parentStateBytesAtLeast(plan: Plan): number {
  const items = (plan.duets ?? plan.cells).length;
  let sum = 0;
  for (let i = 0; i < items; i++) sum += String(i).length + 1;
  return sum;
}

/**
 * On AWS a plan of more cells than the parent execution's state can carry is refused before anything
 * starts: otherwise the execution would fail on the state limit. Within the limit but without 2x
 * margin: a warning. Neither happens to a plan a spec can make: its most cells (5,000) are 23,890
 * bytes of positions, under a tenth of the limit, whatever the variant names. The bound stays for a
 * spec schema that allows more.
 */
function awsWorkflowStateNotes(plan: Plan, spec: Spec): PlanNote[] {
  const items = (plan.duets ?? plan.cells).length;
  const bytes = parentStateBytesAtLeast(plan);
  const perItem = bytes / Math.max(1, items);
  const kib = (n: number) => `${Math.ceil(n / 1024)} KiB`;
  const what =
    `${plan.cells.length} cells (${spec.variants.length} variant(s) x ${maxRepeats(spec)} repeat(s)): ` +
    `the workflow's parent execution carries the position of each of its ${items} cell Map item(s), at ` +
    `least ${kib(bytes)}`;
  if (bytes > STATE_BYTES_LIMIT) {
    return [
      {
        level: 'refused',
        path: 'repeats',
        message:
          `${what}, over Step Functions' 256 KiB state limit: the execution would fail; on AWS keep an ` +
          `experiment under about ` +
          String(Math.floor(STATE_BYTES_LIMIT / perItem)) +
          ` items (fewer repeats or variants, or split it)`,
      },
    ];
  }
  if (bytes * 2 > STATE_BYTES_LIMIT) {
    return [
      {
        level: 'warning',
        path: 'repeats',
        message: `${what}, more than half of Step Functions' 256 KiB state limit (fewer cells keep it under half)`,
      },
    ];
  }
  return [];
}

/**
 * On AWS a step whose jobs, looked at until their deadline, could cost more history events than a
 * segment's budget (half of the 25,000-event history) is refused: segments (core/plan/segments.ts)
 * bound many steps together, but not one step alone. Only a huge data set gets there: a prepare's
 * deadline grows with its rows (1 s per 2,000, step-looks.ts) and RunStep looks at most every 300 s,
 * at 9 events a look, so about 830 million rows.
 */
function awsStepHistoryNotes(plan: Plan, forwarding: WriteForwardingSupport): PlanNote[] {
  let worst: { readonly events: number; readonly rows: number; readonly deadlineS: number } | undefined;
  for (const cell of plan.cells) {
    for (const step of cell.steps) {
      const events = worstStepEvents(cell, step, forwarding);
      if (events > SEGMENT_EVENTS_BUDGET && (worst === undefined || events > worst.events)) {
        worst = { events, rows: cell.data.tables * cell.data.tableSize, deadlineS: prepareDeadlineS(cell.data) };
      }
    }
  }
  if (worst === undefined) return [];
  const days = (worst.deadlineS / 86_400).toFixed(1);
  return [
    {
      level: 'refused',
      path: 'data.tableSize',
      message:
        worst.rows.toLocaleString('en-US') +
        ` rows: their prepare may run ${days} days before it is stopped, and the workflow looking at it until ` +
        `then could record ` +
        worst.events.toLocaleString('en-US') +
        ` history events for one step, more than half of Step Functions' 25,000 per execution; on AWS use ` +
        `fewer rows per cell (tables x tableSize)`,
    },
  ];
}

export interface LoadedExperiment {
  readonly spec: Spec;
  /** Custom Lua bodies by file name (from loadSpecFile). */
  readonly scripts: Readonly<Record<string, string>>;
}

export interface PreparePlanOptions extends Omit<PlanOptions, 'scripts'> {
  /** 'small' shrinks the experiment for a local rehearsal (core/experiment/scale.ts); default 'full'. */
  readonly scale?: Scale;
  /**
   * What the backend that will run it refuses from the spec alone (locally: instance classes it
   * cannot emulate, core/backends/local/preflight.ts). Passed in: planning does not import backends.
   */
  readonly backendRefusals?: (spec: Spec) => readonly PlanNote[];
  /**
   * 'refuse' (run): any refusal stops it with a PlanError naming the
   * source; 'show' (plan): the refusals are listed in the notes.
   */
  readonly refusals?: 'refuse' | 'show';
  /**
   * Narrows the scaled spec before planning, saying what it left out
   * (the AWS rehearsal drops workloads its local servers refuse).
   */
  readonly narrow?: (spec: Spec) => { readonly spec: Spec; readonly notes: readonly PlanNote[] };
}

export interface PreparedPlan {
  /** The spec as planned: scaled, and narrowed if asked. */
  readonly spec: Spec;
  readonly scripts: Readonly<Record<string, string>>;
  readonly plan: Plan;
  /** What scaling and narrowing changed: PlanRun cannot know it, so it travels with the execution input. */
  readonly preparationNotes: readonly PlanNote[];
  /**
   * Everything to tell the user, in order: scaling, narrowing, the
   * plan's own notes, and (shown, not refused) the backend's refusals.
   */
  readonly notes: readonly PlanNote[];
}

export function preparePlan(loaded: LoadedExperiment, options: PreparePlanOptions): PreparedPlan {
  const { scale = 'full', backendRefusals, refusals: onRefusal = 'refuse', narrow, ...planOptions } = options;
  const scaled = scaleSpec(loaded.spec, scale);
  // The engines the AWS backend does not provision yet are its refusals from the spec alone.
  const refused = [
    ...(planOptions.backend === 'aws' ? [...awsEngineRefusals(scaled.spec), ...awsDataRefusals(scaled.spec)] : []),
    ...(backendRefusals ? backendRefusals(scaled.spec) : []),
  ];
  if (onRefusal === 'refuse' && refused.length > 0) throw new PlanError(refused, planOptions.source);
  const narrowed = narrow ? narrow(scaled.spec) : { spec: scaled.spec, notes: [] };
  // A randomized order's seed is drawn here, into the spec the run
  // starts with: the workflow's PlanRun plans the same order from it.
  const spec =
    narrowed.spec.order === 'randomized' && narrowed.spec.orderSeed === undefined
      ? { ...narrowed.spec, orderSeed: drawOrderSeed() }
      : narrowed.spec;
  const plan = planRun(spec, { ...planOptions, scripts: loaded.scripts });
  const stateNotes =
    planOptions.backend === 'aws'
      ? [...awsWorkflowStateNotes(plan, spec), ...awsStepHistoryNotes(plan, writeForwardingOf(planOptions))]
      : [];
  const stateRefusals = stateNotes.filter((n) => n.level === 'refused');
  if (onRefusal === 'refuse' && stateRefusals.length > 0) throw new PlanError(stateRefusals, planOptions.source);
  const shown = [
    ...(onRefusal === 'show' ? refused : []),
    ...stateNotes.filter((n) => n.level !== 'refused' || onRefusal === 'show'),
  ];
  const drawn: PlanNote[] =
    spec.orderSeed !== narrowed.spec.orderSeed
      ? [
          {
            level: 'info',
            path: 'orderSeed',
            message:
              `drawn: ${spec.orderSeed} (order "randomized" without a seed); the plan and the run ` +
              `manifest record it`,
          },
        ]
      : [];
  const preparationNotes = [...scaled.notes, ...narrowed.notes, ...drawn];
  return {
    spec,
    scripts: loaded.scripts,
    plan,
    preparationNotes,
    notes: [...preparationNotes, ...plan.notes, ...shown],
  };
}

/** Load an experiment file (its custom scripts from `builtinWorkloads`) and prepare it; errors name the file. */
export function preparePlanFromFile(
  file: string,
  builtinWorkloads: string,
  options: Omit<PreparePlanOptions, 'source'>,
): PreparedPlan {
  return preparePlan(loadSpecFile(file, builtinWorkloads), { ...options, source: file });
}
