/**
 * Aurora Serverless v2 capacity and the cluster storage configuration, with the engine versions that have them.
 *
 * Sources.
 * Serverless v2 is db.serverless on aurora-mysql or aurora-postgresql.
 * See Aurora User Guide, "Requirements and limitations for Aurora Serverless v2".
 * Its versions are in Aurora User Guide, "Supported Regions and Aurora DB engines for Aurora Serverless v2".
 * The capacity range moves in half steps. See botocore rds service-2.json, ServerlessV2ScalingConfiguration.
 * Its floor is 0 with auto-pause and 0.5 without. Its ceiling is 256 on recent versions and 128 on older ones.
 * The ceiling also depends on the platform version.
 * See Aurora User Guide, "Upgrading your Aurora Serverless v2 DB cluster to allow scaling to 256 ACUs".
 * The console takes a maximum from 1 to 256 ACUs.
 * See Aurora User Guide, "Setting the Aurora Serverless v2 capacity range for a cluster".
 * Auto-pause versions are in Aurora User Guide, "Scaling to Zero ACUs with automatic pause and resume for Aurora
 * Serverless v2".
 * The same page says readers in promotion tiers 0 and 1 follow the writer's capacity.
 * Readers in tiers 2 to 15 scale and pause on their own load.
 * StorageType defaults to aurora. See botocore rds service-2.json, CreateDBClusterMessage.StorageType.
 * I/O-Optimized versions are in Aurora User Guide, "Supported Regions and Aurora DB engines for cluster storage
 * configurations".
 * One ACU is about 2 GiB of memory with matching CPU and networking.
 * See Aurora User Guide, "Aurora Serverless v2 capacity".
 */
import { parseAuroraVersion } from './engine';
import { ENGINES, type EngineRef } from './engines';

/** The DB instance class of an Aurora Serverless v2 instance. */
const SERVERLESS_CLASS = 'db.serverless';
export const ACU_STEP = 0.5;
/** The largest MaxCapacity any engine version takes. Older versions or platforms stop at 128. */
export const MAX_ACU = 256;
export const MAX_ACU_OLDER = 128;
/** The least MaxCapacity the console offers. */
export const MIN_MAX_ACU = 1;
export const MIN_ACU_WITHOUT_PAUSE = 0.5;
/** GiB of memory per ACU. */
export const GIB_PER_ACU = 2;

/** The spec's storage configuration and its RDS StorageType. */
export const STORAGE_TYPES = { standard: 'aurora', 'io-optimized': 'aurora-iopt1' } as const;
export type AuroraStorage = keyof typeof STORAGE_TYPES;

/**
 * PromotionTier of a cell's readers.
 * 1 keeps a Serverless v2 reader at the writer's capacity and a provisioned one first for failover.
 * 2 lets it scale on its own load.
 */
export const READER_PROMOTION_TIER = { 'with-writer': 1, independent: 2 } as const;
export type ReaderScaling = keyof typeof READER_PROMOTION_TIER;

export interface Support {
  readonly supported: boolean;
  /** Why not, naming the versions that have it. */
  readonly why: string;
}

type Version3 = readonly [number, number, number];

function atLeast(v: Version3, least: Version3): boolean {
  for (let i = 0; i < 3; i++) if (v[i]! !== least[i]!) return v[i]! > least[i]!;
  return true;
}

/** The Aurora MySQL version as [3, 8, 0]. Undefined for anything else. */
function auroraMysqlVersion(engine: EngineRef): Version3 | undefined {
  if (engine.kind !== 'aurora-mysql') return undefined;
  try {
    return parseAuroraVersion(engine.version).aurora;
  } catch {
    return undefined;
  }
}

