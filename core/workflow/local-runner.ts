/**
 * Runs state-machines/benchmark.asl.json locally with aws-local-stepfunctions.
 * It is the definition the stack deploys, its Tasks bound to the functions the Lambda handlers run.
 * Waits shrink to a poll interval and retries to a retry interval.
 */
import '../polyfills';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { StateMachine } from 'aws-local-stepfunctions';
import { allStates, loadDefinition } from './asl';
import { STATE } from './state-names';
import { TASK_NAMES, type TaskName } from './task-names';
import { bindTasks } from './task-registry';
import type { FinishRunOutput } from './tasks/finish-run';
import type { PlanRunEvent } from './tasks/plan-run';
import type { TaskDeps } from './tasks/types';

/** The fake ARN a placeholder becomes locally. It names the task so bindings can be checked. */
export function localFunctionArn(task: TaskName): string {
  return `arn:aws:lambda:us-east-1:000000000000:function:aurora-bench-${task}`;
}

type LocalHandler = (event: unknown) => Promise<unknown>;

export interface ExecutionEvent {
  readonly type: string;
  readonly timestamp: number;
  readonly state?: {
    readonly name: string;
    readonly type: string;
    readonly input?: unknown;
    readonly output?: unknown;
  };
  readonly Error?: string;
  readonly Cause?: string;
  readonly index?: number;
  readonly parentState?: { readonly name: string };
  readonly retry?: { readonly attempt: number };
}

export interface LocalExecutionOptions {
  readonly deps: TaskDeps;
  readonly input: PlanRunEvent;
  /** Every Wait state becomes this many ms, since the local backend's polls are cheap. */
  readonly pollMs?: number;
  /** Pause before a Retry, ms. */
  readonly retryMs?: number;
  readonly onEvent?: (event: ExecutionEvent) => void;
  readonly signal?: AbortSignal;
  /**
   * A definition whose Task resources are already real ARNs, with the task each ARN stands for.
   * The synthesized template's DefinitionString is one. By default the placeholders become localFunctionArn.
   */
  readonly resolvedDefinition?: {
    readonly definition: Record<string, unknown>;
    readonly taskByArn: ReadonlyMap<string, TaskName>;
  };
  /** Replaces the top-level TimeoutSeconds, so a short one rehearses a run that outlives it. */
  readonly executionTimeoutS?: number;
  /**
   * Runs a Task instead of its task function, as the AWS rehearsal does in its Lambda sandbox.
   * A rejection with a name is the Task's error for Retry and Catch.
   */
  readonly invokeTask?: (task: TaskName, event: unknown) => Promise<unknown>;
  /** Where definitions that passed asl-validator are recorded, so a later process skips validating them. */
  readonly validatedDefinitionsDir?: string;
}

export interface LocalExecutionResult {
  /** TIMED_OUT means the definition's TimeoutSeconds passed, which aws-local-stepfunctions enforces as AWS does. */
  readonly status: 'SUCCEEDED' | 'FAILED' | 'ABORTED' | 'TIMED_OUT';
  readonly output?: FinishRunOutput;
  readonly error?: string;
  readonly cause?: string;
  readonly events: readonly ExecutionEvent[];
  /** The run id PlanRun chose, when it got that far. */
  readonly runId?: string;
}

/** The longest delay a Node timer keeps. setTimeout turns larger values into 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The error AWS names an execution that outlived its TimeoutSeconds. */
const EXECUTION_TIMEOUT_ERROR = 'States.Timeout';

/**
 * A copy through JSON text. Under a VM context, as in Jest, structuredClone's objects come from another realm.
 * The emulator's plain-object checks refuse those.
 */
const jsonCopy = (definition: Record<string, unknown>): unknown => JSON.parse(JSON.stringify(definition));

/** Definitions, as JSON text, this process has seen pass asl-validator. */
const validDefinitions = new Set<string>();

/** The version of aws-local-stepfunctions' own asl-validator. */
function aslValidatorVersion(): string {
  const requireFromEmulator = createRequire(require.resolve('aws-local-stepfunctions'));
  return (
    JSON.parse(readFileSync(requireFromEmulator.resolve('asl-validator/package.json'), 'utf8')) as { version: string }
  ).version;
}

/**
 * aws-local-stepfunctions compiles the whole ASL JSON Schema anew for each StateMachine.
 * That costs about a second of CPU each time.
 * So a definition this process or an earlier one has seen pass is not validated again.
 * Earlier processes leave a file named by the digests of definition and validator under `validatedDir`.
 */
function validateOnce(definition: Record<string, unknown>, validatedDir: string | undefined): void {
  const text = JSON.stringify(definition);
  if (validDefinitions.has(text)) return;
  const record =
    validatedDir === undefined
      ? undefined
      : join(validatedDir, createHash('sha256').update(`${aslValidatorVersion()}\n${text}`).digest('hex'));
  if (record === undefined || !existsSync(record)) {
    // Constructed only to validate. It throws on an invalid definition, as the execution's own did.
    new StateMachine(jsonCopy(definition) as never, { validationOptions: { checkArn: true, checkPaths: true } });
    if (record !== undefined) {
      try {
        mkdirSync(validatedDir!, { recursive: true });
        writeFileSync(record, '');
      } catch {
        // A cache that cannot be written costs the next process the validation, nothing else.
      }
    }
  }
  validDefinitions.add(text);
}

