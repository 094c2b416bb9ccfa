/**
 * The workflow at scale: what a run of N steps costs in Step Functions' terms, measured by running
 * state-machines/benchmark.asl.json locally (core/workflow/local-runner.ts, aws-local-stepfunctions)
 * with the real Task functions, and mapping each local event to the history events AWS records.
 *
 * The Tasks talk to an in-process backend (bench/in-process-backend.ts: ready at the first check,
 * every job done at its second check, an in-memory lake): this measures the workflow's states and
 * data, not the database.
 *
 * For 10, 100, 1,000 and 10,000 steps, in one cell and spread over 10 cells:
 * - eventsPerStep: history events of the states that run for steps (everything nested in a cell
 *   below its own provisioning/teardown states), per step;
 * - maxChildEvents: the most history events of one child execution (a Distributed Map item);
 *   parentEvents: those of the parent execution;
 * - maxStateBytes: the largest state input or output, UTF-8 bytes;
 * - transitions and their cost at list price.
 * Limits (Step Functions Developer Guide, "Step Functions service quotas",
 * https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html):
 * - "Maximum execution history size: 25,000 events in a single state machine execution history. If
 *   the execution history reaches this quota, the execution will fail."
 * - "Maximum input or output size for a task, state, or execution: 256 KiB of data as a UTF-8
 *   encoded string" (StateEnteredEventDetails.input: "Maximum length of 262144").
 * `fits` is true when both hold with 2x margin for every execution and state.
 * Price: "$0.025 per 1,000 state transitions" (US East (N. Virginia), https://aws.amazon.com/step-functions/pricing/);
 * "each retry will be charged as an additional state transition".
 *
 * History events per state, as AWS records them: a Lambda Task 5 (TaskStateEntered, TaskScheduled,
 * TaskStarted, TaskSucceeded, TaskStateExited), each retry 3 more (TaskFailed, TaskScheduled,
 * TaskStarted; a retry is a transient error's: a step not done yet is a look round RunStep,
 * AreStepsLeft and WaitForStep); Wait, Choice, Pass, Succeed, Fail 2 (entered, exited); an inline Map 4
 * (MapStateEntered, MapStateStarted, MapStateSucceeded, MapStateExited) and 2 per iteration
 * (MapIterationStarted, MapIterationSucceeded); a Distributed Map 6 in its execution (the four
 * above plus MapRunStarted, MapRunSucceeded), and each item a child execution of its own with
 * ExecutionStarted and ExecutionSucceeded.
 *
 * Then the parent execution at the most cells a spec allows (50 variants x 100 repeats), for variant
 * names of 10 and 40 characters (the cell Map's items are positions, so the names should not show):
 * PlanRun's output, FinishRun's input, the parent's largest state and the cells' results as the
 * Map collects them, each against the 256 KiB limit with 2x margin (a row with layout "max cells").
 *
 * With `--order duet` every cell is a duet of two variants (core/workflow/tasks/group.ts: one item of the
 * cell Map, each step started on both members in one RunStep call): `steps` and `cells` count the
 * duet's steps and duets, so events per step are what one step of both members together costs.
 *
 * Run: `node dist/bench/workflow-scale.js [--json] [--sizes 10,100,1000,10000] [--layouts one,spread] [--reuse
 * cell|step] [--order interleaved|duet] [--max-cells-names
 * 10,40]` after `npm run build`. Prints figures; asserts nothing.
 */
import '../core/polyfills';
import { parseArgs } from 'node:util';
import { MAX_SWEEP_VALUES, type SpecInput } from '../core/experiment/schema';
import { allStates, loadDefinition, type AslState } from '../core/workflow/asl';
import { executeLocally, localFunctionArn, type ExecutionEvent } from '../core/workflow/local-runner';
import type { TaskDeps } from '../core/workflow/tasks/types';
import { validateSpec } from '../core/experiment/validate';
import { planRun } from '../core/plan/plan';
import { groupSegments } from '../core/plan/segments';
import { looksUntil, worstStepEvents } from '../core/plan/step-looks';
import { InProcessBenchBackend } from './in-process-backend';

