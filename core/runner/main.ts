/**
 * The client runner. It runs one sysbench phase and leaves its output where it is told.
 * scripts/build-runner.ts bundles it into client/runner.js for Debian 12's Node 18.
 * Its command line is built by core/sysbench/runner-argv.ts, and its files are in core/sysbench/types.ts.
 * prepare runs `sysbench cleanup` first and ignores its failure, since the tables may not exist yet.
 * A run that does not run still writes result.json with the prepare's exit code, and output.log says why.
 * SIGTERM and SIGINT stop sysbench, but result.json is still written and uploaded.
 * The password never appears in output, in result.json or on a command line.
 */
import { accessSync, constants as fsConstants, existsSync, statSync } from 'node:fs';
import { appendFile, chmod, mkdir, mkdtemp, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  parseRunnerArgv,
  RUNNER_USAGE,
  RunnerExitCode,
  RunnerUsageError,
  type RunnerArgv,
} from '../sysbench/runner-argv';
import type { RunnerPhase } from '../sysbench/types';
import {
  awaitPrepares,
  connectionOptions,
  displayCommand,
  immediateResult,
  passwordTransport,
  preparedFailed,
  resultJson,
  runStartDelayMs,
  signalExitCode,
  type NotRun,
  type PasswordTransport,
  type StopSignal,
} from './protocol';
import { regionOf, SecretFormatError, Storage, under } from './storage';
import { startSysbench, type SysbenchRun } from './sysbench-process';

const PROG = 'runner';

/** Where a phase writes: its local directory and the location that directory stands for. */
interface Output {
  readonly dir: string;
  readonly location: string;
}

const isoNow = (): string => new Date().toISOString();

/** An error as one line. An AWS SDK error's name is its error code. */
const describeError = (e: unknown): string =>
  (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).replace(/\s+/g, ' ');

/** The first executable `name` on PATH. */
function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, name), fsConstants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Setup failed. The runner writes what it owes and exits RunnerExitCode.Setup. */
class SetupError extends Error {}

/** Signals seen, and a wake-up for whatever waits. */
class Stop {
  private signal: StopSignal | undefined;
  private wakers: (() => void)[] = [];
  private current: SysbenchRun | undefined;

  /** The signal received so far, if any. It is a call, because it changes while the runner awaits. */
  stopped(): StopSignal | undefined {
    return this.signal;
  }

  receive(signal: StopSignal): void {
    this.signal = signal;
    this.current?.stop();
    for (const wake of this.wakers.splice(0)) wake();
  }

  /** Sleeps ms, or less when a signal comes. */
  sleep(ms: number): Promise<void> {
    if (this.signal !== undefined || ms <= 0) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(done, ms);
      this.wakers.push(() => {
        clearTimeout(timer);
        done();
      });
    });
  }

  async run(sysbench: SysbenchRun): Promise<number> {
    this.current = sysbench;
    if (this.signal !== undefined) sysbench.stop();
    try {
      return await sysbench.exitCode;
    } finally {
      this.current = undefined;
    }
  }
}

class Job {
  private readonly storage: Storage;
  private readonly hook: string;
  private readonly serverConfigLua: string;
  private sysbenchVersion = '';
  private readonly host = hostname();
  private childEnv: NodeJS.ProcessEnv = {};
  private workloadEnv: string[] = [];
  private transport: PasswordTransport = { kind: 'none' };
  private passwordOpts: string[] = [];

  constructor(
    private readonly a: RunnerArgv,
    private readonly env: NodeJS.ProcessEnv,
    private readonly work: string,
    clientDir: string,
    private readonly runOut: Output,
    private readonly prepOut: Output | undefined,
    private readonly stop: Stop,
  ) {
    this.hook = join(clientDir, 'lua', 'aurora_bench_hook.lua');
    this.serverConfigLua = join(clientDir, 'lua', 'server_config.lua');
    this.storage = new Storage(regionOf(env, 'secret' in a.password ? a.password.secret : undefined), env);
  }

  async writeResult(
    dir: string,
    phase: RunnerPhase,
    exitCode: number,
    startedAt: string,
    endedAt: string,
    command: string,
  ): Promise<void> {
    const text = resultJson({
      phase,
      exitCode,
      startedAt,
      endedAt,
      sysbenchVersion: this.sysbenchVersion,
      hostname: this.host,
      command,
    });
    // Renamed into place in the same directory, so a reader never sees a half-written result.json.
    await writeFile(join(dir, '.result.json.tmp'), text);
    await rename(join(dir, '.result.json.tmp'), join(dir, 'result.json'));
  }

