/**
 * `aurora-bench run SPEC --local` plans, runs the state machine locally and prints progress.
 * Nothing starts when validation or planning fails.
 * Nothing is left running, also after Ctrl-C or a crash.
 */
import { join } from 'node:path';
import { hostname } from 'node:os';
import type { Backend, LakeStore, RunContext } from '../backend';
import { AuroraBenchError } from '../errors';
import { compactRun } from '../lake/compact';
import { lakeKeys, toJsonLines, type RunRow } from '../lake/rows';
import { overlapNote, type HostRunOverlap } from '../backends/local/host-runs';
import { isLakeWriteFailure } from '../backends/local/local-lake';
import { localSpecRefusalsUnder } from '../backends/local/preflight';
import { defaultRunRoot } from '../backends/local/registry';
import { defaultCacheRoot } from '../backends/local/template';
import { preparePlanFromFile } from '../plan/prepare';
import type { Plan, PlanNote } from '../plan/types';
import type { Scale } from '../experiment/scale';
import { executeLocally, type ExecutionEvent, type LocalExecutionResult } from '../workflow/local-runner';
import { RunProgressLines } from '../workflow/progress';
import { STATE } from '../workflow/state-names';
import { collectStepTask } from '../workflow/tasks/collect-step';
import { interruptedSteps } from '../workflow/tasks/interrupted-steps';
import { judgeRounds } from '../rounds/judge';
import type { TaskDeps } from '../workflow/tasks/types';
import { localHistoryLevels, localJudge } from '../regression/judge-local';
import { toolInfo } from './tool-info';
import { planNotesLine } from './plan-view';
import { stopReason } from './stop-signals';

/** What the local runner needs beyond the Backend port. */
interface LocalBackendLike extends Backend {
  /** Refuses an id that exists or is live, and records where the run row goes for `cleanup`. */
  claimRun(runId: string, runKey: string, endReason?: string): Promise<void>;
  cleanupRun(runId: string): Promise<void>;
  /** The run is over. Returns this host's other runs whose time overlapped it. */
  endHostRun?(runId: string): readonly HostRunOverlap[];
  /** Where its servers' datadirs live. */
  readonly runRoot?: string;
}

/** The results lake cannot be written, so the run stops, naming the lake. */
class LakeFullError extends AuroraBenchError {
  override readonly name = 'LakeFullError';
}

/** Write errors that mean "no room", where the advice is to free space. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/**
 * The backend with its lake's writes watched.
 * A write the disk refuses calls `onFull`, which stops the run, and fails naming the file and the lake.
 * No later cell could record anything either.
 */
