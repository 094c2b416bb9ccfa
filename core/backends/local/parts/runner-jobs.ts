import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  MissingDependencyError,
  type CellResources,
  type JobHandle,
  type JobsState,
  type RunContext,
  type RunnerJob,
} from '../../../backend';
import { lakeKeys } from '../../../lake/rows';
import type { CellPlan } from '../../../plan/types';
import { prepareRunnerArgv } from '../../../sysbench/command';
import { formatRunnerArgv } from '../../../sysbench/runner-argv';
import { waitForReplicas } from '../cluster';
import { ServerMetricsSampler } from '../metrics';
import { PostgresMetricsSampler } from '../postgres-cluster';
import { isOurProcess, terminate } from '../processes';
import type { JobRecord } from '../registry';
import { LOCAL_LOGINS } from '../template';
import type { CellState, JobProcess } from './cell-states';
import { tail } from './cell-dir';
import type { LocalPartContext } from './context';
import {
  emulatingForwarding,
  REPLICA_CATCH_UP_S,
  WF_EMULATION_SCRIPT,
  type LocalRunnerJob,
} from './forwarding-emulation';
import { hungServers } from './hung-servers';
import { track, untrack } from './started-here';

/** The runner reads the database password from this variable, so it stays out of argv. */
const PASSWORD_ENV = 'AURORA_BENCH_DB_PASSWORD';

type JobState = JobsState['jobs'][number];

/** The client runner bundle, run with this process's node. */
export function runnerPathOf(repoRoot: string): string {
  return join(repoRoot, 'client', 'runner.js');
}

export function assertRunnerBuilt(runnerPath: string): void {
  if (!existsSync(runnerPath))
    throw new MissingDependencyError(
      `the client runner ${runnerPath} is missing from this checkout: build it with \`npm run build\` ` +
        `(scripts/build-runner.ts)`,
    );
}

function password(secretRef: string): string {
  if (secretRef !== LOCAL_LOGINS.sbtest.secretRef)
    throw new Error(
      `unknown local credential "${secretRef}" (the local backend knows ${LOCAL_LOGINS.sbtest.secretRef})`,
    );
  return LOCAL_LOGINS.sbtest.password;
}

/** The runner processes of a cell's steps, started detached in their own group and followed by pid and output. */
export class LocalRunnerJobs {
  private readonly runnerPath: string;

  constructor(private readonly ctx: LocalPartContext) {
    this.runnerPath = runnerPathOf(ctx.repoRoot);
  }

  /**
   * Custom Lua workloads are copied from the lake into the cell's scripts dir, the way AWS clients fetch them.
   */
  private async scriptDirFor(run: RunContext, state: CellState, workload: string): Promise<string | undefined> {
    if (!workload.endsWith('.lua')) return undefined;
    const dir = join(state.dir, 'scripts');
    const file = join(dir, workload);
    if (!existsSync(file) && workload === WF_EMULATION_SCRIPT) {
      // The write-forwarding emulation is the local backend's own script, not the spec's.
      await mkdir(dir, { recursive: true });
      const source = join(this.ctx.repoRoot, 'client', 'workloads', WF_EMULATION_SCRIPT);
      await writeFile(file, await readFile(source, 'utf8'));
    }
    if (!existsSync(file)) {
      const key = lakeKeys.script(run.runId, workload);
      const body = await this.ctx.lake.get(key);
      if (body === undefined)
        throw new Error(
          `custom workload ${workload} is not in the lake at ${key} (PlanRun writes the plan's scripts there)`,
        );
      await mkdir(dir, { recursive: true });
      await writeFile(file, body);
    }
    return dir;
  }

  /** The sampler's first snapshot must come before the load starts. */
  private async startSampler(state: CellState): Promise<void> {
    const intervalMs = this.ctx.sampleIntervalMs;
    const sampler = state.pg
      ? new PostgresMetricsSampler({ writer: state.pg.writer, readers: state.pg.readers, intervalMs })
      : new ServerMetricsSampler({ writer: state.cluster!.writer, readers: state.cluster!.readers, intervalMs });
    await sampler.start();
    state.sampler = sampler;
  }

