import { rmSync } from 'node:fs';
import { isAlive } from '../processes';

/** Pids this process started, killed synchronously if it exits without tearing down. */
const startedHere = new Map<number, { group: boolean; dir?: string }>();
let exitHookInstalled = false;

export function track(pid: number, entry: { group: boolean; dir?: string }): void {
  startedHere.set(pid, entry);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [pid, e] of startedHere) {
      try {
        process.kill(e.group ? -pid : pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
      if (e.dir) rmSync(e.dir, { recursive: true, force: true });
    }
  });
}

/** A process that was stopped the ordinary way has nothing to kill at exit. */
export function untrack(pid: number): void {
  startedHere.delete(pid);
}

/** Forgets the tracked processes that have ended. */
export function untrackEnded(): void {
  for (const [pid] of startedHere) if (!isAlive(pid)) startedHere.delete(pid);
}
