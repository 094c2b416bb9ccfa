/**
 * What an RDS instance class becomes on one local machine. The shape of the class (vCPU, memory,
 * Aurora's default max_connections) comes from the table below; the local server gets:
 *
 *   cores          = min(vCPU, host CPUs), pinned with `taskset -c` (slot-rotated, see cpuListFor)
 *   local memory   = clamp(class memory / 64, 64 MiB, cap),   cap = host memory / 8 (floor 256 MiB),
 *                    rounded down to 1 MiB; this is DBInstanceClassMemory in local formulas
 *   buffer pool    = local memory * 3 / 4                     (Aurora's {DBInstanceClassMemory*3/4})
 *   max_connections = Aurora MySQL's default for the class   (not scaled: connection limits are
 *                    behaviour a study measures, e.g. S2's errors past 1024 threads)
 *
 * On a 24 GiB host the cap is 3 GiB, so classes up to 4xlarge keep their relative sizes
 * (r*.large 192 MiB buffer pool ... r*.4xlarge 1.5 GiB) and larger ones share the cap; a writer
 * plus two readers of the largest class still fit in memory. docs/local-backend.md has the table.
 */
import { availableParallelism, totalmem } from 'node:os';
import { UnsupportedOnBackendError } from '../../backend';
import { GIB_PER_ACU, isServerless } from '../../aurora/aurora-configurations';

