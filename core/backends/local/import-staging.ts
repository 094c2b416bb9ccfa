/**
 * `import` writes its files under a staging folder before renaming them into place. A killed import leaves it.
 * The next import and `cleanup` remove each folder whose import is gone, and never one of a live import.
 * Pids are reused, so the name also carries the process's start time.
 */
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { isAlive } from './processes';
import { processStartTime } from './registry';

const STAGING = '.staging';
/** Older names lack the start time. */
const NAME = /^import-(\d+)-(?:(\d+)-)?[0-9a-f]{8}$/;

/** A new staging folder's path for this process's import. */
export function importStagingDir(lakeDir: string): string {
  const start = processStartTime(process.pid) ?? '0';
  return join(lakeDir, STAGING, `import-${process.pid}-${start}-${randomBytes(4).toString('hex')}`);
}

/**
 * When a process started, in ms since the epoch: the boot time plus its start time in clock ticks.
 * proc(5) counts those in USER_HZ, 100 on Linux.
 */
function startedAtMs(pid: number): number | undefined {
  const ticks = Number(processStartTime(pid));
  const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
  return Number.isFinite(ticks) && Number.isFinite(btime) ? btime * 1000 + ticks * 10 : undefined;
}

/** Whether the import that made the staging folder `name` is still running. */
function importAlive(folder: string, pid: number, start: string | undefined): boolean {
  if (!isAlive(pid)) return false;
  if (start !== undefined) return processStartTime(pid) === start;
  // A folder named by the pid alone: a process that started after the folder was last written is not its import.
  const started = startedAtMs(pid);
  const written = statSync(folder, { throwIfNoEntry: false })?.mtimeMs;
  return started === undefined || written === undefined || started <= written + 1000;
}

/** Removes the staging folders of imports that are gone. Returns the folders removed. */
export function removeAbandonedStaging(lakeDir: string): string[] {
  const root = join(lakeDir, STAGING);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    const folder = join(root, name);
    if (!m || importAlive(folder, Number(m[1]), m[2])) continue;
    rmSync(folder, { recursive: true, force: true });
    removed.push(folder);
  }
  try {
    // The .staging folder itself, when no import uses it any more.
    if (readdirSync(root).length === 0) rmSync(root, { recursive: true, force: true });
  } catch {
    // Already gone.
  }
  return removed;
}
