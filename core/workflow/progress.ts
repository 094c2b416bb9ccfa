/**
 * The progress lines of a run, one per thing a user cares about while it goes.
 * One formatter serves every way a run is followed.
 * HistoryProgress turns an AWS execution's history into the local runner's event shape.
 */
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { etaText, RunEta } from '../plan/eta';
import type { Plan } from '../plan/types';
import type { ExecutionEvent } from './local-runner';
import { STATE } from './state-names';
import type { ComputeVerdictsOutput } from './tasks/compute-verdicts';
import type { StepSummary } from './tasks/step-summary';
import type { GroupHeader, MemberHeader } from './tasks/group';
import type { RunStepOutput, StepOutcome } from './tasks/step-types';

/** The local runner's ExecutionEvent, or a history event made into one. */
export type ProgressEvent = Pick<ExecutionEvent, 'type' | 'state' | 'Error' | 'Cause' | 'retry'> & {
  /** A Distributed Map run started. Only on AWS, where cells run as child executions. */
  readonly mapRunArn?: string;
};

/** The state input fields the lines use. On AWS they come from JSON, so each may be missing. */
interface StateInput {
  group?: Partial<Omit<GroupHeader, 'members'>> & {
    members?: readonly (Partial<Omit<MemberHeader, 'variant' | 'data'>> & {
      variant?: Partial<MemberHeader['variant']>;
      data?: Partial<MemberHeader['data']>;
    })[];
  };
}
type GroupInState = StateInput['group'];
/** RunStep's output as far as the lines use it. */
type StepOutput = Partial<RunStepOutput>;

/** A duet's lines name the members. A group of one speaks as its cell. */
const several = (group: GroupInState): boolean => (group?.members?.length ?? 0) > 1;

/**
 * The first line of a failure's Cause.
 * States Language makes a Fail state's Cause a string. A local Task's thrown value can carry any JSON.
 * A progress line must never be what stops a run.
 */
function firstLine(cause: unknown): string {
  const text = typeof cause === 'string' ? cause : cause === undefined || cause === null ? '' : JSON.stringify(cause);
  return text.split('\n')[0] ?? '';
}

