/**
 * Every process a rehearsal starts (mariadbd servers, the emulated agent's shells), so that none
 * outlives it: stopped in order by the emulations, and killed synchronously (SIGKILL to the pid or
 * its whole process group) if this process exits without getting that far (a second Ctrl-C, a
 * crash). A pid is only ever signalled while it is still the process that was started: its
 * /proc/<pid>/cmdline must still mention the marker given with it. What it tracks is also handed to
 * `onChange` on every change: the rehearsal records it on disk (core/backends/local/rehearsal-record.ts),
 * for `cleanup` after a kill -9, which runs no exit hook.
 */
import { isAlive, isOurProcess } from '../backends/local/processes';
import { processesMentioning } from '../backends/local/registry';

interface Tracked {
  readonly group: boolean;
  /** Text in the process's command line (a path unique to the rehearsal). */
  readonly marker: string;
  /** The uid it runs as when not ours (a PostgreSQL server started as the postgres user by root). */
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
   * SIGKILL to everything still ours, and to any process whose command line mentions a tracked
   * marker (a group member that outlived its leader, e.g. a sysbench under a killed shell);
   * forgets what is gone.
   */
  killAllSync(): void {
    const kill = (pid: number) => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone in between
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

  /** Stops watching for this process's exit (after an orderly shutdown). */
  dispose(): void {
    if (this.hooked) process.off('exit', this.onExit);
    this.hooked = false;
  }
}