const HISTORY_EVENTS_LIMIT = 25_000;
const PAYLOAD_BYTES_LIMIT = 256 * 1024;
const USD_PER_TRANSITION = 0.025 / 1000;
const MARGIN = 2;

export interface ScaleFigures {
  readonly layout: 'one cell' | 'spread' | 'max cells';
  readonly steps: number;
  readonly cells: number;
  readonly status: string;
  readonly eventsPerStep: number;
  readonly maxChildEvents: number;
  readonly childExecutions: number;
  readonly parentEvents: number;
  readonly maxStateBytes: number;
  readonly transitions: number;
  readonly costUsd: number;
  readonly fits: boolean;
  readonly seconds: number;
}

interface Tally {
  events: number;
  transitions: number;
  stepEvents: number;
}

interface DefinitionShape {
  readonly states: ReadonlyMap<string, AslState>;
  readonly distributed: ReadonlySet<string>;
  /**
   * For each state inside a Distributed Map's item processor, that (innermost) Map: its child execution runs the state.
   */
  readonly owner: ReadonlyMap<string, string>;
  /** States of a cell's own execution (provisioning, teardown...): not per-step. */
  readonly cellLevel: ReadonlySet<string>;
  /** The states that end a cell's execution: their output is the cell's result, which the cell Map collects. */
  readonly cellEnds: ReadonlySet<string>;
}

const isDistributed = (st: AslState) =>
  (st.ItemProcessor as { ProcessorConfig?: { Mode?: string } } | undefined)?.ProcessorConfig?.Mode === 'DISTRIBUTED';

function shapeOf(definition: Record<string, unknown>): DefinitionShape {
  const states = allStates(definition);
  const distributed = new Set([...states].filter(([, st]) => isDistributed(st)).map(([name]) => name));
  const owner = new Map<string, string>();
  const walk = (inner: Record<string, AslState>, enclosing: string | undefined) => {
    for (const [name, st] of Object.entries(inner)) {
      if (enclosing !== undefined) owner.set(name, enclosing);
      if (st.ItemProcessor) walk(st.ItemProcessor.States, distributed.has(name) ? name : enclosing);
    }
  };
  const top = definition['States'] as Record<string, AslState>;
  walk(top, undefined);
  const cellsMap = Object.keys(top).find((name) => distributed.has(name));
  if (cellsMap === undefined) throw new Error('the definition has no top-level Distributed Map over cells');
  const cellStates = top[cellsMap]!.ItemProcessor!.States;
  return {
    states,
    distributed,
    owner,
    cellLevel: new Set(Object.keys(cellStates)),
    cellEnds: new Set(
      Object.entries(cellStates)
        .filter(([, st]) => (st as { End?: boolean }).End === true)
        .map(([name]) => name),
    ),
  };
}

const bytes = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value), 'utf8'));

/** AWS history events of entering (and leaving) one state. */
function eventsOfState(st: AslState, distributed: boolean): number {
  if (st.Type === 'Task') return 5;
  if (st.Type === 'Map') return distributed ? 6 : 4;
  return 2;
}

/**
 * Attributes the local events to executions as AWS runs them: the parent, and one child per item
 * of a Distributed Map. aws-local-stepfunctions runs an item as a nested execution and forwards its
 * events out of order with the next item's, so a child is told by what its states carry: the cell's
 * position (every state of a cell has it in its input: the Map item, then the cell's header) and, in a
 * cell's step segments, the segment.
 */
class HistoryCounter {
  readonly parent: Tally = { events: 2, transitions: 0, stepEvents: 0 };
  readonly children = new Map<string, Tally>();
  maxStateBytes = 0;
  /** The parent execution's largest state input or output (its own states, not a child's). */
  maxParentStateBytes = 0;
  planRunOutputBytes = 0;
  finishRunInputBytes = 0;
  /**
   * What the cell Map collects of its children's results (a JSON
   * array of each cell's final output), before its ResultPath.
   */
  collectedResultBytes = 2;

  constructor(private readonly shape: DefinitionShape) {}

