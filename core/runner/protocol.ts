/** The runner's protocol steps as pure functions, so each is unit-tested alone. main.ts does the I/O. */
import type { RunnerDriver } from '../sysbench/runner-argv';
import type { RunnerPhase, RunnerResult } from '../sysbench/types';

/** The signals that stop the runner. The workflow sends SIGTERM at a step's deadline. */
export type StopSignal = 'TERM' | 'INT';

/** The exit code a shell reports for a process the signal ended, 128 plus its number. */
export function signalExitCode(signal: StopSignal | undefined): number {
  return signal === 'TERM' ? 143 : signal === 'INT' ? 130 : 0;
}

/** What an awaited prepare's result.json says. It succeeded, with its end time, or it failed. */
type AwaitedPrepare =
  { readonly ok: true; readonly endedAt: string } | { readonly ok: false; readonly exitCode: number | undefined };

/**
 * Reads another client's prepare result.json. An unreadable exit code is a failure.
 * @internal Exported for its tests.
 */
export function readAwaitedPrepare(text: string): AwaitedPrepare {
  let parsed: Partial<RunnerResult> | undefined;
  try {
    parsed = JSON.parse(text) as Partial<RunnerResult>;
  } catch {
    parsed = undefined;
  }
  const exitCode =
    typeof parsed?.exitCode === 'number' && Number.isInteger(parsed.exitCode) ? parsed.exitCode : undefined;
  if (exitCode !== 0) return { ok: false, exitCode };
  return { ok: true, endedAt: typeof parsed?.endedAt === 'string' ? parsed.endedAt : '' };
}

/** Why this job's run does not run, and the non-zero exit code its result.json gets. */
export interface NotRun {
  readonly reason: string;
  readonly exitCode: number;
}

/** A prepare failed, this job's own or an awaited one, so the run does not run. */
export function preparedFailed(location: string, exitCode: number | undefined, signal?: StopSignal): NotRun {
  const code = exitCode === undefined ? 1 : exitCode !== 0 ? exitCode : signalExitCode(signal) || 1;
  return { reason: `the data's prepare (${location}) failed: exit code ${exitCode ?? 'unknown'}`, exitCode: code };
}

/** The runner was stopped while it waited for these prepares. */
function stoppedWhileAwaiting(signal: StopSignal, pending: readonly string[]): NotRun {
  return {
    reason: `stopped by SIG${signal} while waiting for the data's prepare (${pending.join(' ')})`,
    exitCode: signalExitCode(signal) || 1,
  };
}

/** Outcome of waiting for the other clients' prepares. */
export interface AwaitOutcome {
  /** Set unless every awaited prepare exited 0. */
  readonly notRun?: NotRun;
  /** When each awaited prepare ended, in the order seen. */
  readonly ends: readonly string[];
}

/**
 * The I/O the await step needs.
 * Reading a location's result.json gives undefined while it is not there yet.
 */
export interface AwaitIo {
  readonly readResult: (location: string) => Promise<string | undefined>;
  /** Waits about a second, or less when a signal comes. */
  readonly pause: () => Promise<void>;
  readonly stopped: () => StopSignal | undefined;
}

/**
 * Waits for the other clients' prepares, looking once a second at each one not seen yet.
 * It stops when all are seen, when the runner is stopped, or at the first failure.
 * One failure is enough, because no run of the step runs.
 */
export async function awaitPrepares(locations: readonly string[], io: AwaitIo): Promise<AwaitOutcome> {
  let pending = [...locations];
  const ends: string[] = [];
  while (pending.length > 0 && io.stopped() === undefined) {
    const still: string[] = [];
    for (const location of pending) {
      const text = await io.readResult(location);
      if (text === undefined) {
        still.push(location);
        continue;
      }
      const prepared = readAwaitedPrepare(text);
      if (!prepared.ok) return { notRun: preparedFailed(location, prepared.exitCode), ends };
      ends.push(prepared.endedAt);
    }
    pending = still;
    if (pending.length === 0) break;
    await io.pause();
  }
  const signal = io.stopped();
  if (pending.length > 0 && signal !== undefined) return { notRun: stoppedWhileAwaiting(signal, pending), ends };
  return { ends };
}

/**
 * Milliseconds until the run starts, S seconds after the last prepare ended.
 * That moment is the same on every client, since their clocks are synchronized.
 * 0 once it is past, without --start-after-prepare, or when a time does not read.
 * endedAt has whole milliseconds, so the run never starts early.
 */
export function runStartDelayMs(
  prepareEnds: readonly string[],
  startAfterPrepareS: number | undefined,
  nowMs: number,
): number {
  if (startAfterPrepareS === undefined || prepareEnds.length === 0) return 0;
  let last = -Infinity;
  for (const ended of prepareEnds) {
    const t = Date.parse(ended);
    if (ended === '' || Number.isNaN(t)) return 0;
    last = Math.max(last, t);
  }
  return Math.max(0, last + startAfterPrepareS * 1000 - nowMs);
}

