/**
 * Every process a rehearsal starts, so that none outlives it.
 * The emulations stop them in order. An exit that skips that kills them synchronously.
 * A pid is signalled only while its command line still mentions its marker, so a reused pid is safe.
 * `onChange` lets the rehearsal record them on disk for `cleanup` after a kill -9.
 */
import { isAlive, isOurProcess } from '../backends/local/processes';
import { processesMentioning } from '../backends/local/registry';

interface Tracked {
  readonly group: boolean;
  /** Text in the process's command line, such as a path unique to the rehearsal. */
  readonly marker: string;
  /** The uid it runs as when not ours, such as a PostgreSQL server run as postgres. */
  readonly owner?: number;
}

export class ProcessTracker {
  private readonly tracked = new Map<number, Tracked>();
  private readonly onExit = () => this.killAllSync();
  private hooked = false;

  constructor(private readonly onChange?: (tracked: readonly (Tracked & { readonly pid: number })[]) => void) {}

  private changed(): void {
    this.onChange?.([...this.tracked].map(([pid, e]) => ({ pid, ...e })));
  }

  add(pid: number, entry: Tracked): void {
    this.tracked.set(pid, entry);
    this.changed();
    if (!this.hooked) {
      this.hooked = true;
      process.on('exit', this.onExit);
    }
  }

  remove(pid: number): void {
    this.tracked.delete(pid);
    this.changed();
  }

  /** Tracked processes that are still running (and still ours). */
  live(): number[] {
    return [...this.tracked].filter(([pid, e]) => isOurProcess(pid, e.marker, e.owner)).map(([pid]) => pid);
  }

  /**
   * SIGKILL to everything still ours, and to any process whose command line mentions a marker.
   * That catches a group member that outlived its leader. Forgets what is gone.
   */
  killAllSync(): void {
    const kill = (pid: number) => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone in between.
      }
    };
    for (const [pid, e] of this.tracked) {
      if (isOurProcess(pid, e.marker, e.owner)) kill(e.group ? -pid : pid);
    }
    for (const marker of new Set([...this.tracked.values()].map((e) => e.marker))) {
      for (const pid of processesMentioning(marker)) kill(pid);
    }
    for (const pid of [...this.tracked.keys()]) if (!isAlive(pid)) this.tracked.delete(pid);
  }

  /** Stops watching for this process's exit after an orderly shutdown. */
  dispose(): void {
    if (this.hooked) process.off('exit', this.onExit);
    this.hooked = false;
  }
}