  private executionOf(stateName: string, input: unknown): { tally: Tally; perStep: boolean } {
    const map = this.shape.owner.get(stateName);
    if (map === undefined) return { tally: this.parent, perStep: false };
    const data = input as { group?: { index?: number }; segment?: { from?: number } } | undefined;
    const key = `${map}|${data?.group?.index ?? '?'}|${data?.segment?.from ?? ''}`;
    let tally = this.children.get(key);
    // A child execution's own ExecutionStarted and ExecutionSucceeded.
    const nested = data?.segment !== undefined;
    if (!tally) this.children.set(key, (tally = { events: 2, transitions: 0, stepEvents: nested ? 2 : 0 }));
    return { tally, perStep: nested || !this.shape.cellLevel.has(stateName) };
  }

  private add(stateName: string, input: unknown, events: number, transitions: number) {
    const { tally, perStep } = this.executionOf(stateName, input);
    tally.events += events;
    tally.transitions += transitions;
    if (perStep) tally.stepEvents += events;
  }

  onEvent(ev: ExecutionEvent): void {
    const parentState = (ev as { parentState?: { name: string; input?: unknown } }).parentState;
    const name = ev.state?.name;
    switch (ev.type) {
      case 'MapIterationStarted':
        // An inline Map's iteration (a Distributed Map's item is a child execution, counted above).
        if (parentState !== undefined && !this.shape.distributed.has(parentState.name)) {
          const { tally } = this.executionOf(parentState.name, parentState.input);
          tally.events += 2;
          tally.stepEvents += 2;
        }
        return;
      case 'StateEntered': {
        const st = this.shape.states.get(name ?? '');
        if (!st || name === undefined) return;
        this.add(name, ev.state?.input, eventsOfState(st, this.shape.distributed.has(name)), 1);
        const size = bytes(ev.state?.input);
        this.maxStateBytes = Math.max(this.maxStateBytes, size);
        if (!this.shape.owner.has(name)) this.maxParentStateBytes = Math.max(this.maxParentStateBytes, size);
        if (name === 'FinishRun') this.finishRunInputBytes = size;
        return;
      }
      case 'StateExited': {
        const size = bytes(ev.state?.output);
        this.maxStateBytes = Math.max(this.maxStateBytes, size);
        if (name !== undefined && !this.shape.owner.has(name))
          this.maxParentStateBytes = Math.max(this.maxParentStateBytes, size);
        if (name === 'PlanRun') this.planRunOutputBytes = size;
        // Each cell's final output, with the comma between array elements.
        if (name !== undefined && this.shape.cellEnds.has(name))
          this.collectedResultBytes += size + (this.collectedResultBytes > 2 ? 1 : 0);
        return;
      }
      case 'StateRetried':
        if (name !== undefined) this.add(name, ev.state?.input, 3, 1);
        return;
      default:
        return;
    }
  }
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

type MeasuredOrder = 'interleaved' | 'duet';

/** The measured spec's variants: one, or a duet's two members (two variants of each round, run as one item). */
function measuredVariants(order: MeasuredOrder): SpecInput['variants'] {
  return order === 'duet'
    ? [
        { name: 'a', instanceClass: 'db.r6g.large', readers: 0 },
        { name: 'b', instanceClass: 'db.r6g.large', readers: 0 },
      ]
    : [{ name: 'v', instanceClass: 'db.r6g.large', readers: 0 }];
}
function specOf(steps: number, cells: number, reuse: 'cell' | 'step', order: MeasuredOrder): SpecInput {
  const perCell = steps / cells;
  const threadCount = Math.min(MAX_SWEEP_VALUES, perCell);
  if (!Number.isInteger(perCell) || perCell % threadCount !== 0 || perCell / threadCount > MAX_SWEEP_VALUES) {
    throw new Error(
      `${steps} steps over ${cells} cells: a cell takes 1 to 100 steps, or a multiple of 100 up to 10,000`,
    );
  }
  return {
    name: `scale-${steps}x${cells}`,
    engine: { version: '3.04.0' },
    variants: measuredVariants(order),
    repeats: cells,
    maxConcurrency: 1,
    ...(order === 'duet' ? { order } : {}),
    data: { tables: 1, tableSize: 1000, prepareThreads: 1, reuse },
    defaults: { durationS: 1, warmupS: 0, reportIntervalS: 1 },
    // A spec lists at most 100 thread counts and 100 rates per workload (MAX_SWEEP_VALUES): one step per pair.
    workloads: [
      { name: 'rw', test: 'oltp_read_write', threads: range(threadCount), rates: range(perCell / threadCount) },
    ],
  };
}

export async function measure(
  steps: number,
  layout: 'one cell' | 'spread',
  reuse: 'cell' | 'step' = 'cell',
  order: MeasuredOrder = 'interleaved',
): Promise<ScaleFigures> {
  const cells = layout === 'one cell' ? 1 : Math.min(10, steps);
  const { figures } = await measureSpec(specOf(steps, cells, reuse, order), layout, steps, cells);
  return figures;
}

async function measureSpec(
  spec: SpecInput,
  layout: ScaleFigures['layout'],
  steps: number,
  cells: number,
): Promise<{ figures: ScaleFigures; counter: HistoryCounter }> {
  const backend = new InProcessBenchBackend();
  const deps: TaskDeps = {
    backend,
    now: () => new Date(),
    toolVersion: 'bench',
    gitSha: null,
    serverVersion: null,
    readyTimeoutS: 3600,
    // The bench counts the state machine's events and state; judging reads a lake's history, which
    // this in-memory backend does not keep: ComputeVerdicts runs with no verdicts to write.
    judgeRun: () => Promise.resolve([]),
  };
  const counter = new HistoryCounter(shapeOf(loadDefinition(localFunctionArn)));
  const started = process.hrtime.bigint();
  const result = await executeLocally({
    deps,
    input: { spec },
    pollMs: 0,
    retryMs: 0,
    onEvent: (ev) => counter.onEvent(ev),
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const children = [...counter.children.values()];
  const all = [counter.parent, ...children];
  const transitions = all.reduce((a, t) => a + t.transitions, 0);
  const stepEvents = all.reduce((a, t) => a + t.stepEvents, 0);
  const maxChildEvents = Math.max(0, ...children.map((c) => c.events));
  const fits =
    result.status === 'SUCCEEDED' &&
    Math.max(maxChildEvents, counter.parent.events) * MARGIN <= HISTORY_EVENTS_LIMIT &&
    counter.maxStateBytes * MARGIN <= PAYLOAD_BYTES_LIMIT;
  const figures: ScaleFigures = {
    layout,
    steps,
    cells,
    status:
      result.status === 'SUCCEEDED'
        ? 'SUCCEEDED'
        : `${result.status}: ${result.error ?? ''} ${(result.cause ?? '').split('\n')[0]}`,
    eventsPerStep: Math.round((stepEvents / steps) * 10) / 10,
    maxChildEvents,
    childExecutions: children.length,
    parentEvents: counter.parent.events,
    maxStateBytes: counter.maxStateBytes,
    transitions,
    costUsd: Math.round(transitions * USD_PER_TRANSITION * 10000) / 10000,
    fits,
    seconds: Math.round(seconds * 10) / 10,
  };
  return { figures, counter };
}

/**
 * The parent execution's largest state at the most cells a spec allows (50 variants x 100 repeats,
 * one 1-second step each), measured by running the real definition with the in-process backend:
 * PlanRun's output (the cell Map's items), FinishRun's input, the largest state of the parent's own
 * states, and what the cell Map collects of its children's results before its ResultPath (on AWS a
 * Distributed Map's collected results count against the same limit unless written elsewhere).
 */
export interface MaxCellsFigures extends ScaleFigures {
  readonly variantNameLength: number;
  readonly planOutputBytes: number;
  readonly finishInputBytes: number;
  readonly maxParentStateBytes: number;
  readonly collectedResultBytes: number;
}

export async function parentStateAtMaxCells(
  variants: number,
  repeats: number,
  variantNameLength = 10,
): Promise<MaxCellsFigures> {
  const spec: SpecInput = {
    name: `cells-${variants}x${repeats}`,
    engine: { version: '3.04.0' },
    // "variant-01" by default; a longer length pads the name with "x" (a spec allows 40 characters).
    variants: Array.from({ length: variants }, (_, i) => ({
      name: `variant-${String(i + 1).padStart(2, '0')}`.padEnd(variantNameLength, 'x'),
      instanceClass: 'db.r6g.large',
      readers: 0,
    })),
    repeats,
    maxConcurrency: 40,
    data: { tables: 1, tableSize: 1000, prepareThreads: 1 },
    defaults: { durationS: 1, warmupS: 0, reportIntervalS: 1 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1] }],
  };
  const cells = variants * repeats;
  const { figures, counter } = await measureSpec(spec, 'max cells', cells, cells);
  const parentWorst = Math.max(counter.maxParentStateBytes, counter.collectedResultBytes);
  return {
    ...figures,
    variantNameLength,
    planOutputBytes: counter.planRunOutputBytes,
    finishInputBytes: counter.finishRunInputBytes,
    maxParentStateBytes: counter.maxParentStateBytes,
    collectedResultBytes: counter.collectedResultBytes,
    fits: figures.fits && parentWorst * MARGIN <= PAYLOAD_BYTES_LIMIT,
  };
}

/**
 * History events of looking at a prepare until its deadline (jobDeadlineS: rows / 2,000 s), from the
 * definition's poll loop: each look goes round RunStep, AreStepsLeft and WaitForStep (a Task's 5, a
 * Choice's 2, a Wait's 2), once per look that finds the jobs running (step-looks.ts looksUntil, the
 * waits backing off to 300 s) and once more for the look that finds them done. Undefined when the
 * definition has no such loop.
 */
function preparePollEvents(definition: Record<string, unknown>, rows: number): number | undefined {
  const states = allStates(definition) as Map<string, AslState & { Next?: string; Default?: string }>;
  const runStep = states.get('RunStep');
  const choice = states.get(runStep?.Next ?? '');
  const wait = states.get(choice?.Default ?? '');
  if (runStep === undefined || choice?.Type !== 'Choice' || wait?.Type !== 'Wait' || wait.Next !== 'RunStep')
    return undefined;
  const perLook = [runStep, choice, wait].reduce((sum, st) => sum + eventsOfState(st, false), 0);
  const deadlineS = Math.max(600, Math.ceil(rows / 2000));
  return perLook * (looksUntil(deadlineS) + 1);
}

/**
 * A cell (or, with order "duet", a duet of two variants) of `steps` steps with data.reuse "step"
 * over `rows` rows (100 tables): how its steps are split into segments (core/plan/segments.ts) and
 * the most history events a segment's execution can record when every step's runner jobs (its
 * prepare and run) are looked at until their deadline (a duet's step: its costliest member's).
 */
function worstSegments(
  steps: number,
  rows: number,
  order: MeasuredOrder = 'interleaved',
): { segments: number; maxSegmentEvents: number } {
  const threadCount = Math.min(MAX_SWEEP_VALUES, steps);
  const spec: SpecInput = {
    name: 'worst-segments',
    engine: { version: '3.04.0' },
    variants: measuredVariants(order),
    ...(order === 'duet' ? { order } : {}),
    data: { tables: 100, tableSize: rows / 100, prepareThreads: 1, reuse: 'step' },
    defaults: { durationS: 60, warmupS: 0, reportIntervalS: 1 },
    workloads: [
      { name: 'rw', test: 'oltp_read_write', threads: range(threadCount), rates: range(steps / threadCount) },
    ],
  };
  const plan = planRun(validateSpec(spec), { backend: 'aws', runId: 'worst-segments' });
  const members = order === 'duet' ? plan.cells.filter((c) => c.duet === plan.duets![0]!.cellId) : [plan.cells[0]!];
  const segments = groupSegments(members, 'native');
  const worstOf = (i: number) => Math.max(...members.map((cell) => worstStepEvents(cell, cell.steps[i]!, 'native')));
  // ExecutionStarted/Succeeded and SegmentDone besides the steps.
  const own = 4;
  const events = segments.map(
    (seg) => own + range(seg.to - seg.from).reduce((sum, k) => sum + worstOf(seg.from + k - 1), 0),
  );
  return { segments: segments.length, maxSegmentEvents: Math.max(...events) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      sizes: { type: 'string', default: '10,100,1000,10000' },
      layouts: { type: 'string', default: 'one,spread' },
      // data.reuse of the measured spec: 'step' prepares afresh before every step (a prepare phase per step).
      reuse: { type: 'string', default: 'cell' },
      // The spec's order: 'duet' makes every cell a duet of two variants (its steps start on both together).
      order: { type: 'string', default: 'interleaved' },
      // The parent's state at the most cells a spec allows, with variant names of these lengths ('' skips it).
      'max-cells-names': { type: 'string', default: '10,40' },
    },
  });
  if (values.reuse !== 'cell' && values.reuse !== 'step') throw new Error(`--reuse ${values.reuse}: cell or step`);
  const reuse = values.reuse;
  if (values.order !== 'interleaved' && values.order !== 'duet')
    throw new Error(`--order ${values.order}: interleaved or duet`);
  const order = values.order;
  const sizes = values.sizes.split(',').map(Number);
  const layouts = values.layouts.split(',').map((l) => (l === 'one' ? ('one cell' as const) : ('spread' as const)));
  const rows: (ScaleFigures | MaxCellsFigures)[] = [];
  for (const steps of sizes) {
    for (const layout of layouts) {
      if (layout === 'spread' && steps <= 10) continue;
      const row = await measure(steps, layout, reuse, order);
      rows.push(row);
      if (!values.json) {
        console.log(
          `${String(steps).padStart(6)} steps, ${String(row.cells).padStart(2)} ` +
            (order === 'duet' ? 'duet(s)' : 'cell(s)') +
            `: ${row.eventsPerStep} events/step, max child ${row.maxChildEvents} events ` +
            `(parent ${row.parentEvents}), ` +
            `largest state ${row.maxStateBytes} B, ${row.transitions} transitions ($${row.costUsd}), fits with ` +
            `2x: ${row.fits} [${row.status}, ${row.seconds} s]`,
        );
      }
    }
  }
  const nameLengths = values['max-cells-names'] === '' ? [] : values['max-cells-names'].split(',').map(Number);
  for (const length of nameLengths) {
    const maxCells = await parentStateAtMaxCells(50, 100, length);
    rows.push(maxCells);
    if (!values.json) {
      console.log(
        `${maxCells.cells} cells (50 variants x 100 repeats, the most a spec allows; ${length}-character ` +
          `variant names): PlanRun output ${maxCells.planOutputBytes} B, ` +
          `FinishRun input ${maxCells.finishInputBytes} B, largest parent ` +
          `state ${maxCells.maxParentStateBytes} B, the cells' results as the Map collects ` +
          `them ${maxCells.collectedResultBytes} B ` +
          `(limit ${PAYLOAD_BYTES_LIMIT}), fits with 2x: ${maxCells.fits} [${maxCells.status}, ${maxCells.seconds} s]`,
      );
    }
  }
  if (values.json) console.log(JSON.stringify(rows, null, 2));
  else {
    const events = preparePollEvents(loadDefinition(localFunctionArn), 100_000_000);
    console.log(
      events === undefined
        ? 'a prepare of 100M rows polled to its 50,000 s deadline: the definition has no ' +
            'RunStep/AreStepsLeft/WaitForStep loop'
        : `a prepare of 100M rows polled to its 50,000 s deadline: ${events} history events in its segment's ` +
            `execution (limit ${HISTORY_EVENTS_LIMIT})`,
    );
    const worst = worstSegments(1000, 100_000_000, order);
    console.log(
      `1,000 steps` +
        (order === 'duet' ? ' of a duet' : '') +
        ` with data.reuse step over 100M rows, every prepare and run looked at until its ` +
        `deadline: ${worst.segments} segments, at most ${worst.maxSegmentEvents} history events each ` +
        `(limit ${HISTORY_EVENTS_LIMIT})`,
    );
  }
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