function postgresVersion(engine: EngineRef): [number, number] | undefined {
  if (engine.kind !== 'aurora-postgresql') return undefined;
  const m = /^([0-9]+)\.([0-9]+)$/.exec(engine.version);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/**
 * Whether an Aurora PostgreSQL version reaches the least minor of its major.
 * A major above every listed one has it, and one below none.
 */
function postgresAtLeast(v: [number, number], minimums: Readonly<Record<number, number>>): boolean {
  const majors = Object.keys(minimums).map(Number);
  const least = minimums[v[0]];
  if (least !== undefined) return v[1] >= least;
  return v[0] > Math.max(...majors);
}

function pgList(minimums: Readonly<Record<number, number>>): string {
  return Object.entries(minimums)
    .sort(([a], [b]) => Number(b) - Number(a))
    .map(([major, minor]) => `${major}.${minor}`)
    .join(', ');
}

function notAurora(engine: EngineRef, what: string): Support {
  return { supported: false, why: `${what} is an Aurora feature; ${ENGINES[engine.kind].label} does not have it` };
}

const SERVERLESS_PG: Readonly<Record<number, number>> = { 14: 3, 13: 6 };
const PAUSE_PG: Readonly<Record<number, number>> = { 16: 3, 15: 7, 14: 12, 13: 15 };
const IO_OPTIMIZED_PG: Readonly<Record<number, number>> = { 17: 4, 16: 1, 15: 2, 14: 7, 13: 10 };

/** Whether the engine version has Aurora Serverless v2. */
export function serverlessV2Support(engine: EngineRef): Support {
  const mysql = auroraMysqlVersion(engine);
  if (mysql) {
    const supported = atLeast(mysql, [3, 2, 0]);
    return {
      supported,
      why: supported
        ? ''
        : `Aurora Serverless v2 needs Aurora MySQL 3.02.0 or higher, but the version is ${engine.version}`,
    };
  }
  const pg = postgresVersion(engine);
  if (pg) {
    const supported = postgresAtLeast(pg, SERVERLESS_PG);
    return {
      supported,
      why: supported
        ? ''
        : `Aurora Serverless v2 needs Aurora PostgreSQL 13.6 or a later 13, 14.3 or a later 14, or 15 and ` +
          `higher, but the version is ${engine.version}`,
    };
  }
  return notAurora(engine, 'Aurora Serverless v2 (db.serverless)');
}

/** Whether the engine version takes a minimum capacity of 0 ACUs, for auto-pause. */
export function zeroMinimumSupport(engine: EngineRef): Support {
  const mysql = auroraMysqlVersion(engine);
  if (mysql) {
    const supported = atLeast(mysql, [3, 8, 0]);
    return {
      supported,
      why: supported
        ? ''
        : `a minimum of 0 ACUs (auto-pause) needs Aurora MySQL 3.08.0 or higher, but the version is ${engine.version}`,
    };
  }
  const pg = postgresVersion(engine);
  if (pg) {
    const supported = postgresAtLeast(pg, PAUSE_PG);
    return {
      supported,
      why: supported
        ? ''
        : `a minimum of 0 ACUs (auto-pause) needs Aurora PostgreSQL ${pgList(PAUSE_PG)} or a later minor of ` +
          `the same major, but the version is ${engine.version}`,
    };
  }
  return notAurora(engine, 'Aurora Serverless v2 auto-pause');
}

/** Whether the engine version has Aurora I/O-Optimized. */
export function ioOptimizedSupport(engine: EngineRef): Support {
  const mysql = auroraMysqlVersion(engine);
  if (mysql) {
    const supported = atLeast(mysql, [3, 3, 1]);
    return {
      supported,
      why: supported
        ? ''
        : `Aurora I/O-Optimized needs Aurora MySQL 3.03.1 or higher, but the version is ${engine.version}`,
    };
  }
  const pg = postgresVersion(engine);
  if (pg) {
    const supported = postgresAtLeast(pg, IO_OPTIMIZED_PG);
    return {
      supported,
      why: supported
        ? ''
        : `Aurora I/O-Optimized needs Aurora PostgreSQL ${pgList(IO_OPTIMIZED_PG)} or a later minor of the ` +
          `same major, but the version is ${engine.version}`,
    };
  }
  return notAurora(engine, 'the Aurora storage configuration (Standard or I/O-Optimized)');
}

export function isServerless(instanceClass: string): boolean {
  return instanceClass === SERVERLESS_CLASS;
}

/**
 * One line of the Serverless v2 capacity range by engine version.
 * From `from` on, the range takes at least `minAcu` and at most `maxAcu`.
 * `confirmed` false means no stored copy of the source was found, so the line only warns.
 * The AWS preflight asks RDS itself. See botocore rds service-2.json, ServerlessV2FeaturesSupport.
 */
export interface CapacityLine {
  readonly kind: 'aurora-mysql' | 'aurora-postgresql';
  /** The least Aurora MySQL version, or the least Aurora PostgreSQL minor per major. */
  readonly from: string | Readonly<Record<number, number>>;
  readonly minAcu?: number;
  readonly maxAcu?: number;
  readonly confirmed: boolean;
  readonly source: string;
}

/**
 * Serverless v2 capacity ranges by engine version.
 * The range depends on the engine and platform versions. See Aurora User Guide, "Aurora Serverless v2 capacity".
 * Later lines override earlier ones for the versions they cover.
 * @internal Exported for its tests.
 */
export const SERVERLESS_V2_CAPACITY: readonly CapacityLine[] = [
  {
    kind: 'aurora-mysql',
    from: '3.02.0',
    minAcu: MIN_ACU_WITHOUT_PAUSE,
    maxAcu: MAX_ACU_OLDER,
    confirmed: true,
    source:
      'Aurora User Guide, "Requirements and limitations for Aurora Serverless v2" ' +
      '(awsdocs/amazon-aurora-user-guide doc_source/aurora-serverless-v2.requirements.md): "from a minimum of ' +
      '0.5 Aurora capacity units (ACU) through 128 ACUs"; botocore rds ServerlessV2ScalingConfiguration before ' +
      'the 256-ACU launch: "The largest value that you can use is 128"',
  },
  {
    kind: 'aurora-mysql',
    from: '3.06.0',
    maxAcu: MAX_ACU,
    confirmed: false,
    source:
      'AWS What\'s New, October 2024, "Amazon Aurora Serverless v2 now supports up to 256 ACUs" (Aurora MySQL ' +
      '3.06 and higher, on a recent platform version); no stored copy found, so the version line is unconfirmed',
  },
  {
    kind: 'aurora-mysql',
    from: '3.08.0',
    minAcu: 0,
    confirmed: true,
    source:
      'Aurora User Guide, "Scaling to Zero ACUs with automatic pause and resume for Aurora Serverless v2", ' +
      'Prerequisites: "Aurora MySQL ... version 3.08.0 or higher"',
  },
  {
    kind: 'aurora-postgresql',
    from: SERVERLESS_PG,
    minAcu: MIN_ACU_WITHOUT_PAUSE,
    maxAcu: MAX_ACU_OLDER,
    confirmed: true,
    source: 'the same requirements page and botocore text as Aurora MySQL 3.02.0',
  },
  {
    kind: 'aurora-postgresql',
    from: { 16: 1, 15: 5, 14: 10, 13: 13 },
    maxAcu: MAX_ACU,
    confirmed: false,
    source:
      'AWS What\'s New, October 2024, "Amazon Aurora Serverless v2 now supports up to 256 ACUs" (Aurora ' +
      'PostgreSQL 13.13, 14.10, 15.5, 16.1 and higher); no stored copy found, so the version line is unconfirmed',
  },
  {
    kind: 'aurora-postgresql',
    from: PAUSE_PG,
    minAcu: 0,
    confirmed: true,
    source: 'the auto-pause Prerequisites: "Aurora PostgreSQL ... at least version 16.3, 15.7, 14.12, or 13.15"',
  },
];

export interface CapacityLimit {
  readonly acu: number;
  /** The line that sets it. */
  readonly line: CapacityLine;
}

/** Whether `engine`'s version is covered by a line's `from`. */
function covers(engine: EngineRef, line: CapacityLine): boolean {
  if (engine.kind !== line.kind) return false;
  if (typeof line.from === 'string') {
    const v = auroraMysqlVersion(engine);
    return v !== undefined && atLeast(v, parseAuroraVersion(line.from).aurora);
  }
  const pg = postgresVersion(engine);
  return pg !== undefined && postgresAtLeast(pg, line.from);
}

/** The versions a line covers, e.g. "Aurora MySQL 3.06.0 and later". */
export function capacityLineVersions(line: CapacityLine): string {
  return typeof line.from === 'string'
    ? `Aurora MySQL ${line.from} or higher`
    : `Aurora PostgreSQL ${pgList(line.from)} or a later minor of the same major`;
}

/**
 * The least minimum and the most maximum of an engine version's Serverless v2 range.
 * Each comes with the table line that sets it. Undefined without Serverless v2.
 */
export function serverlessCapacityLimits(
  engine: EngineRef,
): { readonly min: CapacityLimit; readonly max: CapacityLimit } | undefined {
  if (!serverlessV2Support(engine).supported) return undefined;
  let min: CapacityLimit | undefined;
  let max: CapacityLimit | undefined;
  for (const line of SERVERLESS_V2_CAPACITY) {
    if (!covers(engine, line)) continue;
    if (line.minAcu !== undefined) min = { acu: line.minAcu, line };
    if (line.maxAcu !== undefined) max = { acu: line.maxAcu, line };
  }
  return min !== undefined && max !== undefined ? { min, max } : undefined;
}

/** The first line that raises the engine version's maximum, if any. */
export function nextMaxLine(engine: EngineRef): CapacityLine | undefined {
  const limits = serverlessCapacityLimits(engine);
  return SERVERLESS_V2_CAPACITY.find(
    (l) => l.kind === engine.kind && l.maxAcu !== undefined && l.maxAcu > (limits?.max.acu ?? Infinity),
  );
}