export async function executeLocally(options: LocalExecutionOptions): Promise<LocalExecutionResult> {
  const loaded = options.resolvedDefinition?.definition ?? loadDefinition(localFunctionArn);
  if (
    options.executionTimeoutS !== undefined &&
    !(Number.isInteger(options.executionTimeoutS) && options.executionTimeoutS >= 1)
  ) {
    throw new Error(`executionTimeoutS must be a whole number of seconds >= 1, got ${options.executionTimeoutS}`);
  }
  const withTimeout =
    options.executionTimeoutS === undefined ? loaded : { ...loaded, TimeoutSeconds: options.executionTimeoutS };
  // aws-local-stepfunctions enforces TimeoutSeconds with one setTimeout.
  // Node runs a delay above 2^31-1 ms after 1 ms instead, which would end every local run at once.
  // No local run lasts 24.8 days, so such a timeout is left to AWS.
  const { TimeoutSeconds: declared, ...withoutTimeout } = withTimeout as { TimeoutSeconds?: number } & Record<
    string,
    unknown
  >;
  const definition: Record<string, unknown> =
    declared !== undefined && declared * 1000 > MAX_TIMER_MS ? withoutTimeout : withTimeout;
  const timeoutS = definition['TimeoutSeconds'] as number | undefined;
  const invokeTask = options.invokeTask;
  const bound = invokeTask
    ? (Object.fromEntries(TASK_NAMES.map((task) => [task, (event: unknown) => invokeTask(task, event)])) as Record<
        TaskName,
        LocalHandler
      >)
    : (bindTasks(options.deps) as Record<TaskName, LocalHandler>);
  // aws-local-stepfunctions settles a timed-out or aborted execution at once, while a Task may still run.
  // The result waits for those, and no new Task starts after the end.
  // So the caller's cleanup finds everything they made.
  const inFlight = new Set<Promise<unknown>>();
  let ended: string | undefined;
  const handlers = Object.fromEntries(
    TASK_NAMES.map((task) => [
      task,
      (event: unknown) => {
        if (ended !== undefined) return Promise.reject(new Error(`${task} not started: the execution ${ended}`));
        const call = bound[task](event);
        inFlight.add(call);
        void call.then(
          () => inFlight.delete(call),
          () => inFlight.delete(call),
        );
        return call;
      },
    ]),
  ) as Record<TaskName, LocalHandler>;
  const settleInFlight = async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  };
  const taskByArn = options.resolvedDefinition?.taskByArn ?? new Map(TASK_NAMES.map((t) => [localFunctionArn(t), t]));
  const taskOverrides: Record<string, LocalHandler> = {};
  const waitOverrides: Record<string, number> = {};
  const retryOverrides: Record<string, number[]> = {};
  for (const [name, st] of allStates(definition)) {
    if (st.Type === 'Task') {
      const task = taskByArn.get(st.Resource ?? '');
      if (!task) throw new Error(`state ${name}: resource ${st.Resource} is not one of the workflow's tasks`);
      taskOverrides[name] = handlers[task];
    }
    if (st.Type === 'Wait') waitOverrides[name] = options.pollMs ?? 250;
    if (st.Retry) retryOverrides[name] = st.Retry.map(() => options.retryMs ?? 100);
  }

  validateOnce(definition, options.validatedDefinitionsDir);
  // The validator and the emulator write into the definition they get.
  // The caller's may be run and looked up again, so each gets a copy.
  const machine = new StateMachine(jsonCopy(definition) as never, { validationOptions: { noValidate: true } });
  const execution = machine.run(options.input as never, {
    overrides: {
      taskResourceLocalHandlers: taskOverrides as never,
      waitTimeOverrides: waitOverrides,
      retryIntervalOverrides: retryOverrides,
    },
    noThrowOnAbort: true,
  });
  // Marked ended before the emulator is told.
  // In between it may still start a queued Map iteration's Task, which must not start anything after a stop.
  const onAbort = () => {
    ended ??= 'was aborted';
    execution.abort();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();

  const events: ExecutionEvent[] = [];
  let runId: string | undefined;
  const drain = (async () => {
    for await (const ev of execution.eventLogs as AsyncIterable<ExecutionEvent>) {
      events.push(ev);
      if (ev.type === 'StateExited' && ev.state?.name === STATE.PlanRun) {
        runId = (ev.state.output as { run?: { runId?: string } } | undefined)?.run?.runId;
      }
      options.onEvent?.(ev);
    }
  })();

  try {
    const output = (await execution.result) as FinishRunOutput | null;
    await drain;
    if (output === null || options.signal?.aborted) {
      ended ??= 'was aborted';
      await settleInFlight();
      return { status: 'ABORTED', events, ...(runId ? { runId } : {}) };
    }
    return { status: 'SUCCEEDED', output, events, runId: output.runId };
  } catch (e) {
    await drain.catch(() => undefined);
    const err = e as Error & { cause?: unknown };
    if (err.name === 'ExecutionTimeoutError') {
      ended = 'timed out';
      await settleInFlight();
      return {
        status: 'TIMED_OUT',
        error: EXECUTION_TIMEOUT_ERROR,
        cause: `the execution did not finish within ${timeoutS} s (the state machine's TimeoutSeconds)`,
        events,
        ...(runId ? { runId } : {}),
      };
    }
    ended = 'failed';
    await settleInFlight();
    const failed = [...events].reverse().find((ev) => ev.type === 'ExecutionFailed');
    return {
      status: 'FAILED',
      error: failed?.Error ?? err.name,
      cause: failed?.Cause ?? (typeof err.cause === 'string' ? err.cause : err.message),
      events,
      ...(runId ? { runId } : {}),
    };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}
