import type { ChildProcess } from 'node:child_process';
import type { CellResources, JobHandle, RunContext, ServerMetricsCollection } from '../../../backend';
import type { ClusterInfo } from '../cluster';
import type { MetricSample } from '../metrics';
import type { PostgresCluster } from '../postgres-cluster';

/** A runner process this backend started. */
export interface JobProcess {
  readonly handle: JobHandle;
  readonly child: ChildProcess;
  readonly stderrFile: string;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
}

/** What this process holds of one provisioned cell. The run registry on disk holds what outlives it. */
export interface CellState {
  readonly runId: string;
  readonly cellId: string;
  readonly dir: string;
  /** The MariaDB servers of a MySQL-family engine's cell. */
  readonly cluster?: ClusterInfo;
  /** The PostgreSQL servers of a PostgreSQL engine's cell. */
  readonly pg?: PostgresCluster;
  readonly resources: CellResources;
  readonly jobs: Map<string, JobProcess>;
  sampler?: { stop(): Promise<readonly MetricSample[]>; readonly unresponsive?: ReadonlyMap<string, string> };
  /** When each of the cell's servers was first seen stopped, by instance id. */
  readonly stoppedSince: Map<string, number>;
  /** What collectServerMetrics returned per step. Asked again, it answers the same. */
  readonly collected: Map<string, ServerMetricsCollection>;
}

/** The cells this process provisioned, by run and cell id. */
export class CellStates {
  private readonly cells = new Map<string, CellState>();

  private static key(runId: string, cellId: string): string {
    return `${runId}\u0000${cellId}`;
  }

  get(runId: string, cellId: string): CellState | undefined {
    return this.cells.get(CellStates.key(runId, cellId));
  }

  require(run: RunContext, cellId: string): CellState {
    const state = this.get(run.runId, cellId);
    if (!state)
      throw new Error(
        `cell ${cellId} of run ${run.runId} is not provisioned by this local backend (provisionCell first)`,
      );
    return state;
  }

  set(state: CellState): void {
    this.cells.set(CellStates.key(state.runId, state.cellId), state);
  }

  delete(runId: string, cellId: string): void {
    this.cells.delete(CellStates.key(runId, cellId));
  }

  ofRun(runId: string): CellState[] {
    return [...this.cells.values()].filter((s) => s.runId === runId);
  }

  findJob(runId: string, jobId: string): { state: CellState; proc: JobProcess } | undefined {
    for (const state of this.ofRun(runId)) {
      const proc = state.jobs.get(jobId);
      if (proc) return { state, proc };
    }
    return undefined;
  }
}
