/**
 * The rehearsal's folder removed on a forced exit (a second Ctrl-C), which skips runRehearsal's
 * teardown. Processes first: a server still writing into the directory makes its removal fail
 * (ENOTEMPTY). Nothing may throw out of an exit handler, or Node skips the handlers after it (the
 * moto server's among them), and the server would outlive the rehearsal.
 */
import { rmSync } from 'node:fs';
import { processesMentioning } from '../backends/local/registry';
import { unmountUnder } from './instance-root';
import type { ProcessTracker } from './process-tracker';

/** Adds the exit handler; the teardown takes it off again (process.off) once it removed the folder itself. */
export function removeOnExit(dir: string, tracker: ProcessTracker): () => void {
  const removeDir = () => {
    try {
      tracker.killAllSync();
      // Anything else started under the directory (a client shell's child, a one-off SQL client).
      for (const pid of processesMentioning(dir + '/')) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone in between
        }
      }
    } catch {
      // the tracker's own exit hook tries again
    }
    try {
      // The instances' roots are overlays mounted under the directory (instance-root.ts), and exit
      // handlers run in the order they were added: unmount them here, or the removal stops at a
      // mount point and the directory outlives the rehearsal.
      unmountUnder(dir);
    } catch {
      // nothing mounted, or no /proc to read: the removal below says what is left
    }
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    } catch {
      // what is left is reported by nobody: the process is exiting
    }
  };
  process.once('exit', removeDir);
  return removeDir;
}