function fmt(n: number | null | undefined, digits = 1): string {
  return n === null || n === undefined
    ? '-'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

const known = (v: string | number | undefined | null): string => (v === undefined || v === null ? '?' : `${v}`);

/** What WaitForLateMetrics waits for, from CollectLateMetrics' answer in its input. */
function lateMetricsWait(input: unknown): string {
  const late = (input as { lateMetrics?: { waitS?: number; incompleteSteps?: number } } | undefined)?.lateMetrics;
  return (
    `waiting ${late?.waitS ?? '?'} s for the last CloudWatch/Performance Insights datapoints ` +
    `of ${late?.incompleteSteps ?? '?'} step(s)`
  );
}

/**
 * A group's id as the lines show it.
 * Before provisioning the state names the group only by position, so the plan's item at that position counts.
 */
function groupIdOf(
  group: GroupInState,
  itemId: ((index: number) => string | undefined) | undefined,
): string | undefined {
  if (group?.groupId !== undefined) return group.groupId;
  return group?.index === undefined ? undefined : itemId?.(group.index);
}

/**
 * The line an event prints, if any.
 * itemId names the cell Map's item at a position, since states before provisioning carry only that.
 */
export function progressLine(
  ev: ProgressEvent,
  cellCount: () => number,
  itemId?: (index: number) => string | undefined,
): string | undefined {
  const input = (ev.state?.input ?? {}) as StateInput;
  const group = input.group;
  const id = groupIdOf(group, itemId);
  const tag = group
    ? `[${group.index === undefined ? '?' : group.index + 1}/${cellCount()}${id === undefined ? '' : ` ${id}`}]`
    : '';
  const name = ev.state?.name;
  if (ev.type === 'StateEntered') {
    switch (name) {
      case STATE.ProvisionCell:
        // What is provisioned is said once it is read below.
        return `${tag} provisioning`;
      case STATE.TeardownCell:
      case STATE.TeardownCellOnError:
        return `${tag} tearing down`;
      case STATE.WaitForLateMetrics:
        return `${tag} ${lateMetricsWait(ev.state?.input)}`;
      default:
        return undefined;
    }
  }
  if (ev.type === 'StateExited' && name === STATE.ProvisionCell) {
    const out = ev.state?.output as
      { group?: GroupInState; resources?: { notes?: { level: string; path: string; message: string }[] } } | undefined;
    const g = out?.group;
    const first = g?.members?.[0];
    const lines = [
      several(g)
        ? `${tag} duet of ${(g?.members ?? []).map((m) => known(m.cellId)).join(' + ')}: ${known(g?.stepCount)} ` +
          `step(s), each started on all ${g?.members?.length} at once`
        : `${tag} ${known(first?.variant?.instanceClass)} writer + ${known(first?.variant?.readers)} ` +
          `reader(s), ${known(g?.stepCount)} step(s)`,
    ];
    // Notes are said once per variant, not for every repeat.
    const notes = out?.resources?.notes ?? [];
    if (first?.repeat === 1) lines.push(...notes.map((n) => `${tag} [${n.level}] ${n.path}: ${n.message}`));
    return lines.join('\n');
  }
  if (ev.type === 'StateExited' && name === STATE.RunStep) {
    const out = (ev.state?.output as { step?: StepOutput } | undefined)?.step;
    if (!out) return undefined;
    const lines: string[] = [];
    for (const m of out.collected ?? [])
      lines.push(outcomeLine(several(group) ? `${tag} ${m.cellId}` : tag, m.outcome));
    // A run that prepares first says both, the prepare first.
    const data = group?.members?.[0]?.data;
    if (out.started?.phase === 'prepare' || out.started?.withPrepare === true)
      lines.push(
        several(group)
          ? `${tag} preparing the data of each member`
          : `${tag} preparing ${known(data?.tables)} x ${data?.tableSize?.toLocaleString('en-US') ?? '?'} rows`,
      );
    const together =
      several(group) && typeof out.startSpreadMs === 'number'
        ? `, started on ${group?.members?.length} variants within ${out.startSpreadMs} ms`
        : '';
    if (out.started?.phase === 'run') lines.push(`${tag} ${stepLine(out.started.step, group?.stepCount)}${together}`);
    return lines.length > 0 ? lines.join('\n') : undefined;
  }
  if (ev.type === 'StateExited' && name === STATE.ComputeVerdicts) return verdictsLine(ev.state?.output);
  // After each round: what is resolved and what the next round costs.
  if (ev.type === 'StateExited' && name === STATE.JudgeRound) {
    const summary = (ev.state?.output as { summary?: unknown } | undefined)?.summary;
    return typeof summary === 'string' ? `rounds: ${summary}` : undefined;
  }
  // A look at a step still running printed no line above.
  // A retry is a transient error, worth a line as any state's.
  if (ev.type === 'StateRetried') return `${tag} ${name} failed, retrying (attempt ${ev.retry?.attempt ?? '?'})`;
  if (ev.type === 'StateFailed' && name !== undefined) {
    return `${tag} ${name} failed: ${ev.Error}: ${firstLine(ev.Cause)}`;
  }
  // The cells' Map Run. A cell's steps' Map Run is said by its step lines.
  if (ev.type === 'MapRunStarted')
    return name === STATE.RunStepSegments ? undefined : `cells started as map run ${ev.mapRunArn ?? ''}`;
  return undefined;
}

/**
 * The progress lines of one run, with the run's ETA on each line that starts a step.
 * The ETA follows the cells through the same events.
 * Feed one instance every event of the run in order.
 */
export class RunProgressLines {
  private readonly eta: RunEta;

  constructor(
    private readonly plan: Pick<Plan, 'backend' | 'cells' | 'maxConcurrency' | 'duets'>,
    private readonly now: () => number = Date.now,
  ) {
    this.eta = new RunEta(plan);
  }

  /** The ETA as of now, such as "ETA 2 h 10 min (about 03:10 UTC), 0 of 12 steps done". */
  etaLine(): string {
    return etaText(this.eta, this.now());
  }

  /** The id of the cell Map's item at a position. */
  private readonly itemId = (index: number): string | undefined => (this.plan.duets ?? this.plan.cells)[index]?.cellId;

  line(ev: ProgressEvent): string | undefined {
    const groupId = groupIdOf((ev.state?.input as StateInput | undefined)?.group, this.itemId);
    const name = ev.state?.name;
    const out =
      ev.type === 'StateExited' && name === STATE.RunStep
        ? (ev.state?.output as { step?: StepOutput } | undefined)?.step
        : undefined;
    if (groupId !== undefined) {
      if (ev.type === 'StateEntered' && name === STATE.ProvisionCell) this.eta.itemStarted(groupId, this.now());
      if (out && (out.collected ?? []).length > 0) this.eta.stepDone(groupId, this.now());
      if (
        (ev.type === 'StateExited' && (name === STATE.TeardownCell || name === STATE.TeardownCellOnError)) ||
        (ev.type === 'StateEntered' && name === STATE.TeardownFailed)
      ) {
        this.eta.itemFinished(groupId);
      }
    }
    const text = progressLine(ev, () => this.plan.duets?.length ?? this.plan.cells.length, this.itemId);
    return text !== undefined && out?.started?.phase === 'run' ? `${text} · ${etaText(this.eta, this.now())}` : text;
  }
}

/** What ComputeVerdicts found, or why it could not. */
function verdictsLine(output: unknown): string | undefined {
  const state = output as
    { verdicts?: Partial<ComputeVerdictsOutput>; verdictsError?: { Error?: string; Cause?: string } } | undefined;
  const v = state?.verdicts;
  if (v?.verdicts === undefined) {
    const e = state?.verdictsError;
    return e ? `verdicts not computed: ${e.Error ?? 'error'}: ${firstLine(e.Cause)}` : undefined;
  }
  const counts =
    `${v.regressed ?? 0} regressed, ${v.improved ?? 0} improved, ${v.withinNoise ?? 0} within the ` +
    `noise, ${v.unknown ?? 0} noise unknown, ${v.notJudged ?? 0} not judged`;
  const list =
    (v.regressions ?? []).length > 0 ? `\n  REGRESSED: ${(v.regressions ?? []).join('\n  REGRESSED: ')}` : '';
  return `verdicts against the experiment's history: ${counts}${list}`;
}

function outcomeLine(tag: string, out: StepOutcome): string {
  if (out.status === 'ok') return `${tag}   ok: ${fmt(out.tps)} tps, ${fmt(out.qps)} qps`;
  if (out.status === 'overloaded')
    return (
      `${tag}   overloaded (offered > capacity): achieved ${fmt(out.tps)} tps before sysbench's event ` + `queue filled`
    );
  if (out.status === 'skipped') return `${tag}   ${out.error ?? 'skipped'}`;
  return `${tag}   FAILED: ${out.error}`;
}

function stepLine(s: StepSummary, stepCount: number | undefined): string {
  const rate = s.rate > 0 ? `, ${s.rate}/s offered` : '';
  return (
    `step ${s.index + 1}/${known(stepCount)} ${s.stepId}: ${known(s.test ?? s.script?.name)} ` +
    `on ${s.target}, ${s.threads} threads x ${s.clients} ` +
    `client(s)${rate}, ${s.warmupS ? `${s.warmupS}s warm-up + ` : ''}${s.durationS}s`
  );
}

function parsed(json: string | undefined): unknown {
  if (json === undefined) return undefined;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    // Not JSON. The line goes without its fields rather than ending the follower.
    return undefined;
  }
}

