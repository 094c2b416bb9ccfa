/**
 * The rehearsal's control plane: one moto server on a free local port, started and stopped with the rehearsal.
 * Every AWS API the workflow calls goes to it, except what the emulations answer themselves.
 *
 * When the server dies mid-run, every later AWS call fails with a connection error.
 * controlPlaneDied turns that into one line instead of the SDK's stack.
 * So the rehearsal ends FAILED with the cause named.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MissingDependencyError } from '../backend';
import { AuroraBenchError } from '../errors';

const execFileAsync = promisify(execFile);

export interface MotoServer {
  readonly endpoint: string;
  readonly pid: number;
  /** moto's own log, which stop() removes. */
  readonly logFile: string | undefined;
  stop(): Promise<void>;
}

/** The rehearsal's moto server stopped answering, so every later AWS call of the run fails. */
export class ControlPlaneDiedError extends AuroraBenchError {
  override readonly name = 'ControlPlaneDiedError';
}

/** A live moto answers in milliseconds, and under a second even on a loaded machine. */
const PROBE_TIMEOUT_MS = 3_000;

/** Whether the server answers HTTP at all. A refused or timed-out connection is a dead control plane. */
async function answers(moto: MotoServer): Promise<boolean> {
  if (moto.pid > 0) {
    try {
      process.kill(moto.pid, 0);
    } catch {
      return false;
    }
  }
  try {
    await fetch(`${moto.endpoint}/moto-api/`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return true;
  } catch {
    return false;
  }
}

/** The first line of what the failed call said, without its stack. */
function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const refused = /\b(?:connect )?E(?:CONNREFUSED|CONNRESET|PIPE)\b[^\n]*/.exec(text)?.[0];
  const line = (refused ?? text.split('\n')[0] ?? '').trim();
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}

/**
 * The one-line error for a rehearsal that failed because its moto server is gone.
 * It names the endpoint, the failed call's message and the run's last progress line.
 * Undefined when the server still answers, so the failure is rethrown as it is.
 */
export async function controlPlaneDied(
  moto: MotoServer | undefined,
  error: unknown,
  doing: string,
): Promise<ControlPlaneDiedError | undefined> {
  if (moto === undefined || (await answers(moto))) return undefined;
  const server = `the moto server at ${moto.endpoint}${moto.pid > 0 ? ` (pid ${moto.pid})` : ''}`;
  return new ControlPlaneDiedError(
    `the control plane died: ${server} stopped answering (${firstLine(error)}) while ${doing}; no AWS call of ` +
      `the run can succeed`,
    {
      cause: error,
    },
  );
}

/** moto checks no signature, and these keys must never be real ones. */
export const MOTO_CREDENTIALS = { accessKeyId: 'rehearsal', secretAccessKey: 'rehearsal' } as const;

/**
 * A moto server someone else started and stops, such as a test file's.
 * Its state is reset so the rehearsal starts from an empty account.
 * A RehearsalAccount's later rehearsals pass `reset: false` to keep the standing infrastructure.
 */
export async function sharedMotoServer(endpoint: string, o: { reset: boolean } = { reset: true }): Promise<MotoServer> {
  if (o.reset) {
    const res = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
    if (!res.ok) throw new Error(`moto at ${endpoint} did not reset: ${res.status} ${await res.text()}`);
  }
  return { endpoint, pid: -1, logFile: undefined, stop: () => Promise.resolve() };
}

export async function startMotoServer(repoRoot: string): Promise<MotoServer> {
  const script = join(repoRoot, 'scripts', 'moto.sh');
  let stdout: string;
  try {
    // First use on a machine without .venv installs moto from PyPI. That takes minutes, once.
    ({ stdout } = await execFileAsync('bash', [script, 'start'], { encoding: 'utf8', timeout: 300_000 }));
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new MissingDependencyError(
      `the AWS rehearsal needs a moto server and scripts/moto.sh could not start ` +
        `one: ${err.stderr?.trim() || err.message}`,
      { cause: e },
    );
  }
  const endpoint = /MOTO_ENDPOINT=(\S+)/.exec(stdout)?.[1];
  const pid = Number(/MOTO_PID=(\d+)/.exec(stdout)?.[1]);
  const logFile = /MOTO_LOG=(\S+)/.exec(stdout)?.[1];
  if (!endpoint || !Number.isInteger(pid)) throw new Error(`scripts/moto.sh start printed no endpoint/pid:\n${stdout}`);
  const stopSync = () => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    try {
      if (logFile) rmSync(logFile, { force: true });
    } catch {
      // An exit handler must not throw, or the handlers after it are skipped.
    }
  };
  // A forced exit must not leave the server running, since it was started with setsid.
  process.once('exit', stopSync);
  let stopped = false;
  return {
    endpoint,
    pid,
    logFile,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      process.off('exit', stopSync);
      await execFileAsync('bash', [script, 'stop', String(pid)], { timeout: 30_000 }).catch(() => undefined);
      if (logFile) rmSync(logFile, { force: true });
    },
  };
}
