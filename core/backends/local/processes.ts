/**
 * Process and port helpers on Linux /proc. Pids are reused, so a pid alone never justifies a kill.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A port the kernel just gave us on 127.0.0.1. Another process may still take it first, so callers retry. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not read the port the kernel assigned'))));
    });
  });
}

/** The process state letter from /proc/<pid>/stat, or undefined when there is no such process. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/**
 * Stopped by a signal or a debugger. It runs nothing and answers nothing until SIGCONT. See proc(5).
 */
export function isStopped(pid: number): boolean {
  const state = processState(pid);
  return state === 'T' || state === 't';
}

/** Exists and is not a zombie. A zombie has exited, and only its parent has not reaped it yet. */
export function isAlive(pid: number): boolean {
  const state = processState(pid);
  return state !== undefined && state !== 'Z' && state !== 'X';
}

export function processCmdline(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
  } catch {
    return undefined;
  }
}

/** The real user id a process runs as, or undefined when it is gone. */
export function processUid(pid: number): number | undefined {
  try {
    const uid = /^Uid:\s*([0-9]+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return uid === undefined ? undefined : Number(uid);
  } catch {
    return undefined;
  }
}

/** Undefined where the platform has none. */
export const currentUid = (): number | undefined => process.getuid?.();

/**
 * True when `pid` is alive, runs as `owner` and its command line mentions `marker`.
 * That is the proof needed before signalling a pid a registry file names.
 * The owner is this user, unless the caller started the process as another.
 */
export function isOurProcess(pid: number, marker: string, owner: number | undefined = currentUid()): boolean {
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid || !isAlive(pid)) return false;
  if (owner !== undefined && processUid(pid) !== owner) return false;
  const cmdline = processCmdline(pid);
  return cmdline !== undefined && cmdline.some((a) => a.includes(marker));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `pid` is gone or a zombie. False on timeout. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let pause = 10;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(pause);
    pause = Math.min(pause * 2, 100);
  }
  return true;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

/**
 * SIGTERM to `pid`, then SIGKILL if it is still alive after `graceMs`. Returns how it ended.
 * With `group`, the leader alone gets SIGTERM, since a runner stops its sysbench itself and still writes its result.
 * Whatever of the group is left afterwards gets SIGKILL.
 */
export async function terminate(
  pid: number,
  options: { graceMs: number; group?: boolean },
): Promise<'already-gone' | 'terminated' | 'killed'> {
  const sweepGroup = () => {
    if (options.group) signal(-pid, 'SIGKILL');
  };
  if (!isAlive(pid)) {
    sweepGroup(); // The leader may be gone while members live on.
    return 'already-gone';
  }
  if (isStopped(pid)) {
    // A stopped process cannot act on SIGTERM until it is continued, and a hung one has nothing to shut down.
    // So it is killed at once. SIGKILL reaches a stopped process. See signal(7).
    signal(options.group ? -pid : pid, 'SIGKILL');
    await waitForExit(pid, 5_000);
    return 'killed';
  }
  signal(pid, 'SIGTERM');
  if (await waitForExit(pid, options.graceMs)) {
    sweepGroup();
    return 'terminated';
  }
  signal(options.group ? -pid : pid, 'SIGKILL');
  await waitForExit(pid, 5_000);
  return 'killed';
}

/** utime + stime of a process and all its threads, in seconds. Undefined when it is gone. */
export function processCpuSeconds(pid: number, clockTicks: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)", counted from 1 as in proc(5): state is 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
    return (utime + stime) / clockTicks;
  } catch {
    return undefined;
  }
}

/** CPUs a process may run on, from its affinity mask in /proc/<pid>/status. */
export function allowedCpuCount(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const list = /^Cpus_allowed_list:\s*(.+)$/m.exec(status)?.[1];
    return list === undefined ? undefined : parseCpuList(list).length;
  } catch {
    return undefined;
  }
}

/** "0-2,5" -> [0,1,2,5] */
function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(',')) {
    if (part === '') continue;
    const [a, b] = part.split('-').map(Number);
    if (a === undefined || !Number.isInteger(a)) continue;
    const end = b !== undefined && Number.isInteger(b) ? b : a;
    for (let c = a; c <= end; c++) cpus.push(c);
  }
  return cpus;
}
