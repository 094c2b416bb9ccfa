/**
 * The built CLI run as a user runs it, for the fault suite (test/faults): a work directory with its
 * own lake and run root, commands in the foreground or the background, the servers a run registered,
 * and the check that nothing of a run is left.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listening, serverProcessesUnder } from './server-processes';

export const REPO = join(__dirname, '..', '..');
export const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');

/** A small experiment: one cell (writer + reader), one 1-thread step. */
export const BASE_SPEC = {
  name: 'faults',
  engine: { version: '3.04.0' },
  variants: [{ name: 'a', instanceClass: 'db.t3.medium', readers: 1 }],
  data: { tables: 1, tableSize: 200, prepareThreads: 1 },
  defaults: { durationS: 3, warmupS: 0, reportIntervalS: 1 },
  workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1], target: 'reader', options: { skip_trx: true } }],
};

export interface RegisteredServer {
  readonly instanceId: string;
  readonly pid: number;
  readonly port: number;
  readonly role: string;
}

export interface BackgroundRun {
  readonly child: ChildProcess;
  output(): { stdout: string; stderr: string };
  /** Resolves when stdout matches (rejects when the process ends first). */
  waitFor(re: RegExp): Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One test's world: a directory with the lake and run root the CLI is pointed at. */
export class FaultWorld {
  readonly work: string;
  readonly lake: string;
  readonly runRoot: string;
  private readonly children: ChildProcess[] = [];

  /**
   * `where` places the lake and the run root inside the work directory (default: lake/ and runs/ side by side);
   * `extraEnv`: more of the CLI's environment (a TMPDIR of its own).
   */
  constructor(
    prefix = 'ab-faults-',
    where: { lake?: string; runRoot?: string } = {},
    private readonly extraEnv: NodeJS.ProcessEnv = {},
  ) {
    this.work = mkdtempSync(join(tmpdir(), prefix));
    this.lake = join(this.work, where.lake ?? 'lake');
    this.runRoot = join(this.work, where.runRoot ?? 'runs');
  }

  env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return {
      ...process.env,
      AURORA_BENCH_LAKE: this.lake,
      AURORA_BENCH_RUN_ROOT: this.runRoot,
      ...this.extraEnv,
      ...extra,
    };
  }

  cli(
    args: string[],
    options: { prefix?: readonly string[] } = {},
  ): { code: number | null; stdout: string; stderr: string } {
    const [command, ...rest] = [...(options.prefix ?? []), process.execPath, CLI, ...args];
    const r = spawnSync(command!, rest, { cwd: this.work, env: this.env(), encoding: 'utf8', timeout: 300_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  writeSpec(name: string, spec: object): string {
    const file = join(this.work, name);
    writeFileSync(file, JSON.stringify(spec, null, 2));
    return file;
  }

  /** `env` is laid over this world's (another run root, say). */
  background(args: string[], env: NodeJS.ProcessEnv = {}): BackgroundRun {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: this.work, env: this.env(env) });
    this.children.push(child);
    let stdout = '';
    let stderr = '';
    const waiters: { re: RegExp; resolve: () => void }[] = [];
    const check = () => {
      for (const w of waiters.splice(0)) (w.re.test(stdout) ? w.resolve : () => waiters.push(w))();
    };
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      check();
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    return {
      child,
      output: () => ({ stdout, stderr }),
      waitFor: (re: RegExp) =>
        Promise.race([
          new Promise<void>((resolve) => {
            waiters.push({ re, resolve });
            check();
          }),
          exited.then(() => {
            if (!re.test(stdout)) throw new Error(`the run ended before ${String(re)}:\n${stdout}\n${stderr}`);
          }),
        ]),
      exited,
    };
  }

  /**
   * The CLI run in a terminal of its own (a pseudo-terminal, Python's pty module), which is closed
   * once its output matches `until` and `afterMs` have passed: the kernel hangs the terminal up and
   * sends SIGHUP to the session, as when the user closes the terminal window. Its output and exit code.
   */
  inClosedTerminal(args: string[], until: RegExp, afterMs: number): { output: string; code: number | null } {
    const script = [
      'import os, pty, re, sys, time',
      'pid, fd = pty.fork()',
      'if pid == 0:',
      '    os.execv(sys.argv[2], sys.argv[2:])',
      "out = b''",
      'while not re.search(sys.argv[1].encode(), out):',
      '    try:',
      '        data = os.read(fd, 4096)',
      '    except OSError:',
      '        break',
      '    if not data:',
      '        break',
      '    out += data',
      `time.sleep(${afterMs / 1000})`,
      'os.close(fd)',
      'status = os.waitpid(pid, 0)[1]',
      "sys.stdout.write(out.decode(errors='replace') + '\\nexit ' + str(os.waitstatus_to_exitcode(status)) + '\\n')",
    ].join('\n');
    const r = spawnSync('python3', ['-c', script, until.source, process.execPath, CLI, ...args], {
      cwd: this.work,
      env: this.env(),
      encoding: 'utf8',
      timeout: 300_000,
    });
    const code = /\nexit (-?\d+)\n$/.exec(r.stdout)?.[1];
    return { output: r.stdout, code: code === undefined ? null : Number(code) };
  }

  /** The servers the running runs registered (resources.json of each run directory). */
  registeredServers(): RegisteredServer[] {
    if (!existsSync(this.runRoot)) return [];
    const out: RegisteredServer[] = [];
    for (const run of readdirSync(this.runRoot)) {
      const file = join(this.runRoot, run, 'resources.json');
      if (!existsSync(file)) continue;
      const record = JSON.parse(readFileSync(file, 'utf8')) as {
        cells: Record<string, { servers: RegisteredServer[] }>;
      };
      for (const cell of Object.values(record.cells)) out.push(...cell.servers);
    }
    return out;
  }

  lakeQuery<T>(sql: string): T[] {
    const r = this.cli(['results', '--json', '--sql', sql]);
    if (r.code !== 0) throw new Error(`results --sql failed: ${r.stderr}`);
    return JSON.parse(r.stdout) as T[];
  }

  /** Nothing of the runs is left: no mariadbd, no listening port of theirs, no run directory. */
  async expectNothingLeft(ports: readonly number[]): Promise<void> {
    expect(serverProcessesUnder('mariadbd', this.work)).toEqual([]);
    expect((await Promise.all(ports.map(listening))).filter(Boolean)).toEqual([]);
    expect(existsSync(this.runRoot) ? readdirSync(this.runRoot) : []).toEqual([]);
  }

  /** A process the test started itself, killed by tearDown like the CLI's. */
  adopt(child: ChildProcess): void {
    this.children.push(child);
  }

  /** Kills what the test started and is still running, and runs cleanup. */
  tearDown(): void {
    for (const c of this.children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    spawnSync(process.execPath, [CLI, 'cleanup'], { env: this.env() });
  }
}
