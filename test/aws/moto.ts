/**
 * Starts a moto server for a test file (scripts/moto.sh: creates .venv with moto[server] when it is
 * missing) and stops it afterwards. No skipping: when moto cannot be installed or started the
 * suite fails with the script's message.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import * as path from 'node:path';

export interface MotoServer {
  readonly endpoint: string;
  readonly pid: number;
  stop(): void;
}

const script = path.resolve(__dirname, '../../scripts/moto.sh');

export function startMoto(): MotoServer {
  let out: string;
  try {
    // First use on a fresh machine installs moto from PyPI: allow a few minutes.
    out = execFileSync('bash', [script, 'start'], {
      encoding: 'utf8',
      timeout: 300_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(
      `moto server could not be started by scripts/moto.sh (the AWS backend tests need ` +
        `it): ${err.stderr?.trim() || err.message}`,
      { cause: e },
    );
  }
  const endpoint = /MOTO_ENDPOINT=(\S+)/.exec(out)?.[1];
  const pid = Number(/MOTO_PID=(\d+)/.exec(out)?.[1]);
  const log = /MOTO_LOG=(\S+)/.exec(out)?.[1];
  if (!endpoint || !Number.isInteger(pid)) throw new Error(`scripts/moto.sh start printed no endpoint/pid:\n${out}`);
  return {
    endpoint,
    pid,
    stop: () => {
      execFileSync('bash', [script, 'stop', String(pid)], { stdio: 'ignore', timeout: 30_000 });
      // scripts/moto.sh leaves its log under TMPDIR: nothing of a test file's server stays behind.
      if (log) rmSync(log, { force: true });
    },
  };
}
