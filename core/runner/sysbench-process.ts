/**
 * Runs one sysbench command as the runner needs it, with output and CPU samples written as it runs.
 * A stop sends SIGTERM, then SIGKILL 10 s later, since a sysbench stuck in a network call may outlive TERM.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { cpuSampleLine, hostTicks, processTicks, type CpuReading } from './protocol';

const KILL_AFTER_TERM_MS = 10_000;

/** Clock ticks per second of /proc's times. 100 on Linux when getconf cannot say. */
function clockTicksPerS(): number {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

async function readCpu(pid: number): Promise<(CpuReading & { cores: number }) | undefined> {
  try {
    const [stat, procStat] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile('/proc/stat', 'utf8')]);
    const host = hostTicks(procStat);
    return { ticks: processTicks(stat), busy: host.busy, total: host.total, cores: host.cores, atMs: Date.now() };
  } catch {
    return undefined;
  }
}

/** Samples the process's CPU once a second until stopped, and returns the stop function. */
function sampleCpu(pid: number, cpuFile: string): () => Promise<void> {
  const clk = clockTicksPerS();
  let prev: CpuReading | undefined;
  let busy: Promise<void> = readCpu(pid).then((r) => {
    prev = r;
  });
  const timer = setInterval(() => {
    busy = busy.then(async () => {
      const cur = await readCpu(pid);
      if (cur === undefined || prev === undefined) return;
      const line = cpuSampleLine(prev, cur, clk, cur.cores);
      if (line !== undefined) await appendFile(cpuFile, line);
      prev = cur;
    });
  }, 1000);
  return async () => {
    clearInterval(timer);
    await busy.catch(() => undefined);
  };
}

export interface SysbenchRun {
  /** sysbench's exit code, 128+N when signal N killed it. */
  readonly exitCode: Promise<number>;
  /** Sends SIGTERM, and SIGKILL if it is still there 10 s later. */
  readonly stop: () => void;
}

/** Starts `sysbench args...` in cwd with env, appending output to logFile and sampling CPU into cpuFile. */
export function startSysbench(o: {
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly logFile: string;
  readonly truncateLog?: boolean;
  readonly cpuFile?: string;
}): SysbenchRun {
  const fd = openSync(o.logFile, o.truncateLog ? 'w' : 'a');
  let child;
  try {
    child = spawn('sysbench', [...o.args], { cwd: o.cwd, env: o.env, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  const stopSampling =
    child.pid !== undefined && o.cpuFile !== undefined ? sampleCpu(child.pid, o.cpuFile) : () => Promise.resolve();
  let killTimer: NodeJS.Timeout | undefined;
  const exitCode = new Promise<number>((resolve) => {
    child.once('error', () => resolve(127));
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal !== null ? constants.signals[signal] : 0)));
  }).then(async (code) => {
    if (killTimer !== undefined) clearTimeout(killTimer);
    await stopSampling();
    return code;
  });
  const stop = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    killTimer ??= setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_TERM_MS);
  };
  return { exitCode, stop };
}