/**
 * How the password reaches sysbench. It never goes on a command line, which every user can see.
 * sysbench 1.0.20 passes --mysql-password to mysql_real_connect() and reads no MySQL option file.
 * See mysql_drv_init in src/drivers/mysql/drv_mysql.c.
 * There are two ways in, tried in this order.
 *
 * 1. sysbench's own --config-file, a private 0600 file in the runner's 0700 work dir.
 * Its parser reads a quoted value verbatim up to the same quote, with no escapes. See read_config in src/sb_options.c.
 * So the password goes between the quote character it does not contain.
 * fgets() reads at most 255 bytes a line, which leaves 237 for the password.
 * RDS passwords are 8 to 41 printable characters without '"'. See botocore rds service-2.json, MasterUserPassword.
 * So '"' always works for them.
 *
 * 2. Otherwise, as with both quotes, a newline or a long password, MYSQL_PWD goes in sysbench's environment.
 * Without --mysql-password, MariaDB Connector/C reads MYSQL_PWD. See mthd_my_real_connect in libmariadb/mariadb_lib.c.
 * /proc/<pid>/environ is readable only by the process's own user and root, like the config file.
 *
 * The pgsql driver works the same way. See src/drivers/pgsql/drv_pgsql.c, 1.0.20.
 * PQsetdbLogin() leaves an empty password unset, so libpq reads PGPASSWORD.
 */
export type PasswordTransport =
  | { readonly kind: 'none' }
  | { readonly kind: 'config-file'; readonly line: string }
  | { readonly kind: 'env'; readonly name: 'MYSQL_PWD' | 'PGPASSWORD'; readonly value: string };

const MAX_CONFIG_PASSWORD_BYTES = 237;

export function passwordTransport(password: string, driver: RunnerDriver): PasswordTransport {
  if (password === '') return { kind: 'none' };
  const fits = !password.includes('\n') && Buffer.byteLength(password) <= MAX_CONFIG_PASSWORD_BYTES;
  if (fits && !password.includes('"')) return { kind: 'config-file', line: `${driver}-password="${password}"\n` };
  if (fits && !password.includes("'")) return { kind: 'config-file', line: `${driver}-password='${password}'\n` };
  return { kind: 'env', name: driver === 'pgsql' ? 'PGPASSWORD' : 'MYSQL_PWD', value: password };
}

/** The connection options shown and passed to sysbench. The password travels apart. */
export function connectionOptions(driver: RunnerDriver, host: string, ports: string, user: string): string[] {
  const opts = [`--${driver}-host=${host}`, `--${driver}-port=${ports}`, `--${driver}-user=${user}`];
  return driver === 'pgsql' ? ['--db-driver=pgsql', ...opts] : opts;
}

/** A word as a POSIX shell reads it back. Plain words stay unquoted. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The sysbench command line result.json records, with the password masked. */
export function displayCommand(o: {
  readonly workloadEnv: readonly string[];
  readonly hook: string;
  readonly command: string;
  readonly connection: readonly string[];
  readonly driver: RunnerDriver;
  readonly options: readonly string[];
}): string {
  const words = (ws: readonly string[]) => ws.map(shellWord).join(' ');
  return (
    `${words(o.workloadEnv)} sysbench ${shellWord(o.hook)} ${o.command} ${words(o.connection)} ` +
    `--${o.driver}-password=***** ${words(o.options)}`
  );
}

/** result.json as the runner writes it. */
export function resultJson(r: RunnerResult): string {
  const ordered: RunnerResult = {
    phase: r.phase,
    exitCode: r.exitCode,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    sysbenchVersion: r.sysbenchVersion,
    hostname: r.hostname,
    command: r.command,
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** A result for a phase that ended at once, on a setup error. */
export function immediateResult(
  phase: RunnerPhase,
  exitCode: number,
  at: string,
  facts: { sysbenchVersion: string; hostname: string },
): RunnerResult {
  return { phase, exitCode, startedAt: at, endedAt: at, ...facts, command: '' };
}

/** One reading of sysbench's CPU ticks and the host's. */
export interface CpuReading {
  readonly ticks: number;
  readonly busy: number;
  readonly total: number;
  readonly atMs: number;
}

/** Parses utime and stime from /proc/PID/stat, as proc(5) lays them out. The command name may hold spaces and ')'. */
export function processTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The host's busy and total ticks from /proc/stat's aggregate "cpu" line, and its core count. */
export function hostTicks(procStat: string): { busy: number; total: number; cores: number } {
  const lines = procStat.split('\n');
  const n = lines[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const field = (i: number) => n[i] ?? 0;
  // user nice system idle iowait irq softirq steal
  const busy = field(0) + field(1) + field(2) + field(5) + field(6) + field(7);
  return { busy, total: busy + field(3) + field(4), cores: lines.filter((l) => /^cpu[0-9]/.test(l)).length };
}

/**
 * One client_cpu.jsonl line, with sysbench's CPU as % of one core and the host's busy share.
 * None when no time passed.
 */
export function cpuSampleLine(
  prev: CpuReading,
  cur: CpuReading,
  clockTicksPerS: number,
  cores: number,
): string | undefined {
  const dMs = cur.atMs - prev.atMs;
  if (dMs <= 0) return undefined;
  const dTotal = cur.total - prev.total;
  const hundredths = (x: number) => (Math.trunc(x * 100) / 100).toFixed(2);
  const procPct = ((cur.ticks - prev.ticks) / clockTicksPerS / (dMs / 1000)) * 100;
  const hostPct = dTotal > 0 ? ((cur.busy - prev.busy) / dTotal) * 100 : 0;
  return (
    `{"t":${(cur.atMs / 1000).toFixed(3)},"sysbenchCpuPct":${hundredths(procPct)},` +
    `"hostCpuPct":${hundredths(hostPct)},"cores":${cores}}\n`
  );
}
