/**
 * The one way to prepare a run, so what `plan` shows is what `run` does.
 * Account checks that need the plan follow it in backend code.
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
 * Step Functions limits a state's input or output to 256 KiB.
 * See Step Functions Developer Guide, "Step Functions service quotas".
 */
const STATE_BYTES_LIMIT = 256 * 1024;

/**
 * The least the workflow's parent execution carries.
 * Each Map item holds only its position, and the results are read from the lake by run id.
 * An item costs its decimal digits and a comma, whatever the names.
 * bench/workflow-scale.js measures the real states.
 * @internal Exported for its tests.
 */
export function parentStateBytesAtLeast(plan: Plan): number {
  const items = (plan.duets ?? plan.cells).length;
  let sum = 0;
  for (let i = 0; i < items; i++) sum += String(i).length + 1;
  return sum;
}

/**
 * On AWS a plan whose cells overflow the parent execution's state is refused before anything starts.
 * Otherwise the execution would fail on the state limit. Within 2x of the limit it warns.
 * A spec's most cells need under a tenth of the limit. The bound stays for a schema that allows more.
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
 * On AWS a step that could cost more history events than a segment's budget is refused.
 * Segments bound many steps together, but not one step alone.
 * Only a huge data set gets there, about 830 million rows.
 * A prepare's deadline grows with its rows, and RunStep looks at most every 300 s.
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
  /** Custom Lua bodies by file name. */
  readonly scripts: Readonly<Record<string, string>>;
}

export interface PreparePlanOptions extends Omit<PlanOptions, 'scripts'> {
  /** 'small' shrinks the experiment for a local rehearsal. Default 'full'. */
  readonly scale?: Scale;
  /**
   * What the running backend refuses from the spec alone.
   * It is passed in, because planning does not import backends.
   */
  readonly backendRefusals?: (spec: Spec) => readonly PlanNote[];
  /**
   * 'refuse' stops a run at any refusal with a PlanError naming the source.
   * 'show' lists the refusals in the notes, for `plan`.
   */
  readonly refusals?: 'refuse' | 'show';
  /**
   * Narrows the scaled spec before planning, saying what it left out.
   * The AWS rehearsal drops workloads its local servers refuse.
   */
  readonly narrow?: (spec: Spec) => { readonly spec: Spec; readonly notes: readonly PlanNote[] };
}

export interface PreparedPlan {
  /** The spec as planned, scaled and narrowed if asked. */
  readonly spec: Spec;
  readonly scripts: Readonly<Record<string, string>>;
  readonly plan: Plan;
  /** What scaling and narrowing changed. PlanRun cannot know it, so it travels with the execution input. */
  readonly preparationNotes: readonly PlanNote[];
  /**
   * Everything to tell the user, in order.
   * The backend's refusals come last, shown but not refused.
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
  // A randomized order's seed is drawn into the spec here, so PlanRun plans the same order.
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

/** Load an experiment file and prepare it. Errors name the file. */
export function preparePlanFromFile(
  file: string,
  builtinWorkloads: string,
  options: Omit<PreparePlanOptions, 'source'>,
): PreparedPlan {
  return preparePlan(loadSpecFile(file, builtinWorkloads), { ...options, source: file });
}