  async upload(out: Output): Promise<boolean> {
    try {
      await this.storage.uploadDir(out.dir, out.location);
      return true;
    } catch (e) {
      process.stderr.write(`${PROG}: ${describeError(e)}\n`);
      return false;
    }
  }

  /**
   * A setup error. The reason goes to output.log, which reaches the lake when nobody reads stderr.
   * The prepare this job owes ends with exit code 3.
   */
  async setupFailed(message: string): Promise<number> {
    process.stderr.write(`${PROG}: ${message}\n`);
    const line = `aurora-bench runner: ${message}\n`;
    await appendFile(join(this.runOut.dir, 'output.log'), line).catch(() => undefined);
    if (this.prepOut !== undefined) {
      // The workflow reports it as the prepare's failure, and the clients awaiting it stop waiting.
      await appendFile(join(this.prepOut.dir, 'output.log'), line).catch(() => undefined);
      const at = isoNow();
      const r = immediateResult('prepare', RunnerExitCode.Setup, at, {
        sysbenchVersion: this.sysbenchVersion,
        hostname: this.host,
      });
      await this.writeResult(this.prepOut.dir, 'prepare', r.exitCode, r.startedAt, r.endedAt, r.command).catch(
        () => undefined,
      );
      if (!(await this.upload(this.prepOut)))
        process.stderr.write(`${PROG}: could not upload output to ${this.prepOut.location}\n`);
    }
    if (!(await this.upload(this.runOut)))
      process.stderr.write(`${PROG}: could not upload output to ${this.runOut.location}\n`);
    return RunnerExitCode.Setup;
  }

  private async setup(): Promise<void> {
    const env = { ...this.env };
    const home = env['AURORA_BENCH_HOME'] || '/opt/aurora-bench';
    // A sysbench under the client home comes first. EC2 clients have Debian's in /usr/bin.
    if (existsSync(join(home, 'sysbench', 'bin', 'sysbench')))
      env['PATH'] = `${join(home, 'sysbench', 'bin')}${delimiter}${env['PATH'] ?? ''}`;
    const sysbench = onPath('sysbench', env['PATH'] ?? '');
    if (sysbench === undefined)
      throw new SetupError(
        "sysbench is not installed (Debian: apt-get install sysbench, as the EC2 clients' user data does)",
      );
    if (!existsSync(this.hook))
      throw new SetupError(`report hook ${this.hook} is missing (it ships next to runner.js)`);

    let password: string;
    if ('env' in this.a.password) {
      const name = this.a.password.env;
      password = env[name] ?? '';
      // Read once, so nothing the runner starts inherits it.
      Reflect.deleteProperty(env, name);
    } else {
      try {
        password = await this.storage.secretPassword(this.a.password.secret);
      } catch (e) {
        if (e instanceof SecretFormatError) throw new SetupError(e.message);
        throw new SetupError(`could not read secret ${this.a.password.secret}: ${describeError(e)}`);
      }
    }
    // sysbench gets the password variable only when the password travels that way. It never inherits this runner's.
    delete env['MYSQL_PWD'];
    delete env['PGPASSWORD'];

    const workload = this.a.workload;
    if (workload.endsWith('.lua')) {
      const scripts = this.a.scripts!;
      let scriptPath: string;
      if ('dir' in scripts) {
        scriptPath = join(resolve(scripts.dir), workload);
        if (!existsSync(scriptPath))
          throw new SetupError(`custom workload ${workload} not found in --script-dir ${scripts.dir}`);
      } else {
        scriptPath = join(this.work, workload);
        const uri = under(scripts.uri, workload);
        try {
          await this.storage.download(uri, scriptPath);
        } catch (e) {
          throw new SetupError(`could not download ${uri}: ${describeError(e)}`);
        }
      }
      this.workloadEnv = [`AURORA_BENCH_SCRIPT=${scriptPath}`];
    } else {
      this.workloadEnv = [`AURORA_BENCH_TEST=${workload}`];
    }
    try {
      this.sysbenchVersion =
        execFileSync(sysbench, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split(
          /\s+/,
        )[1] ?? '';
    } catch {
      this.sysbenchVersion = '';
    }
    this.transport = passwordTransport(password, this.a.driver);
    if (this.transport.kind === 'config-file') {
      const cfg = join(this.work, 'sysbench.cfg');
      await writeFile(cfg, this.transport.line, { mode: 0o600 });
      this.passwordOpts = [`--config-file=${cfg}`];
    }
    this.childEnv = env;
  }

  private sysbenchEnv(withWorkload: boolean): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...this.childEnv };
    if (withWorkload)
      for (const kv of this.workloadEnv) env[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
    if (this.transport.kind === 'env') env[this.transport.name] = this.transport.value;
    return env;
  }