/**
 * Turns an AWS execution's history events, oldest first, into ProgressEvents.
 * A history's StateExited lacks the input and a TaskFailed the state name.
 * Both come from the state last entered, as the local runner's events carry them.
 */
export class HistoryProgress {
  private readonly inputs = new Map<string, unknown>();
  private lastEntered: { name: string; input: unknown } | undefined;

  toProgressEvent(ev: HistoryEvent): ProgressEvent | undefined {
    const entered = ev.stateEnteredEventDetails;
    if (entered?.name !== undefined) {
      const input = parsed(entered.input);
      this.inputs.set(entered.name, input);
      this.lastEntered = { name: entered.name, input };
      return {
        type: 'StateEntered',
        state: { name: entered.name, type: (ev.type ?? '').replace(/StateEntered$/, ''), input },
      };
    }
    const exited = ev.stateExitedEventDetails;
    if (exited?.name !== undefined) {
      return {
        type: 'StateExited',
        state: {
          name: exited.name,
          type: (ev.type ?? '').replace(/StateExited$/, ''),
          input: this.inputs.get(exited.name),
          output: parsed(exited.output),
        },
      };
    }
    const failed = ev.taskFailedEventDetails;
    if (failed) {
      return {
        type: 'StateFailed',
        ...(this.lastEntered
          ? { state: { name: this.lastEntered.name, type: 'Task', input: this.lastEntered.input } }
          : {}),
        ...(failed.error !== undefined ? { Error: failed.error } : {}),
        ...(failed.cause !== undefined ? { Cause: failed.cause } : {}),
      };
    }
    if (ev.mapRunStartedEventDetails) {
      // Named by the Map state last entered, as its MapStateEntered comes just before.
      return {
        type: 'MapRunStarted',
        ...(this.lastEntered
          ? { state: { name: this.lastEntered.name, type: 'Map', input: this.lastEntered.input } }
          : {}),
        ...(ev.mapRunStartedEventDetails.mapRunArn ? { mapRunArn: ev.mapRunStartedEventDetails.mapRunArn } : {}),
      };
    }
    return undefined;
  }
}
