/**
 * The runner's protocol steps as pure functions (core/runner/main.ts does the I/O): how an awaited
 * prepare's result.json is read, when a synchronized run starts, what a step that did not run
 * records, how the password reaches sysbench, the command line result.json shows, and one CPU
 * sample. Each is unit-tested alone (test/unit/runner-*.test.ts).
 */
import type { RunnerDriver } from '../sysbench/runner-argv';
import type { RunnerPhase, RunnerResult } from '../sysbench/types';

/** The signals that stop the runner (the workflow sends SIGTERM at a step's deadline). */
export type StopSignal = 'TERM' | 'INT';

/** The exit code a shell reports for a process ended by the signal: 128 + its number (SIGTERM 15, SIGINT 2). */
export function signalExitCode(signal: StopSignal | undefined): number {
  return signal === 'TERM' ? 143 : signal === 'INT' ? 130 : 0;
}

/** What an awaited prepare's result.json says: it succeeded (and when it ended), or it failed. */
type AwaitedPrepare =
  { readonly ok: true; readonly endedAt: string } | { readonly ok: false; readonly exitCode: number | undefined };

/**
 * Reads another client's prepare result.json (RunnerResult); an unreadable exit code is a failure.
 * @internal exported for its tests (a test seam)
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

/** Why the run of this job does not run, and the exit code its result.json gets (never 0). */
export interface NotRun {
  readonly reason: string;
  readonly exitCode: number;
}

/** A prepare (this job's own or an awaited one) failed: the run does not run. */
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
  /** When each awaited prepare ended (their result.json endedAt), in the order seen. */
  readonly ends: readonly string[];
}

/**
 * The I/O the await step needs: read a location's result.json
 * (undefined: not there yet), wait, and whether a signal came.
 */
export interface AwaitIo {
  readonly readResult: (location: string) => Promise<string | undefined>;
  /** Waits about a second, or less when a signal comes. */
  readonly pause: () => Promise<void>;
  readonly stopped: () => StopSignal | undefined;
}

/**
 * Waits for the other clients' prepares: a look a second at each location whose result.json has
 * not been seen yet, until every one is seen, one has failed (one is enough: no run of the step
 * runs, and nobody waits for the rest), or the runner is stopped.
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
 * Milliseconds until the run starts: S seconds after the last of the prepares ended, the same
 * moment on every client however late each one learns of it (clients' clocks are synchronized);
 * 0 once that is past, without --start-after-prepare, or when a time does not read. endedAt has
 * whole milliseconds, so the run never starts before the moment.
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
 * How the password reaches sysbench; it never goes on a command line (the process list shows
 * those to every user). sysbench 1.0.20 passes --mysql-password to mysql_real_connect() and reads
 * no MySQL option file itself (src/drivers/mysql/drv_mysql.c: mysql_drv_init takes args.password
 * from sb_get_value_string("mysql-password"); mysql_drv_real_connect calls mysql_options only for
 * SSL and compression). Two ways in, in this order:
 * 1. sysbench's own config file (--config-file, a private 0600 file in the runner's 0700 work
 *    dir). Its parser (src/sb_options.c, read_config) takes `name=value`, splits values at ',' and
 *    whitespace, and treats '#' as the start of a comment, but reads a value that starts with ' or
 *    " verbatim up to the same quote character, with no escapes: so the password is written
 *    between the quote character it does not contain. fgets() reads lines of at most
 *    MAXSTRLEN-1 = 255 bytes, newline included, so the password must fit in
 *    255 - len('mysql-password=""\n') = 237 bytes. Every password RDS accepts fits: 8 to 41
 *    printable ASCII characters except '/', '"' and '@' (CreateDBCluster MasterUserPassword,
 *    botocore rds service-2.json), so '"' always works.
 * 2. Otherwise (both quote characters, a newline, or too long): MYSQL_PWD in sysbench's own
 *    environment. With no --mysql-password sysbench passes NULL, and MariaDB Connector/C then
 *    reads MYSQL_PWD (libmariadb/mariadb_lib.c, mthd_my_real_connect: "if (!passwd)
 *    passwd=getenv("MYSQL_PWD")"). /proc/<pid>/environ is readable by the process's own user and
 *    root only, like the config file.
 * The pgsql driver is the same in every respect that matters here (src/drivers/pgsql/drv_pgsql.c,
 * 1.0.20): the password goes to PQsetdbLogin(), which leaves an empty one unset so that libpq
 * reads PGPASSWORD; its config-file line is pgsql-password="...". pgsql- is as long as mysql-.
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

/** The connection options shown and passed to sysbench (the password travels apart: passwordTransport). */
export function connectionOptions(driver: RunnerDriver, host: string, ports: string, user: string): string[] {
  const opts = [`--${driver}-host=${host}`, `--${driver}-port=${ports}`, `--${driver}-user=${user}`];
  return driver === 'pgsql' ? ['--db-driver=pgsql', ...opts] : opts;
}

/** A word as a POSIX shell reads it back (single quotes unless it is plain). */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The sysbench command line result.json records, the password masked. */
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

/** result.json (core/sysbench/types.ts RunnerResult), as the runner writes it. */
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

/** A result for a phase that ended at once (a setup error). */
export function immediateResult(
  phase: RunnerPhase,
  exitCode: number,
  at: string,
  facts: { sysbenchVersion: string; hostname: string },
): RunnerResult {
  return { phase, exitCode, startedAt: at, endedAt: at, ...facts, command: '' };
}

/** One reading of sysbench's CPU ticks (/proc/PID/stat utime+stime) and the host's (/proc/stat's aggregate line). */
export interface CpuReading {
  readonly ticks: number;
  readonly busy: number;
  readonly total: number;
  readonly atMs: number;
}

/** Parses /proc/PID/stat's utime and stime (fields 14 and 15, proc(5)); the command name may hold spaces and ')'. */
export function processTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The host's busy and total ticks from /proc/stat's aggregate "cpu" line (proc(5)), and its core count. */
export function hostTicks(procStat: string): { busy: number; total: number; cores: number } {
  const lines = procStat.split('\n');
  const n = lines[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const field = (i: number) => n[i] ?? 0;
  // user nice system idle iowait irq softirq steal
  const busy = field(0) + field(1) + field(2) + field(5) + field(6) + field(7);
  return { busy, total: busy + field(3) + field(4), cores: lines.filter((l) => /^cpu[0-9]/.test(l)).length };
}

/**
 * One client_cpu.jsonl line: sysbench's CPU over the interval as % of one core, the host's busy
 * share of all cores; none when no time passed.
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