  /** Runs one sysbench command of a phase into out, and returns its exit code. */
  private runSysbench(
    out: Output,
    command: string,
    connection: readonly string[],
    options: readonly string[],
  ): Promise<number> {
    const run = startSysbench({
      args: [this.hook, command, ...connection, ...this.passwordOpts, ...options],
      cwd: this.work,
      env: this.sysbenchEnv(true),
      logFile: join(out.dir, 'output.log'),
      cpuFile: join(out.dir, 'client_cpu.jsonl'),
    });
    return this.stop.run(run);
  }

  private display(command: string, connection: readonly string[], options: readonly string[]): string {
    return displayCommand({
      workloadEnv: this.workloadEnv,
      hook: this.hook,
      command,
      connection,
      driver: this.a.driver,
      options,
    });
  }

  /**
   * After a successful prepare, the server's settings go into server_variables.jsonl.
   * Its errors stay in that file.
   */
  private async dumpServerVariables(out: Output, connection: readonly string[]): Promise<void> {
    const file = join(out.dir, 'server_variables.jsonl');
    if (!existsSync(this.serverConfigLua)) {
      await writeFile(file, `aurora-bench runner: ${this.serverConfigLua} is missing\n`);
      return;
    }
    const run = startSysbench({
      args: [this.serverConfigLua, 'dump', ...connection, ...this.passwordOpts],
      cwd: this.work,
      env: this.sysbenchEnv(false),
      logFile: file,
      truncateLog: true,
    });
    await this.stop.run(run);
  }

  /** `sysbench cleanup`, failure ignored, then `sysbench prepare`. Returns the exit code and the command shown. */
  private async prepareData(
    out: Output,
    connection: readonly string[],
    options: readonly string[],
  ): Promise<{ exitCode: number; command: string }> {
    const command =
      this.display('cleanup', connection, options) + ` && ` + this.display('prepare', connection, options);
    const before = this.stop.stopped();
    if (before !== undefined) return { exitCode: signalExitCode(before), command };
    const cleanup = await this.runSysbench(out, 'cleanup', connection, options);
    // A signal may have come while sysbench ran, so read it again.
    if (this.stop.stopped() !== undefined) return { exitCode: cleanup, command };
    const prepared = await this.runSysbench(out, 'prepare', connection, options);
    if (prepared === 0 && this.stop.stopped() === undefined) await this.dumpServerVariables(out, connection);
    return { exitCode: prepared, command };
  }

  async run(): Promise<number> {
    try {
      await this.setup();
    } catch (e) {
      if (e instanceof SetupError) return this.setupFailed(e.message);
      throw e;
    }
    const a = this.a;
    const runPorts = a.extraPort !== undefined ? `${a.port},${a.extraPort}` : String(a.port);
    const runConnection = connectionOptions(a.driver, a.host, runPorts, a.user);
    let exitCode: number;
    if (a.phase === 'prepare') {
      const startedAt = isoNow();
      const prepared = await this.prepareData(this.runOut, runConnection, a.sysbenchOptions);
      exitCode = prepared.exitCode;
      await this.writeResult(this.runOut.dir, 'prepare', exitCode, startedAt, isoNow(), prepared.command);
    } else {
      let notRun: NotRun | undefined;
      const prepareEnds: string[] = [];
      if (this.prepOut !== undefined) {
        const connection = connectionOptions(
          a.driver,
          a.prepareHost ?? a.host,
          String(a.preparePort ?? a.port),
          a.user,
        );
        const startedAt = isoNow();
        const prepared = await this.prepareData(this.prepOut, connection, a.prepareOptions);
        const endedAt = isoNow();
        prepareEnds.push(endedAt);
        await this.writeResult(this.prepOut.dir, 'prepare', prepared.exitCode, startedAt, endedAt, prepared.command);
        // Uploaded before the run starts, because the awaiting clients start their runs on it.
        if (!(await this.upload(this.prepOut))) {
          process.stderr.write(`${PROG}: could not upload the prepare's output to ${this.prepOut.location}\n`);
          return RunnerExitCode.Upload;
        }
        if (prepared.exitCode !== 0 || this.stop.stopped() !== undefined)
          notRun = preparedFailed(this.prepOut.location, prepared.exitCode, this.stop.stopped());
      }
      // After this job's own successful prepare, await the other members' prepares.
      if (a.awaitPrepare.length > 0 && notRun === undefined) {
        const awaited = await awaitPrepares(a.awaitPrepare, {
          readResult: (location) => this.storage.readText(location, 'result.json'),
          pause: () => this.stop.sleep(1000),
          stopped: () => this.stop.stopped(),
        });
        notRun = awaited.notRun;
        prepareEnds.push(...awaited.ends);
      }
      // A timer may fire a millisecond early, since Node's timers run on the loop's cached monotonic time.
      // So the wait repeats until the moment is past.
      while (notRun === undefined && this.stop.stopped() === undefined) {
        const delayMs = runStartDelayMs(prepareEnds, a.startAfterPrepareS, Date.now());
        if (delayMs <= 0) break;
        await this.stop.sleep(delayMs);
      }
      // The run's own times. A prepare before it is not part of the measured step.
      const startedAt = isoNow();
      const command = this.display('run', runConnection, a.sysbenchOptions);
      if (notRun !== undefined) {
        await appendFile(join(this.runOut.dir, 'output.log'), `aurora-bench runner: not run: ${notRun.reason}\n`);
        exitCode = notRun.exitCode;
      } else if (this.stop.stopped() === undefined) {
        exitCode = await this.runSysbench(this.runOut, 'run', runConnection, a.sysbenchOptions);
      } else {
        exitCode = signalExitCode(this.stop.stopped());
      }
      await this.writeResult(this.runOut.dir, 'run', exitCode, startedAt, isoNow(), command);
    }
    if (!(await this.upload(this.runOut))) {
      process.stderr.write(`${PROG}: could not upload the output to ${this.runOut.location}\n`);
      return RunnerExitCode.Upload;
    }
    if (this.stop.stopped() !== undefined)
      process.stderr.write(`${PROG}: stopped by SIG${this.stop.stopped()} (sysbench exit code ${exitCode})\n`);
    return RunnerExitCode.Ok;
  }

