/**
 * The rehearsal's control plane: one moto server (scripts/moto.sh: the repository's .venv, created
 * with moto[server] when missing) on a free 127.0.0.1 port, started for one rehearsal and stopped
 * with it, its log file included. Every AWS API the workflow calls goes to it, except what the
 * emulations in this directory answer themselves (rds-emulation.ts, ssm-agent.ts).
 *
 * When the server dies mid-run every later AWS call fails with a connection error; controlPlaneDied
 * turns that into one line saying so (which endpoint, what the run was doing) instead of the SDK's
 * stack, so the rehearsal ends FAILED with the cause named and everything it started stopped.
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
  /** moto's own log (scripts/moto.sh writes it under TMPDIR); removed by stop(). */
  readonly logFile: string | undefined;
  stop(): Promise<void>;
}

/** The rehearsal's moto server stopped answering: the run cannot go on (every AWS call of it fails). */
export class ControlPlaneDiedError extends AuroraBenchError {
  override readonly name = 'ControlPlaneDiedError';
}

/**
 * How long a probe of the server may take: a live moto answers
 * in milliseconds, even on a loaded machine under a second.
 */
const PROBE_TIMEOUT_MS = 3_000;

/** Whether the server answers HTTP at all (any status): a refused or timed-out connection is a dead control plane. */
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

/** The first line of what the failed call said (the SDK's "connect ECONNREFUSED 127.0.0.1:PORT"), without its stack. */
function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const refused = /\b(?:connect )?E(?:CONNREFUSED|CONNRESET|PIPE)\b[^\n]*/.exec(text)?.[0];
  const line = (refused ?? text.split('\n')[0] ?? '').trim();
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}

/**
 * When the rehearsal failed because its moto server is gone: the one-line error that says so, naming
 * the endpoint, what the failed call said and what the run was doing (its last progress line);
 * undefined when the server still answers (the failure is something else, rethrown as it is).
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

/** Dummy credentials: moto checks no signature, and these keys must never be real ones. */
export const MOTO_CREDENTIALS = { accessKeyId: 'rehearsal', secretAccessKey: 'rehearsal' } as const;

/**
 * A moto server someone else started and stops (a test file shares one between rehearsals): its
 * state is reset (moto-api/reset) so the rehearsal starts from an empty account, unless `reset` is
 * false (a RehearsalAccount's later rehearsals keep its standing infrastructure), and stop() leaves
 * it running.
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
    // First use on a machine without .venv installs moto from PyPI: minutes, once.
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
      // already gone
    }
    try {
      if (logFile) rmSync(logFile, { force: true });
    } catch {
      // an exit handler must not throw (the handlers after it would be skipped)
    }
  };
  // A forced exit (second Ctrl-C) must not leave the server running: it was started with setsid.
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
