/** The tool's version and the git sha of its checkout, for run manifests. */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface ToolInfo {
  readonly version: string;
  readonly gitSha: string | null;
}

/** The nearest folder up from `from` holding aurora-bench's package.json. */
export function findRepoRoot(from: string): string {
  let dir = from;
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'aurora-bench')
      return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find aurora-bench's package.json above ${from}`);
    dir = parent;
  }
}

export function toolInfo(repoRoot: string): ToolInfo {
  const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  let gitSha: string | null;
  try {
    gitSha =
      execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim() || null;
  } catch {
    gitSha = null; // Not a git checkout, so the manifest says null.
  }
  return { version, gitSha };
}
