/**
 * Server sizing is not scaled here: the local backend maps each instance class to local memory,
 * buffer pool and max_connections itself (docs/local-backend.md), S2's 12G buffer pool included.
 * Data larger than a variant's absolute buffer pool is scaled like that pool, so it stays larger.
 *
 * Scaling an experiment down for a local rehearsal (`--scale small`): the same variants, workloads
 * and sweeps, with fewer rows, shorter steps, fewer thread/rate points and fewer clients, so a user
 * can run any study on a laptop in minutes before paying for it on AWS. Every change is returned
 * as a note, and so is every part of the study only AWS can do: the plan names them instead of
 * skipping them silently.
 */
import type { PlanNote } from './notes';
import { SpecSchema, type Spec } from './schema';
import { roundsSpan } from './rounds';

export type Scale = 'full' | 'small';
export const SCALES: readonly Scale[] = ['full', 'small'];

/** The limits of the small scale. */
const SMALL = {
  tables: 4,
  tableSize: 10_000,
  prepareThreads: 4,
  durationS: 8,
  warmupS: 1,
  reportIntervalS: 1,
  /** Thread and rate sweeps keep at most this many points (first and last always kept). */
  sweepPoints: 5,
  maxThreads: 1024,
  repeats: 2,
  clients: 2,
  /**
   * A rate sweep's offered rates, as multiples of this machine's capacity measured first by an
   * unlimited-rate probe: the AWS rates (thousands of transactions/s for an r6g) would all
   * overload or all track here. Two below the capacity, one just above it (the knee), and one far
   * above: sysbench 1.0.20 stops a run when its backlog reaches 131072 events (src/sysbench.c,
   * MAX_QUEUE_LEN), so only a rate several times the capacity overflows within a short step and
   * shows the overloaded measurement. 6x: at this machine's ~5k-13k/s the backlog grows 25k-65k
   * events/s and overflows after 2-5 s, leaving intervals that measured the achieved rate (20x
   * overflowed before sysbench's first 1-s report).
   */
  ratesOfCapacity: [0.5, 0.9, 1.5, 6],
} as const;

/**
 * The local backend gives a server 1/64 of its class's memory and scales an absolute
 * innodb_buffer_pool_size the same way (core/backends/local/instance-classes.ts, LOCAL_MEMORY_DIVISOR;
 * a test keeps the two equal: this layer may not import the backend).
 */
const LOCAL_MEMORY_DIVISOR = 64;

/** About what one sysbench sbtest row takes in InnoDB (clustered row of ~190 bytes plus the k index). */
const SYSBENCH_ROW_BYTES = 240;

const GIB = 1024 ** 3;
const formatGiB = (bytes: number) => `${(bytes / GIB).toFixed(bytes < 10 * GIB ? 1 : 0)} GiB`;

/** An absolute size in bytes: a number, or 512K/64M/12G (binary multiples); undefined for a formula. */
function absoluteBytes(value: string | number | boolean | undefined): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return undefined;
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTkmgt])?(?:i?[Bb])?\s*$/.exec(value);
  if (!m) return undefined;
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[(m[2] ?? '').toLowerCase()] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

/**
 * Where a variant sets an absolute buffer pool (its own parameters or its template's) smaller than the
 * study's full-scale data: the largest such pool and the data's estimated size. undefined otherwise.
 * @internal exported for its tests (a test seam)
 */
export function dataOverBufferPool(spec: Spec): { poolBytes: number; dataBytes: number } | undefined {
  const dataBytes = spec.data.tables * spec.data.tableSize * SYSBENCH_ROW_BYTES;
  const pools = spec.variants.map((v) => {
    const t = v.parameterTemplate !== undefined ? spec.parameterTemplates[v.parameterTemplate] : undefined;
    const sources = [v.instanceParameters, v.clusterParameters, t?.instanceParameters, t?.clusterParameters];
    const set = sources.find((p) => p?.['innodb_buffer_pool_size'] !== undefined);
    return absoluteBytes(set?.['innodb_buffer_pool_size']);
  });
  if (pools.length === 0 || pools.some((p) => p === undefined)) return undefined;
  const poolBytes = Math.max(...(pools as number[]));
  return dataBytes > poolBytes ? { poolBytes, dataBytes } : undefined;
}

export interface ScaledSpec {
  readonly spec: Spec;
  /** What was scaled, and what only AWS can do, as plan notes. */
  readonly notes: readonly PlanNote[];
}

/**
 * At most `max` points, evenly spread over the sorted list, always the first and the last.
 * @internal exported for its tests (a test seam)
 */
export function thinSweep(values: readonly number[], max: number): number[] {
  const sorted = [...new Set(values)].sort((a, b) => a - b);
  if (sorted.length <= max) return sorted;
  const picked = new Set<number>();
  for (let k = 0; k < max; k++) picked.add(sorted[Math.round((k * (sorted.length - 1)) / (max - 1))]!);
  return [...picked].sort((a, b) => a - b);
}