  async startJobs(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    planned: readonly RunnerJob[],
  ): Promise<JobHandle[]> {
    const jobs = planned.map((job) => emulatingForwarding(job, resources));
    const state = this.ctx.cells.require(run, cell.cellId);
    assertRunnerBuilt(this.runnerPath);
    const secret = password(resources.credentials.secretRef);
    if (jobs.some((j) => j.phase === 'run') && !state.sampler) await this.startSampler(state);

    // The write-forwarding emulation reads on a replica, so it starts once the replicas have what the writer has.
    // A prepare re-creates the tables, and writer steps leave a backlog. This is set-up, not measured.
    if (state.cluster !== undefined && jobs.some((j) => j.phase === 'run' && j.extraPort !== undefined)) {
      if (!(await waitForReplicas(state.cluster, REPLICA_CATCH_UP_S))) {
        throw new Error(
          `the replicas of cell ${cell.cellId} did not catch up with the writer within ${REPLICA_CATCH_UP_S} ` +
            `s; the write-forwarding emulation needs their data`,
        );
      }
    }
    const handles: JobHandle[] = [];
    const records: JobRecord[] = [];
    const logDir = join(state.dir, 'jobs');
    await mkdir(join(logDir, 'tmp'), { recursive: true });
    for (const job of jobs) {
      const running = state.jobs.get(job.jobId);
      if (running && running.exit === undefined) {
        handles.push(running.handle); // A retried StartJobs finds the job already running.
        continue;
      }
      const { proc, out } = await this.spawnJob(run, state, resources, job, logDir, secret);
      state.jobs.set(job.jobId, proc);
      handles.push(proc.handle);
      records.push({ jobId: job.jobId, pid: Number(proc.handle.ref), marker: out, startedAt: proc.handle.startedAt });
    }
    if (records.length > 0) await this.ctx.registry(run.runId).addJobs(cell.cellId, records);
    return handles;
  }

