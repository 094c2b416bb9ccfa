/**
 * Aurora's two cluster configurations besides the instance class: Aurora Serverless v2 capacity
 * (`db.serverless` with a capacity range in ACUs) and the cluster storage configuration (Aurora
 * Standard or Aurora I/O-Optimized), with which engine versions have them. The spec checks
 * (core/experiment/aurora-configurations.ts), the AWS backend (core/backends/aws/cluster.ts) and the
 * cost (core/plan/cost.ts) read them from here.
 *
 * Sources:
 * - db.serverless: "The --db-instance-class parameter for Aurora Serverless v2 is always
 *   db.serverless. The --engine parameter can be aurora-mysql or aurora-postgresql" (Aurora User
 *   Guide, "Requirements and limitations for Aurora Serverless v2"). Versions: Aurora MySQL 3.02.0
 *   and higher; Aurora PostgreSQL 13.6 and higher 13 versions, 14.3 and higher 14 versions (Aurora
 *   User Guide, "Supported Regions and Aurora DB engines for Aurora Serverless v2",
 *   Concepts.Aurora_Fea_Regions_DB-eng.Feature.ServerlessV2.md); every later major (15, 16, 17) has it.
 * - The capacity range: botocore rds service-2.json ServerlessV2ScalingConfiguration: MinCapacity
 *   "in half-step increments ... For Aurora versions that support the Aurora Serverless v2
 *   auto-pause feature, the smallest value that you can use is 0. For versions that don't ..., the
 *   smallest value that you can use is 0.5"; MaxCapacity "in half-step increments ... The largest
 *   value that you can use is 256 for recent Aurora versions, or 128 for older versions" (which
 *   also depends on the cluster's platform version: Aurora User Guide, "Upgrading your Aurora
 *   Serverless v2 DB cluster to allow scaling to 256 ACUs"). The console takes a maximum "from 1 to
 *   256 ACUs" (Aurora User Guide, "Setting the Aurora Serverless v2 capacity range for a cluster").
 * - Minimum 0 ACUs (auto-pause): "Aurora PostgreSQL ... at least version 16.3, 15.7, 14.12, or
 *   13.15"; "Aurora MySQL ... version 3.08.0 or higher" (Aurora User Guide, "Scaling to Zero ACUs
 *   with automatic pause and resume for Aurora Serverless v2", Prerequisites).
 * - Reader scaling: "The writer instances and all reader instances with failover priority 0 and 1
 *   always pause and resume at the same time", readers in those tiers have "their capacity ... tied
 *   to the capacity of the writer instance"; readers given "a failover priority in the range 2-15"
 *   scale and pause on their own load (the same page). PromotionTier: "Valid Values: 0 - 15"
 *   (botocore CreateDBInstanceMessage.PromotionTier).
 * - Storage: CreateDBClusterMessage.StorageType "Aurora DB clusters - aurora | aurora-iopt1 ...
 *   Default: Aurora DB clusters - aurora" (botocore rds service-2.json). Aurora I/O-Optimized
 *   versions: "Aurora MySQL version 3.03.1 and higher; Aurora PostgreSQL versions 17.4 and higher,
 *   16.1 and higher, 15.2 and higher, 14.7 and higher, and 13.10 and higher"; "Aurora Standard is
 *   available ... for all Aurora MySQL and Aurora PostgreSQL versions" (Aurora User Guide,
 *   "Supported Regions and Aurora DB engines for cluster storage configurations").
 * - One ACU "is a combination of approximately 2 gibibytes (GiB) of memory, corresponding CPU, and
 *   networking" (Aurora User Guide, "Aurora Serverless v2 capacity").
 */
import { parseAuroraVersion } from './engine';
import { ENGINES, type EngineRef } from './engines';

/** The DB instance class of an Aurora Serverless v2 instance. */
const SERVERLESS_CLASS = 'db.serverless';
export const ACU_STEP = 0.5;
/** The largest MaxCapacity any engine version takes; older versions or platforms stop at 128. */
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
 * PromotionTier of a cell's readers: 1 keeps a Serverless v2 reader at the writer's capacity (and a
 * provisioned reader first in line for failover, as before), 2 lets it scale on its own load.
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

/** The Aurora MySQL version as [3, 8, 0], or undefined for an engine or version that is not one. */
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
 * Whether an Aurora PostgreSQL version is at least the least minor of its major (`minimums`, by
 * major); a major above every listed one has it, one below none.
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

/** Whether the engine version has Aurora Serverless v2 (db.serverless). */
export function serverlessV2Support(engine: EngineRef): Support {
  const mysql = auroraMysqlVersion(engine);
  if (mysql) {
    const supported = atLeast(mysql, [3, 2, 0]);
    return { supported, why: supported ? '' : `Aurora Serverless v2 needs Aurora MySQL 3.02.0 or higher, but the version is ${engine.version}` };
  }
  const pg = postgresVersion(engine);
  if (pg) {
    const supported = postgresAtLeast(pg, SERVERLESS_PG);
    return {
      supported,
      why: supported ? '' : `Aurora Serverless v2 needs Aurora PostgreSQL 13.6 or a later 13, 14.3 or a later 14, or 15 and higher, but the version is ${engine.version}`,
    };
  }
  return notAurora(engine, 'Aurora Serverless v2 (db.serverless)');
}

/** Whether the engine version takes a minimum capacity of 0 ACUs (auto-pause). */
export function zeroMinimumSupport(engine: EngineRef): Support {
  const mysql = auroraMysqlVersion(engine);
  if (mysql) {
    const supported = atLeast(mysql, [3, 8, 0]);
    return { supported, why: supported ? '' : `a minimum of 0 ACUs (auto-pause) needs Aurora MySQL 3.08.0 or higher, but the version is ${engine.version}` };
  }
  const pg = postgresVersion(engine);
  if (pg) {
    const supported = postgresAtLeast(pg, PAUSE_PG);
    return {
      supported,
      why: supported ? '' : `a minimum of 0 ACUs (auto-pause) needs Aurora PostgreSQL ${pgList(PAUSE_PG)} or a later minor of the same major, but the version is ${engine.version}`,
    };
  }
  return notAurora(engine, 'Aurora Serverless v2 auto-pause');
}

/** Whether the engine version has Aurora I/O-Optimized (StorageType aurora-iopt1). */
export function ioOptimizedSupport(engine: EngineRef): Support {
  const mysql = auroraMysqlVersion(engine);
  if (mysql) {
    const supported = atLeast(mysql, [3, 3, 1]);
    return { supported, why: supported ? '' : `Aurora I/O-Optimized needs Aurora MySQL 3.03.1 or higher, but the version is ${engine.version}` };
  }
  const pg = postgresVersion(engine);
  if (pg) {
    const supported = postgresAtLeast(pg, IO_OPTIMIZED_PG);
    return {
      supported,
      why: supported ? '' : `Aurora I/O-Optimized needs Aurora PostgreSQL ${pgList(IO_OPTIMIZED_PG)} or a later minor of the same major, but the version is ${engine.version}`,
    };
  }
  return notAurora(engine, 'the Aurora storage configuration (Standard or I/O-Optimized)');
}

export function isServerless(instanceClass: string): boolean {
  return instanceClass === SERVERLESS_CLASS;
}
