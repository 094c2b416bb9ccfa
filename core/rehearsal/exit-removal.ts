/**
 * Removes the rehearsal's folder on a forced exit, which skips runRehearsal's teardown.
 * Processes go first, since a server still writing into the directory makes its removal fail.
 * Nothing may throw out of an exit handler, or Node skips the handlers after it.
 */
import { rmSync } from 'node:fs';
import { processesMentioning } from '../backends/local/registry';
import { unmountUnder } from './instance-root';
import type { ProcessTracker } from './process-tracker';

/** The teardown takes the handler off again once it removed the folder itself. */
export function removeOnExit(dir: string, tracker: ProcessTracker): () => void {
  const removeDir = () => {
    try {
      tracker.killAllSync();
      // Anything else started under the directory, such as a client shell's child.
      for (const pid of processesMentioning(dir + '/')) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone in between.
        }
      }
    } catch {
      // The tracker's own exit hook tries again.
    }
    try {
      // The instances' roots are overlays mounted under the directory.
      // Unmount them here, or the removal stops at a mount point.
      unmountUnder(dir);
    } catch {
      // Nothing mounted, or no /proc to read. The removal below says what is left.
    }
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    } catch {
      // Nobody can report what is left while the process exits.
    }
  };
  process.once('exit', removeDir);
  return removeDir;
}