  destroy(): void {
    this.storage.destroy();
  }
}

/**
 * The local directory a location's files are written in, emptied first.
 * For s3:// it is a work directory uploaded to the location.
 * A reader takes result.json as the job's end, so an old one goes first.
 */
async function outputDirOf(location: string, work: string, name: string): Promise<Output> {
  let dir: string;
  if (location.startsWith('s3://')) {
    dir = join(work, name);
    await mkdir(dir, { recursive: true });
  } else {
    await mkdir(location, { recursive: true });
    dir = await realpath(location);
  }
  await rm(join(dir, 'result.json'), { force: true });
  await writeFile(join(dir, 'output.log'), '');
  await writeFile(join(dir, 'client_cpu.jsonl'), '');
  return { dir, location };
}

function usageFailed(message: string): number {
  process.stderr.write(`${PROG}: ${message}\n${RUNNER_USAGE}\n`);
  return RunnerExitCode.Usage;
}

/** Runs the runner with this argv and environment, and returns its exit code. */
export async function runRunner(argv: readonly string[], env: NodeJS.ProcessEnv, clientDir: string): Promise<number> {
  if (argv.length === 1 && argv[0] === '--help') {
    process.stdout.write(`${RUNNER_USAGE}\n`);
    return RunnerExitCode.Ok;
  }
  let a: RunnerArgv;
  try {
    a = parseRunnerArgv(argv, env);
  } catch (e) {
    if (e instanceof RunnerUsageError) return usageFailed(e.message);
    throw e;
  }
  if (
    a.scripts !== undefined &&
    'dir' in a.scripts &&
    !(existsSync(a.scripts.dir) && statSync(a.scripts.dir).isDirectory())
  ) {
    return usageFailed(`--script-dir ${a.scripts.dir} is not a directory`);
  }
  const work = await mkdtemp(join(env['TMPDIR'] || '/tmp', 'aurora-bench-runner.'));
  await chmod(work, 0o700);
  const stop = new Stop();
  process.on('SIGTERM', () => stop.receive('TERM'));
  process.on('SIGINT', () => stop.receive('INT'));
  let job: Job | undefined;
  try {
    let runOut: Output;
    try {
      runOut = await outputDirOf(a.out, work, 'out');
    } catch {
      return usageFailed(`--out: cannot create directory ${a.out}`);
    }
    let prepOut: Output | undefined;
    if (a.prepareOut !== undefined) {
      try {
        prepOut = await outputDirOf(a.prepareOut, work, 'prepare-out');
      } catch {
        return usageFailed(`--prepare-out: cannot create directory ${a.prepareOut}`);
      }
    }
    job = new Job(a, env, work, clientDir, runOut, prepOut, stop);
    return await job.run();
  } finally {
    // The signal handlers stay until the process exits. A late SIGTERM must not kill it mid-cleanup.
    job?.destroy();
    await rm(work, { recursive: true, force: true });
  }
}