/** The parts of a spec only AWS can do, named for the plan of a local run. */
function awsOnlyNotes(spec: Spec): PlanNote[] {
  const notes: PlanNote[] = [];
  const classes = [...new Set(spec.variants.map((v) => v.instanceClass))];
  if (classes.length > 1) {
    notes.push({
      level: 'warning',
      path: 'variants[*].instanceClass',
      message:
        `instance classes (${classes.join(', ')}) are only emulated locally (memory, buffer pool and ` +
        `max_connections scaled per class, docs/local-backend.md) on this machine's CPUs: ${comparedOnAws(classes)} ` +
        `compared on AWS only; locally a difference between them cannot be attributed to the class`,
    });
  }
  spec.variants.forEach((v, i) => {
    if (v.writeForwarding?.enabled) {
      notes.push({
        level: 'warning',
        path: `variants[${i}].writeForwarding`,
        message:
          'local write forwarding, the aurora_replica_read_consistency levels (EVENTUAL/SESSION/GLOBAL) and ' +
          'the aurora_fwd_writer_max_connections_pct limit are Aurora features: AWS only. The local rehearsal ' +
          'runs the reader steps as a client-side emulation on MariaDB GTID replication ' +
          '(client/workloads/wf_emulation.lua: writes on a second connection to the writer, SESSION/GLOBAL as ' +
          "GTID waits): the study's method and what waiting for replication costs here, not Aurora's forwarding",
      });
    }
    const auroraParams = [...Object.keys(v.clusterParameters), ...Object.keys(v.instanceParameters)].filter((k) =>
      k.startsWith('aurora_'),
    );
    if (auroraParams.length > 0) {
      notes.push({
        level: 'info',
        path: `variants[${i}].clusterParameters`,
        message: `${auroraParams.join(', ')}: Aurora parameters, not applicable to MariaDB (AWS only)`,
      });
    }
  });
  spec.workloads.forEach((w, i) => {
    if (w.script !== undefined && !w.test) {
      const manyClients = spec.variants.some((v) => (w.clients ?? v.clients.count) > 1);
      if (manyClients || /fullscan/i.test(w.script)) {
        notes.push({
          level: 'info',
          path: `workloads[${i}]`,
          message:
            'network throughput per instance class comes from CloudWatch ' +
            'NetworkTransmitThroughput/NetworkReceiveThroughput and the class network limits apply only on ' +
            'AWS; locally the traffic is loopback with no class limit, so a point can be CPU-bound, ' +
            'host-bound, client-bound or unclear, but never network-bound',
        });
      }
    }
    const options = w.options as Record<string, unknown>;
    if (typeof options['consistency'] === 'string' && options['consistency'] !== '') {
      notes.push({
        level: 'info',
        path: `workloads[${i}].options.consistency`,
        message: `aurora_replica_read_consistency ${options['consistency']}: Aurora only`,
      });
    }
  });
  if (spec.budget !== undefined) {
    notes.push({
      level: 'info',
      path: 'budget',
      message: `budget.maxUsd ${spec.budget.maxUsd} applies to AWS runs; a local run costs nothing`,
    });
  }
  return notes;
}

/**
 * What only AWS compares between these classes: the processor family where it differs, the size where it does.
 * @internal exported for its tests (a test seam)
 */
export function comparedOnAws(classes: readonly string[]): string {
  const parts = classes.map((c) => c.split('.'));
  const families = new Set(parts.map((p) => p[1] ?? ''));
  const sizes = new Set(parts.map((p) => p[2] ?? ''));
  const what = [
    ...(families.size > 1 ? ['processor families (such as Graviton vs Intel)'] : []),
    ...(sizes.size > 1 ? ['class sizes'] : []),
  ];
  return what.length > 0 ? `${what.join(' and ')} are` : 'the classes are';
}

/**
 * The spec at a scale. 'full' returns it unchanged (no notes); 'small' shrinks it for a local
 * rehearsal and lists every change. The result is validated again, so a scaled spec is a valid spec.
 */
