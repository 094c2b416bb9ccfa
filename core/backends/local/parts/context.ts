import type { HostResources } from '../instance-classes';
import type { LocalLakeStore } from '../local-lake';
import type { RunRegistry } from '../registry';
import type { CellStates } from './cell-states';

/** What the local backend's parts share: its options, the cells in memory, and the registry on disk. */
export interface LocalPartContext {
  readonly lake: LocalLakeStore;
  readonly runRoot: string;
  /** The checkout, to find client/runner.js and the backend's own workloads. */
  readonly repoRoot: string;
  readonly cpuAffinity: boolean;
  readonly templateRoot: string | undefined;
  readonly host: HostResources;
  readonly sampleIntervalMs: number;
  readonly cells: CellStates;
  registry(runId: string): RunRegistry;
}