/** @internal exported for its tests (a test seam) */
export interface InstanceClassSpec {
  readonly vcpu: number;
  readonly memoryGiB: number;
  /** Aurora MySQL's default max_connections for the class (AWS Aurora user guide, "Maximum connections"). */
  readonly maxConnections: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * vCPU and memory per size of the memory-optimised (r) families; identical across r5/r6g/r6i/r7g,
 * and r7i and r8g (Aurora User Guide, "Hardware specifications for DB instance classes for Aurora":
 * db.r7i and db.r8g large 2 vCPU 16 GiB ... 16xlarge 64 vCPU 512 GiB, 24xlarge 96 vCPU 768 GiB).
 */
const R_SIZES: Readonly<Record<string, InstanceClassSpec>> = {
  large: { vcpu: 2, memoryGiB: 16, maxConnections: 1000 },
  xlarge: { vcpu: 4, memoryGiB: 32, maxConnections: 2000 },
  '2xlarge': { vcpu: 8, memoryGiB: 64, maxConnections: 3000 },
  '4xlarge': { vcpu: 16, memoryGiB: 128, maxConnections: 4000 },
  '8xlarge': { vcpu: 32, memoryGiB: 256, maxConnections: 5000 },
  '12xlarge': { vcpu: 48, memoryGiB: 384, maxConnections: 6000 },
  '16xlarge': { vcpu: 64, memoryGiB: 512, maxConnections: 6000 },
  '24xlarge': { vcpu: 96, memoryGiB: 768, maxConnections: 7000 },
};

const R_FAMILY_SIZES: Readonly<Record<string, readonly string[]>> = {
  r5: ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge', '24xlarge'],
  r6g: ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge'],
  r6i: ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge', '24xlarge'],
  r7g: ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge'],
  r7i: ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge', '24xlarge'],
  r8g: ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge', '24xlarge'],
};

/** @internal exported for its tests (a test seam) */
export const INSTANCE_CLASSES: Readonly<Record<string, InstanceClassSpec>> = Object.freeze({
  ...Object.fromEntries(
    Object.entries(R_FAMILY_SIZES).flatMap(([family, sizes]) => sizes.map((s) => [`db.${family}.${s}`, R_SIZES[s]!])),
  ),
  'db.t3.small': { vcpu: 2, memoryGiB: 2, maxConnections: 45 },
  'db.t3.medium': { vcpu: 2, memoryGiB: 4, maxConnections: 90 },
  'db.t3.large': { vcpu: 2, memoryGiB: 8, maxConnections: 135 },
  'db.t4g.medium': { vcpu: 2, memoryGiB: 4, maxConnections: 90 },
  'db.t4g.large': { vcpu: 2, memoryGiB: 8, maxConnections: 135 },
});

/** Class memory is divided by this for the local server. */
export const LOCAL_MEMORY_DIVISOR = 64;
const LOCAL_MEMORY_FLOOR = 64 * MiB;

export interface HostResources {
  readonly cpus: number;
  readonly memoryBytes: number;
}

export function currentHost(): HostResources {
  return { cpus: availableParallelism(), memoryBytes: totalmem() };
}

export interface LocalInstanceShape {
  readonly instanceClass: string;
  readonly vcpu: number;
  readonly memoryGiB: number;
  /** CPUs the local server may use: min(vCPU, host CPUs). */
  readonly cores: number;
  /** DBInstanceClassMemory for local formulas. */
  readonly localMemoryBytes: number;
  /** local memory / class memory: absolute memory sizes in a spec are scaled by it. */
  readonly memoryScale: number;
  readonly bufferPoolBytes: number;
  readonly maxConnections: number;
  /** The most memory one local server gets (host memory / 8). */
  readonly memoryCapBytes: number;
}

/** @internal exported for its tests (a test seam) */
export function localMemoryCap(host: HostResources): number {
  return Math.max(256 * MiB, Math.floor(host.memoryBytes / 8 / MiB) * MiB);
}

/**
 * The provisioned class an Aurora Serverless v2 instance stands in as where nothing scales it (the
 * local backend, the rehearsal's servers): the smallest r class with at least its largest capacity's
 * memory (maxAcu x 2 GiB, core/aurora/aurora-configurations.ts), at most the table's largest.
 * @internal exported for its tests (a test seam)
 */
export function serverlessStandIn(maxAcu: number): string {
  const sizes = Object.entries(R_SIZES).sort(([, a], [, b]) => a.memoryGiB - b.memoryGiB);
  const fits = sizes.find(([, spec]) => spec.memoryGiB >= maxAcu * GIB_PER_ACU) ?? sizes[sizes.length - 1]!;
  return `db.r6g.${fits[0]}`;
}

/**
 * The local shape of `instanceClass` (db.serverless: of its stand-in at `maxAcu`);
 * UnsupportedOnBackendError for a class not in the table.
 */
export function localShape(
  instanceClass: string,
  host: HostResources = currentHost(),
  maxAcu?: number,
): LocalInstanceShape {
  if (isServerless(instanceClass)) {
    if (maxAcu === undefined)
      throw new UnsupportedOnBackendError(
        "db.serverless has no local stand-in without its maxAcu (the variant's capacity range)",
      );
    return { ...localShape(serverlessStandIn(maxAcu), host), instanceClass };
  }
  const spec = INSTANCE_CLASSES[instanceClass];
  if (!spec) {
    const families = [...new Set(Object.keys(INSTANCE_CLASSES).map((c) => c.split('.')[1]))].join(', ');
    throw new UnsupportedOnBackendError(
      `instance class "${instanceClass}" has no local mapping (known families: ${families}; sizes ` +
        `large..16xlarge/24xlarge, t3/t4g small..large): add it to core/backends/local/instance-classes.ts or ` +
        `pick a listed class`,
    );
  }
  const classBytes = spec.memoryGiB * GiB;
  const cap = localMemoryCap(host);
  const localMemoryBytes =
    Math.floor(Math.min(cap, Math.max(LOCAL_MEMORY_FLOOR, classBytes / LOCAL_MEMORY_DIVISOR)) / MiB) * MiB;
  return {
    instanceClass,
    vcpu: spec.vcpu,
    memoryGiB: spec.memoryGiB,
    cores: Math.max(1, Math.min(spec.vcpu, host.cpus)),
    localMemoryBytes,
    memoryScale: localMemoryBytes / classBytes,
    bufferPoolBytes: Math.floor((localMemoryBytes * 3) / 4 / MiB) * MiB,
    maxConnections: spec.maxConnections,
    memoryCapBytes: cap,
  };
}

/**
 * The CPUs (as a taskset list) for the `slot`-th server of a cell: `cores` consecutive CPUs
 * starting at slot*cores, wrapping around, so a writer and its readers use different CPUs where
 * the host has enough of them. undefined when the server may use every CPU anyway.
 */
export function cpuListFor(cores: number, slot: number, hostCpus: number): string | undefined {
  if (cores >= hostCpus) return undefined;
  const start = (slot * cores) % hostCpus;
  const cpus = Array.from({ length: cores }, (_, i) => (start + i) % hostCpus).sort((a, b) => a - b);
  return cpus.join(',');
}

export function formatBytes(bytes: number): string {
  if (bytes >= GiB && bytes % (GiB / 4) === 0) return `${bytes / GiB} GiB`;
  if (bytes >= MiB) return `${Math.round(bytes / MiB)} MiB`;
  return `${Math.round(bytes / 1024)} KiB`;
}

/**
 * What a self-managed server's EC2 instance has: the variant's class without "db." is the EC2
 * type (core/experiment/schema.ts instanceClass), with the class's vCPUs and memory from the table
 * above (the r families' EC2 types and DB classes have the same sizes) and the class's default
 * max_connections, for core/aurora/server-config.ts renderServerOptions.
 */
export function serverHardware(instanceClass: string): { memoryBytes: number; vcpu: number; maxConnections: number } {
  const spec = INSTANCE_CLASSES[instanceClass];
  if (!spec)
    throw new UnsupportedOnBackendError(
      `instance class "${instanceClass}" has no known vCPU and memory: add it to ` +
        `core/backends/local/instance-classes.ts or pick a listed class`,
    );
  return { memoryBytes: spec.memoryGiB * GiB, vcpu: spec.vcpu, maxConnections: spec.maxConnections };
}
