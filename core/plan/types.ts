/**
 * The plan: a spec expanded into cells (variant x repeat) and steps (workload x threads x rate).
 * It is the execution input the state machine's Map states iterate over, so it stays plain JSON.
 */
import type { PlanNote } from '../experiment/notes';
import type { SysbenchOptions, Target, Variant, WriteForwarding } from '../experiment/schema';
import type { EngineRef } from '../aurora/engines';
import type { AuroraStorage, ReaderScaling } from '../aurora/aurora-configurations';

export type BackendKind = 'local' | 'aws';

/**
 * What a backend can do with a step that sends writes to a reader of a variant with write
 * forwarding (StepPlan.forwardedWrites), as it declares it (Backend.writeForwarding): "native", the
 * reader forwards them (Aurora write forwarding; the job runs as it is); "emulated", the backend runs
 * such a job its own way (the local backend's client-side emulation, core/backends/local), which
 * covers some workloads only; "none", it cannot run one.
 */
export type WriteForwardingSupport = 'native' | 'emulated' | 'none';

/** A step's data is prepared once (prepare), then measured (run): the runner's two phases. */
export type RunnerPhase = 'prepare' | 'run';

/** A variant with its parameter template merged in: what one cell provisions. */
export interface ResolvedVariant {
  readonly name: string;
  /**
   * The variant's engine (its own, or the spec's); absent only in plans made
   * before engines were a dimension, which ran aurora-mysql at the plan's version.
   */
  readonly engine?: EngineRef;
  readonly instanceClass: string;
  /** AZ letter, or undefined for "let the backend choose". */
  readonly az?: string;
  readonly readers: number;
  readonly clusterParameters: Readonly<Record<string, string | number | boolean>>;
  readonly instanceParameters: Readonly<Record<string, string | number | boolean>>;
  /**
   * MariaDB-only settings of a local what-if (template's merged under the
   * variant's); absent when none. Only the local backend applies them.
   */
  readonly localOnlyParameters?: Readonly<Record<string, string | number | boolean>>;
  readonly writeForwarding?: WriteForwarding;
  /** instanceClass db.serverless: the cluster's capacity range (ACUs per instance) and how its readers scale. */
  readonly serverless?: { readonly minAcu: number; readonly maxAcu: number; readonly readerScaling: ReaderScaling };
  /** Aurora's cluster storage configuration as the spec gave it; absent: Aurora Standard (RDS's default). */
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

/** A custom Lua workload; `body` travels in the plan so AWS clients can fetch it from the run prefix. */
interface ScriptRef {
  /** File name the runner writes it under, e.g. "fullscan_1kb.lua". */
  readonly name: string;
  readonly sha256: string;
}

export interface StepPlan {
  /** Stable within a cell: `${workload}-t${threads}-${rate|'max'}` (plus target suffix when not writer). */
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
   * Offered transactions/s per client; 0 = unlimited. A step with rateOfCapacity has rate 0 in the
   * plan: its rate is decided when it starts (core/workflow/step-rates.ts).
   */
  readonly rate: number;
  /**
   * Offer this multiple of the achieved rate of the cell's capacity probe (the same workload and
   * threads at rate 0, which runs before it); absent for an absolute rate.
   */
  readonly rateOfCapacity?: number;
  /** Skip this rate step when a lower rate of the same workload and threads overloaded in this cell. */
  readonly stopAtOverload?: boolean;
  /**
   * The step sends writes to a reader of a variant with write forwarding, at this read consistency
   * level (the workload's own, else the variant's). The plan records only that; how such a step
   * runs is the backend's (WriteForwardingSupport: Aurora forwards natively, the local backend
   * emulates it on the client, core/backends/local).
   */
  readonly forwardedWrites?: { readonly consistency: string };
  readonly durationS: number;
  readonly warmupS: number;
  readonly reportIntervalS: number;
  readonly percentile: number;
  readonly target: Target;
  /** How many of the cell's clients run this step at once. */
  readonly clients: number;
  /** Prepare the data (cleanup first if tables exist) before this step runs. */
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
  /** Order "duet": the id of the duet (DuetPlan.cellId) this cell runs in, beside the round's other variants. */
  readonly duet?: string;
}

/** How the cells of the repeat rounds are ordered (the spec's `order`). */
export type CellOrder = 'interleaved' | 'sequential' | 'randomized' | 'duet';

/**
 * Order "duet" (Bulej et al., "Duet Benchmarking: Improving Measurement Accuracy in the Cloud",
 * ICPE 2020): one round's cells, one per variant, provisioned together and run as one item of the
 * workflow's cell Map; each step starts on all of them in the same Task call and the next step
 * starts only when every member's step is collected (a barrier), so the members' per-interval
 * samples are paired by time. The members stay ordinary cells in the plan and the lake.
 */
export interface DuetPlan {
  /** Stable: `r${repeat}-duet` (never the `${variant}-r${repeat}` of a cell). */
  readonly cellId: string;
  /** 0-based position among the duets, the workflow Map's item order. */
  readonly index: number;
  readonly repeat: number;
  /** The member cells' ids, in variant order. */
  readonly members: readonly string[];
  /** Steps per member: every member runs the same steps (the plan refuses a duet whose members differ). */
  readonly stepCount: number;
}

/** Defined with the experiment (scaling notes are PlanNotes too); the plan's notes are the same kind. */
export type { PlanNote } from '../experiment/notes';

export interface PlanEstimate {
  /** Estimated wall time of the whole run, seconds, at the spec's maxConcurrency. */
  readonly wallTimeS: number;
  /** Seconds of benchmark steps (sum over cells). */
  readonly stepTimeS: number;
  /** Provisioning + teardown seconds assumed per cell on this backend. */
  readonly provisionS: number;
}

export interface Plan {
  readonly planVersion: 1;
  readonly runId: string;
  readonly specName: string;
  readonly specSha256: string;
  readonly backend: BackendKind;
  readonly region: string;
  /** The spec's engine; a variant may have its own (ResolvedVariant.engine). */
  readonly engine: EngineRef;
  readonly maxConcurrency: number;
  readonly ttlHours: number;
  /** ISO date (UTC) the lake partitions this run's rows under. */
  readonly dt: string;
  readonly createdAt: string;
  readonly cells: readonly CellPlan[];
  readonly notes: readonly PlanNote[];
  readonly estimate: PlanEstimate;
  /** Custom Lua bodies keyed by ScriptRef.name. */
  readonly scripts: Readonly<Record<string, string>>;
  /** The spec's order (absent in plans made before it was recorded: interleaved or sequential). */
  readonly order?: CellOrder;
  /** Order "randomized": the seed the rounds were shuffled with (the spec's, or one drawn at planning). */
  readonly orderSeed?: number;
  /** Order "duet": the workflow's Map items, each running one round's cells together. */
  readonly duets?: readonly DuetPlan[];
  /**
   * With questions: the workflow runs the cells round by round (repeat 1 first) and JudgeRound stops
   * it between min and max rounds; cells of rounds it did not run stay unrun. Absent: every cell.
   */
  readonly rounds?: { readonly min: number; readonly max: number };
}

/** The engine a cell provisions: its variant's, or (a plan from before variants had one) the plan's. */
export function cellEngine(plan: Pick<Plan, 'engine'>, cell: Pick<CellPlan, 'variant'>): EngineRef {
  return cell.variant.engine ?? plan.engine;
}

/** A run of consecutive steps of a cell (indexes from..to-1) executed by one child execution. */
export interface StepSegment {
  readonly from: number;
  readonly to: number;
}
