/**
 * The Trino server the rehearsal's Athena runs on.
 * A caller may give one's endpoint. Otherwise scripts/trino.sh starts one for this rehearsal.
 * Starting takes about 40 s on two cores.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MissingDependencyError } from '../backend';
import { trinoVersion } from './trino-client';

const execFileAsync = promisify(execFile);

export interface TrinoServer {
  readonly endpoint: string;
  /** Trino's version, as its /v1/info reports it. */
  readonly version: string;
  stop(): Promise<void>;
}

/** A server someone else started. It is awaited for up to 5 minutes, and stop() leaves it. */
export async function sharedTrinoServer(endpoint: string): Promise<TrinoServer> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const info = await trinoVersion(endpoint);
    if (info && !info.starting) return { endpoint, version: info.version, stop: () => Promise.resolve() };
    if (Date.now() > deadline) throw new Error(`no Trino serves at ${endpoint} (scripts/trino.sh start)`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export async function startTrinoServer(repoRoot: string): Promise<TrinoServer> {
  const script = join(repoRoot, 'scripts', 'trino.sh');
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync('bash', [script, 'start'], { encoding: 'utf8', timeout: 900_000 }));
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new MissingDependencyError(
      `the AWS rehearsal answers Athena on Trino and scripts/trino.sh could not start it ` +
        `(bash scripts/setup.sh --test installs it): ${err.stderr?.trim() || err.message}`,
      { cause: e },
    );
  }
  const endpoint = /TRINO_ENDPOINT=(\S+)/.exec(stdout)?.[1];
  const pid = /TRINO_PID=(\d+)/.exec(stdout)?.[1];
  const dir = /TRINO_DIR=(\S+)/.exec(stdout)?.[1];
  if (!endpoint || !pid || !dir) throw new Error(`scripts/trino.sh start printed no endpoint/pid:\n${stdout}`);
  const stopSync = () => {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  // A forced exit must not leave the server running, since it was started with setsid.
  process.once('exit', stopSync);
  const { version } = (await trinoVersion(endpoint)) ?? { version: 'unknown' };
  return {
    endpoint,
    version,
    stop: async () => {
      process.off('exit', stopSync);
      await execFileAsync('bash', [script, 'stop', pid, dir], { timeout: 30_000 }).catch(() => undefined);
    },
  };
}
