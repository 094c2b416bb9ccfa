/**
 * What an RDS instance class becomes on one local machine. docs/local-backend.md has the table.
 * The server gets min(vCPU, host CPUs) cores and 1/64 of the class memory, capped at 1/8 of the host's.
 * The class default of max_connections stays, since connection limits are behaviour a study measures.
 */
import { availableParallelism, totalmem } from 'node:os';
import { UnsupportedOnBackendError } from '../../backend';
import { GIB_PER_ACU, isServerless } from '../../aurora/aurora-configurations';

/** @internal exported for its tests */
export interface InstanceClassSpec {
  readonly vcpu: number;
  readonly memoryGiB: number;
  /** Aurora MySQL's default for the class. See AWS, Aurora User Guide, "Maximum connections". */
  readonly maxConnections: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * vCPU and memory per size of the memory-optimised r families. They are the same in every r family.
 * See AWS, Aurora User Guide, "Hardware specifications for DB instance classes for Aurora".
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

/** @internal exported for its tests */
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
  /** DBInstanceClassMemory in local formulas. */
  readonly localMemoryBytes: number;
  /** Local memory over class memory. Absolute memory sizes in a spec are scaled by it. */
  readonly memoryScale: number;
  readonly bufferPoolBytes: number;
  readonly maxConnections: number;
  /** The most memory one local server gets. */
  readonly memoryCapBytes: number;
}

/** @internal exported for its tests */
export function localMemoryCap(host: HostResources): number {
  return Math.max(256 * MiB, Math.floor(host.memoryBytes / 8 / MiB) * MiB);
}

/**
 * The provisioned class a Serverless v2 instance stands in as where nothing scales it.
 * That is the smallest r class with the memory of its largest capacity, at most the table's largest.
 * @internal exported for its tests
 */
export function serverlessStandIn(maxAcu: number): string {
  const sizes = Object.entries(R_SIZES).sort(([, a], [, b]) => a.memoryGiB - b.memoryGiB);
  const fits = sizes.find(([, spec]) => spec.memoryGiB >= maxAcu * GIB_PER_ACU) ?? sizes[sizes.length - 1]!;
  return `db.r6g.${fits[0]}`;
}

/**
 * The local shape of `instanceClass`. A db.serverless class takes the shape of its stand-in at `maxAcu`.
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
 * The taskset CPU list for the `slot`-th server of a cell.
 * Consecutive slots get different CPUs, so a writer and its readers do not share them where the host has enough.
 * Undefined when the server may use every CPU anyway.
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
 * The EC2 instance of a self-managed server. Its type is the variant's class without "db.".
 * The r families' EC2 types have the same sizes as their DB classes, so the table above serves both.
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