export function scaleSpec(spec: Spec, scale: Scale): ScaledSpec {
  if (scale === 'full') return { spec, notes: [] };
  // scale is 'small' here: the type has two members and callers
  // pass only those (commander's choices, PreparePlanOptions).
  const notes: PlanNote[] = [];
  const changed = (path: string, message: string): void => {
    notes.push({ level: 'info', path, message: `scaled for a local rehearsal: ${message}` });
  };
  const data = { ...spec.data };
  const overPool = dataOverBufferPool(spec);
  if (overPool !== undefined) {
    // The study's data is larger than its buffer pool: keep that, scaling the rows as the local
    // backend scales the pool (like the instance memory), instead of cutting them to SMALL.tableSize.
    data.tables = Math.min(data.tables, SMALL.tables);
    data.tableSize = Math.ceil((spec.data.tables * spec.data.tableSize) / LOCAL_MEMORY_DIVISOR / data.tables);
    changed(
      'data',
      `${spec.data.tables} x ${spec.data.tableSize.toLocaleString('en-US')} rows ` +
        `-> ${data.tables} x ${data.tableSize.toLocaleString('en-US')}: 1/${LOCAL_MEMORY_DIVISOR} of the rows, ` +
        `as the ${formatGiB(overPool.poolBytes)} buffer pool is 1/${LOCAL_MEMORY_DIVISOR} locally, so the data ` +
        `stays larger than the buffer pool (about ${(overPool.dataBytes / overPool.poolBytes).toFixed(1)}x, ` +
        `about ${formatGiB(overPool.dataBytes)} at full scale)`,
    );
  } else if (data.tables > SMALL.tables || data.tableSize > SMALL.tableSize) {
    changed(
      'data',
      `${spec.data.tables} x ${spec.data.tableSize.toLocaleString('en-US')} rows ` +
        `-> ${Math.min(data.tables, SMALL.tables)} ` +
        `x ${Math.min(data.tableSize, SMALL.tableSize).toLocaleString('en-US')}`,
    );
    data.tables = Math.min(data.tables, SMALL.tables);
    data.tableSize = Math.min(data.tableSize, SMALL.tableSize);
  }
  data.prepareThreads = Math.min(data.prepareThreads, SMALL.prepareThreads);
  const defaults = {
    ...spec.defaults,
    durationS: Math.min(spec.defaults.durationS, SMALL.durationS),
    warmupS: Math.min(spec.defaults.warmupS, SMALL.warmupS),
    reportIntervalS: Math.min(spec.defaults.reportIntervalS, SMALL.reportIntervalS),
  };
  changed(
    'defaults',
    `steps of at most ${SMALL.durationS} s (+${SMALL.warmupS} s warm-up), ${SMALL.reportIntervalS} s report interval`,
  );
  const workloads = spec.workloads.map((w, i) => {
    const threads = thinSweep(
      w.threads.map((t) => Math.min(t, SMALL.maxThreads)),
      SMALL.sweepPoints,
    );
    const positiveRates = w.rates.filter((r) => r > 0);
    // A sweep of absolute rates becomes a sweep around the capacity measured on this machine.
    const aroundCapacity = positiveRates.length >= 2 && w.ratesOfCapacity === undefined;
    const rates = aroundCapacity
      ? [0]
      : [
          ...thinSweep(positiveRates, SMALL.sweepPoints - (w.rates.includes(0) ? 1 : 0)),
          ...(w.rates.includes(0) ? [0] : []),
        ];
    if (threads.join() !== [...w.threads].sort((a, b) => a - b).join())
      changed(`workloads[${i}].threads`, `threads [${w.threads.join(', ')}] -> [${threads.join(', ')}]`);
    if (aroundCapacity) {
      changed(
        `workloads[${i}].rates`,
        `rates [${w.rates.join(', ')}] -> an unlimited-rate capacity probe first, ` +
          `then ${SMALL.ratesOfCapacity.map((m) => `${m}x`).join(', ')} its achieved rate (ratesOfCapacity): ` +
          `this machine's capacity is not the AWS classes'`,
      );
    } else if (rates.length !== w.rates.length)
      changed(`workloads[${i}].rates`, `rates [${w.rates.join(', ')}] -> [${rates.join(', ')}]`);
    const out = {
      ...w,
      threads,
      rates,
      ...(aroundCapacity ? { ratesOfCapacity: [...SMALL.ratesOfCapacity] } : {}),
      ...(w.durationS !== undefined ? { durationS: Math.min(w.durationS, SMALL.durationS) } : {}),
      ...(w.warmupS !== undefined ? { warmupS: Math.min(w.warmupS, SMALL.warmupS) } : {}),
      ...(w.reportIntervalS !== undefined
        ? { reportIntervalS: Math.min(w.reportIntervalS, SMALL.reportIntervalS) }
        : {}),
      ...(w.clients !== undefined ? { clients: Math.min(w.clients, SMALL.clients) } : {}),
    };
    return out;
  });
  const variants = spec.variants.map((v, i) => {
    const clients = { ...v.clients, count: Math.min(v.clients.count, SMALL.clients) };
    if (clients.count !== v.clients.count)
      changed(`variants[${i}].clients.count`, `${v.clients.count} clients -> ${clients.count}`);
    return { ...v, clients };
  });
  const repeats = smallRepeats(spec.repeats);
  const text = (r: Spec['repeats']) =>
    typeof r === 'number' ? `${r} repeats` : `${roundsSpan(r.min, r.max)} round${r.max === 1 ? '' : 's'}`;
  if (text(repeats) !== text(spec.repeats)) changed('repeats', `${text(spec.repeats)} -> ${text(repeats)}`);
  const name = spec.name.length <= 34 ? `${spec.name}-small` : `${spec.name.slice(0, 34).replace(/-+$/, '')}-small`;
  const scaled = SpecSchema.parse({ ...spec, name, data, defaults, workloads, variants, repeats, maxConcurrency: 1 });
  return { spec: scaled, notes: [...notes, ...awsOnlyNotes(spec)] };
}

/** At most SMALL.repeats rounds: the same cells a small rehearsal planned before. */
function smallRepeats(repeats: Spec['repeats']): Spec['repeats'] {
  if (typeof repeats === 'number') return Math.min(repeats, SMALL.repeats);
  return { min: Math.min(repeats.min, SMALL.repeats), max: Math.min(repeats.max, SMALL.repeats) };
}
