import { spawnSync } from 'node:child_process';
import { CLI } from './fault-cli';

/** The built CLI run in `work` on the lake `lake` (appended as --lake): its exit code and output. */
export function lakeCli(work: string, lake: string, args: readonly string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args, '--lake', lake], {
    cwd: work,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
