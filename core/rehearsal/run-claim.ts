/**
 * The rehearsal's folder and its run id, claimed in the local run root as a local run does.
 * A live run of the id is refused.
 * `cleanup` settles what a SIGKILL leaves and records the run's end in the lake.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { claimRunDir, defaultRunRoot, runDirOf } from '../backends/local/registry';
import { RehearsalRecorder } from '../backends/local/rehearsal-record';
import { lakeKeys } from '../lake/rows';
import type { Plan } from '../plan/types';
import { ProcessTracker } from './process-tracker';
import { makeRehearsalFolder } from './rehearsal-folder';
import type { RehearsalOptions } from './rehearsal-options';

export interface RunClaim {
  /** Every file the rehearsal writes goes here, removed at the end. */
  readonly dir: string;
  /** The run's directory in the run root, removed once the folder is. */
  readonly runDir: string;
  /** Where the run's lake is copied. */
  readonly lakeDir: string;
  readonly recorder: RehearsalRecorder;
  readonly tracker: ProcessTracker;
}

export async function claimRun(options: RehearsalOptions, plan: Plan): Promise<RunClaim> {
  const dir = await makeRehearsalFolder();
  const runRoot = options.runRoot ?? defaultRunRoot();
  const runDir = runDirOf(runRoot, plan.runId);
  const lakeDir = options.lakeDir ?? join(dir, 'lake');
  try {
    await claimRunDir(runRoot, plan.runId, { lakeRoot: lakeDir, runKey: lakeKeys.run(plan.dt, plan.runId) });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const recorder = new RehearsalRecorder(runDir, dir);
  const tracker = new ProcessTracker((tracked) => recorder.setProcesses(tracked));
  return { dir, runDir, lakeDir, recorder, tracker };
}
