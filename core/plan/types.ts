/** The plan. It is the execution input the state machine's Map states iterate over, so it stays plain JSON. */
import type { PlanNote } from '../experiment/notes';
import type { SysbenchOptions, Target, Variant, WriteForwarding } from '../experiment/schema';
import type { EngineRef } from '../aurora/engines';
import type { AuroraStorage, ReaderScaling } from '../aurora/aurora-configurations';

export type BackendKind = 'local' | 'aws';

/**
 * What a backend does with a step that writes to a reader of a write-forwarding variant.
 * "native" means the reader forwards them, as Aurora does.
 * "emulated" means the backend runs the job its own way, for some workloads only.
 * "none" means it cannot run one.
 */
export type WriteForwardingSupport = 'native' | 'emulated' | 'none';

/** A step's data is prepared once, then measured. These are the runner's two phases. */
export type RunnerPhase = 'prepare' | 'run';

/** A variant with its parameter template merged in, which is what one cell provisions. */
export interface ResolvedVariant {
  readonly name: string;
  /**
   * The variant's engine, its own or the spec's.
   * Plans made before engines were a dimension lack it, and ran aurora-mysql.
   */
  readonly engine?: EngineRef;
  readonly instanceClass: string;
  /** AZ letter, or undefined to let the backend choose. */
  readonly az?: string;
  readonly readers: number;
  readonly clusterParameters: Readonly<Record<string, string | number | boolean>>;
  readonly instanceParameters: Readonly<Record<string, string | number | boolean>>;
  /**
   * MariaDB-only settings of a local what-if, the variant's over its template's.
   * Only the local backend applies them.
   */
  readonly localOnlyParameters?: Readonly<Record<string, string | number | boolean>>;
  readonly writeForwarding?: WriteForwarding;
  /** The Serverless v2 capacity range in ACUs per instance, and how its readers scale. */
  readonly serverless?: { readonly minAcu: number; readonly maxAcu: number; readonly readerScaling: ReaderScaling };
  /** Aurora's cluster storage configuration as the spec gave it. Absent means Aurora Standard. */
  readonly storage?: AuroraStorage;
  readonly performanceInsights: boolean;
  readonly clients: Variant['clients'];
}

export interface DataPlan {
  readonly tables: number;
  readonly tableSize: number;
  readonly reuse: 'cell' | 'step';
  readonly prepareThreads: number;
}

/** A custom Lua workload. `body` travels in the plan so AWS clients can fetch it from the run prefix. */
interface ScriptRef {
  /** File name the runner writes it under. */
  readonly name: string;
  readonly sha256: string;
}

export interface StepPlan {
  /** Stable within a cell. A target suffix is added when the target is not the writer. */
  readonly stepId: string;
  /** 0-based position in the cell. */
  readonly index: number;
  readonly workload: string;
  /** A stock sysbench test name, or undefined when `script` is set. */
  readonly test?: string;
  readonly script?: ScriptRef;
  readonly options: SysbenchOptions;
  readonly threads: number;
  /**
   * Offered transactions/s per client, 0 for unlimited.
   * A step with rateOfCapacity has rate 0 in the plan, because its rate is decided when it starts.
   */
  readonly rate: number;
  /** Offer this multiple of the rate the cell's capacity probe achieved. Absent for an absolute rate. */
  readonly rateOfCapacity?: number;
  /** Skip this rate step when a lower rate of the same workload and threads overloaded in this cell. */
  readonly stopAtOverload?: boolean;
  /**
   * The step writes to a reader of a write-forwarding variant, at this read consistency level.
   * The plan records only that. How such a step runs is the backend's choice.
   */
  readonly forwardedWrites?: { readonly consistency: string };
  readonly durationS: number;
  readonly warmupS: number;
  readonly reportIntervalS: number;
  readonly percentile: number;
  readonly target: Target;
  /** How many of the cell's clients run this step at once. */
  readonly clients: number;
  /** Prepare the data before this step runs, cleaning up any tables first. */
  readonly prepare: boolean;
  /** Seconds the workflow waits after starting the step before it first polls. */
  readonly waitS: number;
}

export interface CellPlan {
  /** Stable: `${variant}-r${repeat}`. */
  readonly cellId: string;
  /** 0-based position in execution order. */
  readonly index: number;
  readonly repeat: number;
  readonly variant: ResolvedVariant;
  readonly data: DataPlan;
  readonly steps: readonly StepPlan[];
  /** Order "duet" only. The id of the duet this cell runs in. */
  readonly duet?: string;
}

/** How the cells of the repeat rounds are ordered. */
export type CellOrder = 'interleaved' | 'sequential' | 'randomized' | 'duet';

/**
 * Order "duet" provisions one round's cells together and runs them as one Map item.
 * See Bulej et al., "Duet Benchmarking: Improving Measurement Accuracy in the Cloud", ICPE 2020.
 * Each step starts on all members at once, and the next waits for every member.
 * So the members' per-interval samples are paired by time.
 * The members stay ordinary cells in the plan and the lake.
 */
export interface DuetPlan {
  /** Stable, and never a cell's id. */
  readonly cellId: string;
  /** 0-based position among the duets, the workflow Map's item order. */
  readonly index: number;
  readonly repeat: number;
  /** The member cells' ids, in variant order. */
  readonly members: readonly string[];
  /** Steps per member. The plan refuses a duet whose members differ. */
  readonly stepCount: number;
}

/** Defined with the experiment, since scaling notes are PlanNotes too. */
export type { PlanNote } from '../experiment/notes';

export interface PlanEstimate {
  /** Estimated wall time of the whole run in seconds, at the spec's maxConcurrency. */
  readonly wallTimeS: number;
  /** Seconds of benchmark steps, summed over cells. */
  readonly stepTimeS: number;
  /** Provisioning and teardown seconds assumed per cell on this backend. */
  readonly provisionS: number;
}

export interface Plan {
  readonly planVersion: 1;
  readonly runId: string;
  readonly specName: string;
  readonly specSha256: string;
  readonly backend: BackendKind;
  readonly region: string;
  /** The spec's engine. A variant may have its own. */
  readonly engine: EngineRef;
  readonly maxConcurrency: number;
  readonly ttlHours: number;
  /** ISO date in UTC that the lake partitions this run's rows under. */
  readonly dt: string;
  readonly createdAt: string;
  readonly cells: readonly CellPlan[];
  readonly notes: readonly PlanNote[];
  readonly estimate: PlanEstimate;
  /** Custom Lua bodies keyed by ScriptRef.name. */
  readonly scripts: Readonly<Record<string, string>>;
  /** The spec's order. Plans made before it was recorded lack it. */
  readonly order?: CellOrder;
  /** Order "randomized" only. The seed the rounds were shuffled with. */
  readonly orderSeed?: number;
  /** Order "duet" only. The workflow's Map items. */
  readonly duets?: readonly DuetPlan[];
  /**
   * With questions, the workflow runs the cells round by round and JudgeRound stops it.
   * Cells of rounds it did not run stay unrun. Absent means every cell runs.
   */
  readonly rounds?: { readonly min: number; readonly max: number };
}

/** The engine a cell provisions. Older plans without a variant engine use the plan's. */
export function cellEngine(plan: Pick<Plan, 'engine'>, cell: Pick<CellPlan, 'variant'>): EngineRef {
  return cell.variant.engine ?? plan.engine;
}

/** A run of consecutive steps of a cell that one child execution runs. */
export interface StepSegment {
  readonly from: number;
  readonly to: number;
}
