/**
 * The rehearsal's control plane: one moto server (scripts/moto.sh: the repository's .venv, created
 * with moto[server] when missing) on a free 127.0.0.1 port, started for one rehearsal and stopped
 * with it, its log file included. Every AWS API the workflow calls goes to it, except what the
 * emulations in this directory answer themselves (rds-emulation.ts, ssm-agent.ts).
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MissingDependencyError } from '../backend';

const execFileAsync = promisify(execFile);

export interface MotoServer {
  readonly endpoint: string;
  readonly pid: number;
  /** moto's own log (scripts/moto.sh writes it under TMPDIR); removed by stop(). */
  readonly logFile: string | undefined;
  stop(): Promise<void>;
}

/** Dummy credentials: moto checks no signature, and these keys must never be real ones. */
export const MOTO_CREDENTIALS = { accessKeyId: 'rehearsal', secretAccessKey: 'rehearsal' } as const;

/**
 * A moto server someone else started and stops (a test file shares one between rehearsals): its
 * state is reset (moto-api/reset) so the rehearsal starts from an empty account, and stop() leaves
 * it running.
 */
export async function sharedMotoServer(endpoint: string): Promise<MotoServer> {
  const res = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
  if (!res.ok) throw new Error(`moto at ${endpoint} did not reset: ${res.status} ${await res.text()}`);
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
    throw new MissingDependencyError(`the AWS rehearsal needs a moto server and scripts/moto.sh could not start one: ${err.stderr?.trim() || err.message}`, { cause: e });
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