function watchLakeSpace(backend: LocalBackendLike, onFull: (error: LakeFullError) => void): LocalBackendLike {
  const lake = backend.lake;
  const guarded: LakeStore = {
    get: (key) => lake.get(key),
    list: (prefix) => lake.list(prefix),
    describe: () => lake.describe(),
    put: async (key, body) => {
      try {
        await lake.put(key, body);
      } catch (e) {
        if (!isLakeWriteFailure(e)) throw e;
        const advice = NO_SPACE.has(e.code)
          ? 'free space there (or give --lake a disk with room)'
          : 'make it writable (or give --lake a writable directory)';
        const full = new LakeFullError(
          `${e.message}: the run stops here; ${advice}, then run \`aurora-bench cleanup\` to record how it ` +
            `ended and run it again`,
          {
            cause: e.cause,
          },
        );
        onFull(full);
        throw full;
      }
    },
  };
  return new Proxy(backend, {
    get(target, property, receiver) {
      if (property === 'lake') return guarded;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The Task and Wait states entered but never left, with their cell: where a stop interrupted the run. */
function statesInFlight(events: readonly ExecutionEvent[]): string[] {
  const open = new Map<string, string>();
  for (const ev of events) {
    if (ev.state?.type !== 'Task' && ev.state?.type !== 'Wait') continue;
    const key = `${ev.parentState?.name ?? ''}/${ev.index ?? ''}/${ev.state.name}`;
    if (ev.type === 'StateEntered') {
      const group = (ev.state.input as { group?: { groupId?: string } } | undefined)?.group?.groupId;
      open.set(key, `${ev.state.name}${group ? ` (cell ${group})` : ''}`);
    } else if (ev.type === 'StateExited' || ev.type === 'StateCaught') {
      // Not on StateFailed, since a retried state is still the one in flight.
      open.delete(key);
    }
  }
  return [...new Set(open.values())];
}

export interface RunLocalOptions {
  readonly specFile: string;
  readonly repoRoot: string;
  readonly lakeDir: string;
  readonly backend: LocalBackendLike;
  readonly serverVersion: string | null;
  readonly runId?: string;
  /** 'small' shrinks the experiment for a local rehearsal. The default is 'full'. */
  readonly scale?: Scale;
  readonly pollMs?: number;
  /** Replaces the state machine's TimeoutSeconds. */
  readonly executionTimeoutS?: number;
  readonly signal?: AbortSignal;
  readonly log?: (line: string) => void;
  readonly onEvent?: (event: ExecutionEvent) => void;
}

export interface RunLocalResult extends LocalExecutionResult {
  readonly plan: Plan;
}

export async function runLocal(options: RunLocalOptions): Promise<RunLocalResult> {
  const log = options.log ?? (() => undefined);
  // Planned here as well as in PlanRun, so a refused plan stops before the workflow starts.
  // The run id is then known for cleanup whatever happens next.
  const localRefusals = localSpecRefusalsUnder(options.backend.runRoot ?? defaultRunRoot());
  const prepared = preparePlanFromFile(options.specFile, join(options.repoRoot, 'client', 'workloads'), {
    backend: 'local',
    scale: options.scale ?? 'full',
    backendRefusals: localRefusals,
    ...(options.runId ? { runId: options.runId } : {}),
  });
  const { plan } = prepared;
  const notesLine = planNotesLine(prepared.notes, [
    options.specFile,
    ...(options.scale === 'small' ? ['--scale', 'small'] : []),
  ]);
  if (notesLine !== null) log(notesLine);
  log(
    `run ${plan.runId}: ${plan.cells.length} cell` +
      (plan.cells.length === 1 ? '' : 's') +
      `, results in ` +
      options.backend.lake.describe(),
  );

  // Nothing of the run exists before its id is claimed. A live run with the same id is refused here.
  await options.backend.claimRun(plan.runId, lakeKeys.run(plan.dt, plan.runId));
  // An id from --run-id must also be new to the lake, or a second run would overwrite the first's rows.
  if (options.runId !== undefined) {
    const file = lakeKeys.run(plan.dt, plan.runId).split('/').pop()!;
    const existing = (await options.backend.lake.list('tables/runs/')).find((k) => k.endsWith(`/${file}`));
    if (existing !== undefined) {
      await options.backend.cleanupRun(plan.runId);
      throw new RunIdTakenError(
        `run id "${plan.runId}" already has results in ` +
          options.backend.lake.describe() +
          ` (${existing}): choose another --run-id; a run never overwrites another's rows`,
      );
    }
  }

  // The id is claimed atomically in the lake itself.
  // So two run roots sharing a lake with the same --run-id never write into the same rows.
  if (options.backend.lake.createOnce !== undefined) {
    const claim = lakeKeys.runClaim(plan.runId);
    const body = JSON.stringify({
      runId: plan.runId,
      pid: process.pid,
      host: hostname(),
      at: new Date().toISOString(),
    });
    if (!(await options.backend.lake.createOnce(claim, body + '\n'))) {
      await options.backend.cleanupRun(plan.runId);
      throw new RunIdTakenError(
        `run id "${plan.runId}" is already claimed in ${options.backend.lake.describe()} (${claim}): another ` +
          `run has it (from another run root or machine); choose another --run-id`,
      );
    }
  }

  // One stop for everything: the user's signal, or a lake with no room left.
  const stop = new AbortController();
  const onUserStop = () => stop.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onUserStop, { once: true });
  if (options.signal?.aborted) onUserStop();
  const backend = watchLakeSpace(options.backend, (full) => stop.abort(full));

  const info = toolInfo(options.repoRoot);
  const deps: TaskDeps = {
    backend,
    now: () => new Date(),
    toolVersion: info.version,
    gitSha: info.gitSha,
    serverVersion: options.serverVersion,
    readyTimeoutS: 120,
    preflight: (_plan, spec) => Promise.resolve(localRefusals(spec)),
    judgeRun: localJudge(options.lakeDir),
    judgeRounds,
    historyLevels: localHistoryLevels(options.lakeDir),
  };
  let result: LocalExecutionResult;
  let overlaps: readonly HostRunOverlap[];
  // The same lines as an AWS run's, with the run's ETA.
  const progress = new RunProgressLines(plan);
  log(`plan: ${progress.etaLine()}`);
  try {
    result = await executeLocally({
      deps,
      input: { spec: prepared.spec, scripts: prepared.scripts, runId: plan.runId, notes: prepared.preparationNotes },
      pollMs: options.pollMs ?? 200,
      validatedDefinitionsDir: join(defaultCacheRoot(), 'validated-definitions'),
      ...(options.executionTimeoutS !== undefined ? { executionTimeoutS: options.executionTimeoutS } : {}),
      signal: stop.signal,
      onEvent: (ev) => {
        options.onEvent?.(ev);
        const line = progress.line(ev);
        if (line) log(line);
      },
    });
  } finally {
    options.signal?.removeEventListener('abort', onUserStop);
    // The workflow's teardown states ran on every path it controls.
    // This catches an abort or a crash, so no mariadbd, port or dir is left.
    await options.backend.cleanupRun(plan.runId);
    overlaps = options.backend.endHostRun?.(plan.runId) ?? [];
  }
  // Simultaneous runs on one machine measure each other's load, so the manifest says so.
  if (overlaps.length > 0) await noteOverlaps(options.backend, plan, overlapNote(plan.runId, overlaps), log);
  if (result.status === 'ABORTED') {
    const why = stopReason(stop.signal.reason);
    const where = statesInFlight(result.events);
    const during = where.length > 0 ? ` during ${where.join(', ')}` : '';
    const full = stop.signal.reason instanceof LakeFullError ? stop.signal.reason : undefined;
    // Recording may itself find no room. What can be written is, and the rest is said.
    await recordInterruptedSteps(deps, result.events, `${why} while the step ran`, log);
    const ending = `${why}${during}; everything was torn down`;
    await markEndedOrLeaveClaim(options.backend, plan, full ? 'failed' : 'aborted', ending, log);
    // An aborted run has ended too, so its rows are compacted, unless the lake is full.
    if (!full) await compactEnded(options.lakeDir, plan, log);
    if (full) return { ...result, status: 'FAILED', error: full.name, cause: full.message, plan };
    return { ...result, cause: `${why}${during}`, plan };
  }
  if (stop.signal.reason instanceof LakeFullError) {
    // The lake refused a write after the workflow's last state.
    // The run ended, but its row may still say running.
    const full = stop.signal.reason;
    await markEndedOrLeaveClaim(options.backend, plan, 'failed', `${full.message}; everything was torn down`, log);
    return { ...result, status: 'FAILED', error: full.name, cause: full.message, plan };
  }
  if (result.status === 'TIMED_OUT') {
    // cleanupRun above did what the safety net's sweeper does for a timed-out execution on AWS.
    // The lake says why the run ended.
    await recordInterruptedSteps(deps, result.events, TIMED_OUT_REASON, log);
    await markEnded(
      options.backend,
      plan,
      'timed-out',
      `${result.cause ?? 'the execution timed out'}; everything was torn down`,
    );
  }
  await compactEnded(options.lakeDir, plan, log);
  return { ...result, plan };
}

/**
 * The run row says how the run ended.
 * When the lake refuses that write too, the claim stays with the reason for `aurora-bench cleanup`.
 */
async function markEndedOrLeaveClaim(
  backend: LocalBackendLike,
  plan: Plan,
  status: 'aborted' | 'failed',
  ending: string,
  log: (line: string) => void,
): Promise<void> {
  try {
    await markEnded(backend, plan, status, ending);
  } catch (e) {
    await backend.claimRun(plan.runId, lakeKeys.run(plan.dt, plan.runId), ending).catch(() => undefined);
    log(
      `run ${plan.runId}: could not record how it ended (${(e as Error).message}); \`aurora-bench cleanup\` ` +
        `records it once the lake takes writes again`,
    );
  }
}

/** Notes in the run's manifest, and prints, that other runs shared the host. */
async function noteOverlaps(
  backend: LocalBackendLike,
  plan: Plan,
  message: string,
  log: (line: string) => void,
): Promise<void> {
  log(`warning: ${message}`);
  const key = lakeKeys.run(plan.dt, plan.runId);
  try {
    const text = await backend.lake.get(key);
    if (text === undefined) return;
    const row = JSON.parse(text.trim().split('\n')[0]!) as RunRow;
    const notes = JSON.parse(row.notes || '[]') as PlanNote[];
    const note: PlanNote = { level: 'warning', path: 'host', message };
    await backend.lake.put(key, toJsonLines([{ ...row, notes: JSON.stringify([...notes, note]) }]));
  } catch (e) {
    log(`warning: the overlap could not be noted in the run's row: ${(e as Error).message}`);
  }
}

/**
 * Compacts an ended run's step files into one Parquet file per table.
 * If that fails, the JSON Lines files stay and serve every query.
 */
async function compactEnded(
  lakeDir: string,
  plan: { readonly runId: string; readonly dt: string },
  log: (line: string) => void,
): Promise<void> {
  try {
    await compactRun(lakeDir, plan);
  } catch (e) {
    log(
      `warning: the run's lake files were not compacted to Parquet (${(e as Error).message}); its JSON Lines ` +
        `files are kept and read as they are`,
    );
  }
}

class RunIdTakenError extends AuroraBenchError {
  override readonly name = 'RunIdTakenError';
}

export const TIMED_OUT_REASON = 'the execution timed out (TimeoutSeconds) while the step ran';

/** Each step a stop interrupted, recorded as failed with the reason. The AWS rehearsal uses it too. */
export async function recordInterruptedSteps(
  deps: TaskDeps,
  events: readonly ExecutionEvent[],
  reason: string,
  log: (line: string) => void,
): Promise<void> {
  // The steps in flight are in the cursors of the cells PlanRun started.
  const planned = events.find((ev) => ev.type === 'StateExited' && ev.state?.name === STATE.PlanRun)?.state?.output as
    { run?: RunContext } | undefined;
  if (!planned?.run) return;
  for (const step of await interruptedSteps(deps, planned.run, reason)) {
    try {
      await collectStepTask(deps, step);
      log(`[${step.cell.cellId}] step ${step.step.stepId} recorded as failed: ${reason}`);
    } catch (e) {
      log(`[${step.cell.cellId}] step ${step.step.stepId} could not be recorded: ${(e as Error).message}`);
    }
  }
}

/** The run row says why the run ended early. The AWS rehearsal uses it too. */
export async function markEnded(
  backend: Backend,
  plan: Plan,
  status: 'aborted' | 'timed-out' | 'failed',
  error: string,
): Promise<void> {
  const key = lakeKeys.run(plan.dt, plan.runId);
  const text = await backend.lake.get(key);
  if (text === undefined) return;
  const row = JSON.parse(text.trim().split('\n')[0]!) as RunRow;
  const ended: RunRow = { ...row, status, ended_at: new Date().toISOString(), error };
  await backend.lake.put(key, toJsonLines([ended]));
}