  private async spawnJob(
    run: RunContext,
    state: CellState,
    resources: CellResources,
    job: LocalRunnerJob,
    logDir: string,
    secret: string,
  ): Promise<{ proc: JobProcess; out: string }> {
    const lake = this.ctx.lake;
    const scriptDir = await this.scriptDirFor(run, state, job.workload);
    const out = lake.pathOf(job.outputPrefix.replace(/\/+$/, ''));
    await mkdir(out, { recursive: true });
    const args = [
      this.runnerPath,
      ...formatRunnerArgv({
        phase: job.phase,
        workload: job.workload,
        out,
        host: job.endpoint.host,
        port: job.endpoint.port,
        ...(job.extraPort !== undefined ? { extraPort: job.extraPort } : {}),
        user: resources.credentials.user,
        driver: job.driver ?? 'mysql',
        password: { env: PASSWORD_ENV },
        ...(scriptDir ? { scripts: { dir: scriptDir } } : {}),
        ...prepareRunnerArgv(job, (prefix) => lake.pathOf(prefix.replace(/\/+$/, ''))),
        sysbenchOptions: job.sysbenchArgs,
      }),
    ];
    const base = join(logDir, job.jobId.replace(/[^A-Za-z0-9._-]/g, '_'));
    const stdoutFd = openSync(`${base}.stdout`, 'w');
    const stderrFd = openSync(`${base}.stderr`, 'w');
    let child: ChildProcess;
    try {
      // Own process group, so stopJobs signals the runner and its sysbench together.
      // TMPDIR inside the cell makes the runner's work dir name the cell directory.
      // The /proc scan of cleanup looks for that.
      child = spawn(process.execPath, args, {
        detached: true,
        stdio: ['ignore', stdoutFd, stderrFd],
        env: { ...process.env, [PASSWORD_ENV]: secret, TMPDIR: join(logDir, 'tmp') },
      });
    } finally {
      closeSync(stdoutFd);
      closeSync(stderrFd);
    }
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not start ${this.runnerPath} for job ${job.jobId}`);
    child.unref();
    track(pid, { group: true });
    const handle: JobHandle = {
      jobId: job.jobId,
      clientId: job.clientId,
      phase: job.phase,
      outputPrefix: job.outputPrefix,
      ref: String(pid),
      startedAt: new Date().toISOString(),
    };
    const proc: JobProcess = { handle, child, stderrFile: `${base}.stderr` };
    child.on('exit', (code, signal) => {
      proc.exit = { code, signal };
      untrack(pid);
    });
    return { proc, out };
  }

  async checkJobs(run: RunContext, handles: readonly JobHandle[]): Promise<JobsState> {
    const jobs: JobState[] = [];
    for (const h of handles) jobs.push(await this.jobState(run, h));
    await this.failJobsOnHungServers(run, handles, jobs);
    const running = jobs.filter((j) => j.state === 'running').length;
    return { done: running === 0, running, jobs };
  }

  private async jobState(run: RunContext, h: JobHandle): Promise<JobState> {
    const found = this.ctx.cells.findJob(run.runId, h.jobId);
    if (found) {
      const { exit } = found.proc;
      if (exit === undefined) return { jobId: h.jobId, state: 'running' };
      if (exit.code === 0) return { jobId: h.jobId, state: 'exited' };
      const why = exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
      const stderr = tail(found.proc.stderrFile, 5);
      return { jobId: h.jobId, state: 'exited', detail: `runner ${why}${stderr ? `: ${stderr}` : ''}` };
    }
    // Not started by this process, as by a restarted runner of the workflow. Go by pid and output.
    const pid = Number(h.ref);
    if (Number.isInteger(pid) && isOurProcess(pid, this.runnerPath)) return { jobId: h.jobId, state: 'running' };
    if ((await this.ctx.lake.get(h.outputPrefix + 'result.json')) !== undefined)
      return { jobId: h.jobId, state: 'exited' };
    return {
      jobId: h.jobId,
      state: 'lost',
      detail: `runner (pid ${h.ref}) is gone and left no result.json under ${h.outputPrefix}`,
    };
  }

  /**
   * A step whose cell has a hung server would run until its deadline and then hang its collection.
   * So its running jobs are stopped now and reported lost, naming the server.
   */
  private async failJobsOnHungServers(run: RunContext, handles: readonly JobHandle[], jobs: JobState[]): Promise<void> {
    const byCell = new Map<CellState, JobHandle[]>();
    for (const h of handles) {
      const found = this.ctx.cells.findJob(run.runId, h.jobId);
      if (!found || !jobs.some((j) => j.jobId === h.jobId && j.state === 'running')) continue;
      byCell.set(found.state, [...(byCell.get(found.state) ?? []), h]);
    }
    for (const [state, running] of byCell) {
      const hung = hungServers(state);
      if (hung.length === 0) continue;
      await this.stopJobs(run, running);
      const detail = `${hung.join('; ')}: the step was stopped`;
      for (const h of running) {
        const i = jobs.findIndex((j) => j.jobId === h.jobId);
        jobs[i] = { jobId: h.jobId, state: 'lost', detail };
      }
    }
  }

  async stopJobs(run: RunContext, handles: readonly JobHandle[]): Promise<void> {
    await Promise.all(
      handles.map(async (h) => {
        const found = this.ctx.cells.findJob(run.runId, h.jobId);
        const pid = Number(h.ref);
        if (!(found ? found.proc.exit === undefined : isOurProcess(pid, this.runnerPath))) return;
        // On SIGTERM the runner stops sysbench and still writes result.json. SIGKILL comes after 15 s.
        await terminate(pid, { graceMs: 15_000, group: true });
        // Gone from /proc is not yet reaped. Wait for Node's exit event, so a checkJobs right after sees the exit.
        // A loaded machine delivers it a moment later.
        const proc = found?.proc;
        if (proc && proc.exit === undefined && proc.child.exitCode === null && proc.child.signalCode === null) {
          await new Promise<void>((resolve) => {
            proc.child.once('exit', () => resolve());
            setTimeout(resolve, 5_000).unref();
          });
        }
      }),
    );
  }
}
