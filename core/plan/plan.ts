/** Expands a validated spec into the plan the workflow runs, with notes on what the backend cannot do. */
import { randomBytes } from 'node:crypto';
import type { Spec, Variant, Workload } from '../experiment/schema';
import { READ_ONLY_TESTS } from '../experiment/read-only-tests';
import { maxRepeats, repeatRange } from '../experiment/rounds';
import { auroraParameterCaveats } from '../experiment/aurora-parameters';
import { auroraConfigurationNotes } from '../experiment/aurora-configurations';
import { engineNotes, variantEngine } from '../experiment/engine-checks';
import { isServerless, MIN_ACU_WITHOUT_PAUSE } from '../aurora/aurora-configurations';
import { canonicalJson } from '../experiment/canonical-json';
import { sha256 } from '../experiment/validate';
import { buildSysbenchArgs, SysbenchOptionError } from './sysbench-args';
import type {
  BackendKind,
  CellOrder,
  CellPlan,
  DuetPlan,
  Plan,
  PlanEstimate,
  PlanNote,
  ResolvedVariant,
  StepPlan,
  WriteForwardingSupport,
} from './types';
import { AuroraBenchError } from '../errors';
import { SeededRandom } from '../random';

/**
 * Per-backend time assumptions in seconds, for the estimate and the run's ETA.
 * provisionS is a cell's whole set-up and teardown. teardownS is the part after its last step.
 */
export const BACKEND_TIMES: Record<
  BackendKind,
  { provisionS: number; teardownS: number; stepOverheadS: number; rowsPerS: number }
> = {
  // Locally a datadir copy and mariadbd start take about 2 s. sysbench prepares about 100k rows/s.
  local: { provisionS: 5, teardownS: 1, stepOverheadS: 2, rowsPerS: 100_000 },
  // On AWS a cluster takes 15-20 min to create and about 10 to delete. Clients take about 2 min.
  aws: { provisionS: 30 * 60, teardownS: 10 * 60, stepOverheadS: 30, rowsPerS: 200_000 },
};

export class PlanError extends AuroraBenchError {
  override readonly name = 'PlanError';
  /** `source` names the spec file or execution input in the message. */
  constructor(
    readonly notes: readonly PlanNote[],
    readonly source?: string,
  ) {
    super(
      `${source ? `${source}: ` : ''}the experiment cannot run as specified:\n` +
        notes.map((n) => `  - ${n.path}: ${n.message}`).join('\n'),
    );
  }
}

export interface PlanOptions {
  readonly backend: BackendKind;
  /** Custom Lua bodies by file name. */
  readonly scripts?: Readonly<Record<string, string>>;
  /** Reuse an id on a retried execution. Otherwise one is made from the spec name and time. */
  readonly runId?: string;
  readonly now?: Date;
  /** The spec file, named in a PlanError. */
  readonly source?: string;
  /**
   * What the running backend does with writes sent to a reader of a write-forwarding variant.
   * Without it, the backend kind's declared value applies, for a plan made without a backend.
   */
  readonly writeForwarding?: WriteForwardingSupport;
}

/**
 * Backend.writeForwarding of each backend kind, for plans made without one.
 * A test holds it to the backends' own declarations.
 * @internal Exported for its tests.
 */
export const DECLARED_WRITE_FORWARDING: Readonly<Record<BackendKind, WriteForwardingSupport>> = {
  local: 'emulated',
  aws: 'native',
};

/** The write forwarding a plan is made for. */
export const writeForwardingOf = (options: Pick<PlanOptions, 'backend' | 'writeForwarding'>): WriteForwardingSupport =>
  options.writeForwarding ?? DECLARED_WRITE_FORWARDING[options.backend];

/** A fresh seed for a randomized order. The plan records it, so the order can be asked for again. */
export function drawOrderSeed(): number {
  return randomBytes(4).readUInt32BE(0);
}

function makeRunId(specName: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${specName}-${stamp}-${randomBytes(2).toString('hex')}`;
}

/** A variant's local-only what-if settings, merged over its template's. */
function localOnlyParametersOf(spec: Spec, variant: Variant): Record<string, string | number | boolean> {
  const template =
    variant.parameterTemplate !== undefined ? spec.parameterTemplates[variant.parameterTemplate] : undefined;
  return { ...(template?.localOnlyParameters ?? {}), ...(variant.localOnlyParameters ?? {}) };
}

export function hasLocalOnlyParameters(spec: Spec, variant: Variant): boolean {
  return Object.keys(localOnlyParametersOf(spec, variant)).length > 0;
}

/** JSON path of a variant's local-only setting, its own or its template's. */
function localOnlyPath(spec: Spec, vi: number, name: string): string {
  const v = spec.variants[vi]!;
  return v.localOnlyParameters && name in v.localOnlyParameters
    ? `variants[${vi}].localOnlyParameters.${name}`
    : `parameterTemplates.${v.parameterTemplate}.localOnlyParameters.${name}`;
}

function resolveVariant(spec: Spec, variant: Variant): ResolvedVariant {
  const template =
    variant.parameterTemplate !== undefined ? spec.parameterTemplates[variant.parameterTemplate] : undefined;
  return {
    name: variant.name,
    engine: variantEngine(spec, variant),
    instanceClass: variant.instanceClass,
    ...(variant.az !== undefined ? { az: variant.az } : {}),
    readers: variant.readers,
    clusterParameters: { ...(template?.clusterParameters ?? {}), ...variant.clusterParameters },
    instanceParameters: { ...(template?.instanceParameters ?? {}), ...variant.instanceParameters },
    ...(hasLocalOnlyParameters(spec, variant) ? { localOnlyParameters: localOnlyParametersOf(spec, variant) } : {}),
    ...(variant.writeForwarding !== undefined ? { writeForwarding: variant.writeForwarding } : {}),
    ...(isServerless(variant.instanceClass) && variant.maxAcu !== undefined
      ? {
          serverless: {
            minAcu: variant.minAcu ?? MIN_ACU_WITHOUT_PAUSE,
            maxAcu: variant.maxAcu,
            readerScaling: variant.readerScaling ?? 'with-writer',
          },
        }
      : {}),
    ...(variant.storage !== undefined ? { storage: variant.storage } : {}),
    performanceInsights: variant.performanceInsights,
    clients: variant.clients,
  };
}

function workloadWrites(w: Workload): boolean {
  // A custom script may write. Only stock read-only tests are known not to.
  return w.script !== undefined || !READ_ONLY_TESTS.has(w.test ?? '');
}

/**
 * Cells in execution order.
 * interleaved rotates the variant order every round.
 * randomized shuffles each round with a seeded generator, so no variant keeps a favoured position.
 * See Abedi and Brecht, "Conducting Repeatable Experiments in Highly Variable Cloud Computing Environments", ICPE 2017.
 * duet keeps each round's variants together, since they run at once.
 * sequential runs all repeats of a variant before the next.
 * @internal Exported for its tests.
 */
export function orderCells(
  variantCount: number,
  repeats: number,
  order: CellOrder,
  seed = 0,
): { variantIndex: number; repeat: number }[] {
  const cells: { variantIndex: number; repeat: number }[] = [];
  if (order === 'sequential') {
    for (let v = 0; v < variantCount; v++)
      for (let r = 1; r <= repeats; r++) cells.push({ variantIndex: v, repeat: r });
    return cells;
  }
  const rng = new SeededRandom(seed);
  for (let r = 1; r <= repeats; r++) {
    const round = Array.from({ length: variantCount }, (_, k) =>
      order === 'interleaved' ? (k + r - 1) % variantCount : k,
    );
    if (order === 'randomized') rng.shuffle(round);
    for (const variantIndex of round) cells.push({ variantIndex, repeat: r });
  }
  return cells;
}

/** The id of a round's duet. It ends in "-duet", which no cell id does. */
const duetId = (repeat: number): string => `r${repeat}-duet`;

/**
 * Order "duet" groups each round's cells into one DuetPlan.
 * A step starts on all members at once, so they must run the same steps.
 * A variant whose steps the backend narrowed differently, or a lone variant, is refused.
 */
function duetsOf(cells: readonly CellPlan[], spec: Spec, source: string | undefined): DuetPlan[] {
  const rounds = new Map<number, CellPlan[]>();
  for (const c of cells) rounds.set(c.repeat, [...(rounds.get(c.repeat) ?? []), c]);
  const duets: DuetPlan[] = [];
  for (const [repeat, members] of rounds) {
    if (members.length < 2) {
      throw new PlanError(
        [
          {
            level: 'refused',
            path: 'order',
            message:
              `order "duet" needs at least 2 variants in each round, but round ${repeat} has only "` +
              (members[0]?.variant.name ?? '?') +
              `" on this backend (the others were refused: see the notes); use order "interleaved" here`,
          },
        ],
        source,
      );
    }
    const first = members[0]!;
    const steps = first.steps.map((st) => st.stepId).join(',');
    const differing = members.find((m) => m.steps.map((st) => st.stepId).join(',') !== steps);
    if (differing !== undefined) {
      const vi = spec.variants.findIndex((v) => v.name === differing.variant.name);
      throw new PlanError(
        [
          {
            level: 'refused',
            path: `variants[${vi}]`,
            message:
              `order "duet" starts every step on all variants at once, but "${differing.variant.name}" runs steps ` +
              differing.steps.map((st) => st.stepId).join(', ') +
              ` and "${first.variant.name}" runs ` +
              first.steps.map((st) => st.stepId).join(', ') +
              ` on this backend; give the variants the same steps, or use order "interleaved"`,
          },
        ],
        source,
      );
    }
    duets.push({
      cellId: duetId(repeat),
      index: duets.length,
      repeat,
      members: members.map((m) => m.cellId),
      stepCount: first.steps.length,
    });
  }
  return duets;
}

function stepIdFor(w: Workload, threads: number, rate: number, rateOfCapacity?: number): string {
  if (rateOfCapacity !== undefined) return `${w.name}-t${threads}-c${Math.round(rateOfCapacity * 100)}`;
  return `${w.name}-t${threads}` + (rate > 0 ? `-r${rate}` : '');
}

/**
 * The rate points of a workload, in run order.
 * With ratesOfCapacity the unlimited probe comes first, then the multiples in increasing order.
 * Each multiple needs the probe's achieved rate, and stopAtOverload needs lower rates first.
 */
function ratePoints(w: Workload): { rate: number; rateOfCapacity?: number }[] {
  if (w.ratesOfCapacity === undefined) return w.rates.map((rate) => ({ rate }));
  const multiples = [...new Set(w.ratesOfCapacity)].sort((a, b) => a - b);
  return [{ rate: 0 }, ...multiples.map((m) => ({ rate: 0, rateOfCapacity: m }))];
}

function scriptRef(w: Workload, scripts: Readonly<Record<string, string>>): StepPlan['script'] {
  if (w.script === undefined) return undefined;
  const name = w.script.split('/').pop()!;
  const body = scripts[name];
  if (body === undefined)
    throw new PlanError([
      { level: 'refused', path: `workloads.${w.name}.script`, message: `script "${name}" was not loaded` },
    ]);
  return { name, sha256: sha256(body) };
}

function buildSteps(spec: Spec, scripts: Readonly<Record<string, string>>, clientCount: number): StepPlan[] {
  const steps: StepPlan[] = [];
  const prepared = new Set<string>();
  for (const w of spec.workloads) {
    const dataSet = w.script ?? 'sbtest';
    for (const threads of w.threads) {
      for (const { rate, rateOfCapacity } of ratePoints(w)) {
        const durationS = w.durationS ?? spec.defaults.durationS;
        const warmupS = w.warmupS ?? spec.defaults.warmupS;
        const prepare = spec.data.reuse === 'step' || !prepared.has(dataSet);
        prepared.add(dataSet);
        const script = scriptRef(w, scripts);
        steps.push({
          stepId: stepIdFor(w, threads, rate, rateOfCapacity),
          index: steps.length,
          workload: w.name,
          ...(w.test !== undefined ? { test: w.test } : {}),
          ...(script !== undefined ? { script } : {}),
          options: w.options,
          threads,
          rate,
          ...(rateOfCapacity !== undefined ? { rateOfCapacity } : {}),
          ...(w.stopAtOverload ? { stopAtOverload: true } : {}),
          durationS,
          warmupS,
          reportIntervalS: w.reportIntervalS ?? spec.defaults.reportIntervalS,
          percentile: w.percentile ?? spec.defaults.percentile,
          target: w.target,
          clients: Math.min(w.clients ?? clientCount, clientCount),
          prepare,
          waitS: warmupS + durationS + 1,
        });
      }
    }
  }
  return steps;
}

/** What a backend cannot do, per variant and workload. Warnings still run, and refusals drop steps. */
function backendNotes(spec: Spec, backend: BackendKind, forwarding: WriteForwardingSupport): PlanNote[] {
  const notes: PlanNote[] = [];
  spec.workloads.forEach((w, wi) => {
    spec.variants.forEach((v) => {
      const clients = Math.min(w.clients ?? v.clients.count, v.clients.count);
      if (w.target === 'all-readers' && clients < v.readers) {
        notes.push({
          level: 'warning',
          path: `workloads[${wi}].clients`,
          message:
            `all-readers with ${clients} client(s) loads only ${clients} of the ${v.readers} readers of ` +
            `"${v.name}" (one client per reader): give the variant and workload at least ${v.readers} clients`,
        });
      }
    });
  });
  for (const c of auroraParameterCaveats(spec)) notes.push({ level: 'warning', path: c.path, message: c.message });
  notes.push(...engineNotes(spec, backend));
  notes.push(...auroraConfigurationNotes(spec, backend));
  if (spec.engine.kind === 'aurora-mysql' && /^2\.|^5\.7\./.test(spec.engine.version)) {
    // AWS, "Using Amazon RDS Extended Support", ends Aurora MySQL version 2's standard support on 2024-10-31.
    notes.push({
      level: 'warning',
      path: 'engine.version',
      message:
        'Aurora MySQL 2 (MySQL 5.7 compatible) is past the end of standard support (2024-10-31): RDS enrolls ' +
        'new version 2 clusters in Extended Support, billed on top of the instance price, and offers only its ' +
        'last minor versions; use a 3.x version unless the study needs MySQL 5.7',
    });
  }
  spec.variants.forEach((v, vi) => {
    const localOnly = localOnlyParametersOf(spec, v);
    const names = Object.keys(localOnly);
    if (names.length === 0) return;
    if (backend === 'aws') {
      notes.push({
        level: 'refused',
        path: `variants[${vi}].localOnlyParameters`,
        message:
          `variant "${v.name}" is a local-only what-if: ${names.join(', ')} exist only in the local ` +
          `rehearsal on MariaDB (Aurora does not let you set them), so it is not planned on AWS; run it locally, ` +
          `or remove its localOnlyParameters to run the variant on Aurora`,
      });
      return;
    }
    notes.push({
      level: 'info',
      path: `variants[${vi}].localOnlyParameters`,
      message:
        `local only: ` +
        names
          .map(
            (n) =>
              `${n}=${String(localOnly[n])}` +
              (localOnlyPath(spec, vi, n).startsWith('parameterTemplates')
                ? ` (from parameterTemplates.${v.parameterTemplate})`
                : ''),
          )
          .join(', ') +
        ` applied to the local MariaDB servers of "${v.name}" for this what-if; Aurora does not let you set ` +
        `them (an AWS plan refuses this variant)`,
    });
  });
  spec.variants.forEach((v, vi) => {
    notes.push(...forwardingNotes(spec, v, vi, forwarding));
    if (backend !== 'local') return;
    if (v.performanceInsights) {
      notes.push({
        level: 'info',
        path: `variants[${vi}].performanceInsights`,
        message:
          'Performance Insights is AWS only; locally /proc and the server status counters (SHOW GLOBAL STATUS, ' +
          'pg_stat_*) are sampled instead',
      });
    }
    if (v.az !== undefined) {
      notes.push({
        level: 'info',
        path: `variants[${vi}].az`,
        message: `AZ "${v.az}" has no local meaning: all servers run on 127.0.0.1`,
      });
    }
  });
  return notes;
}

/**
 * What a backend without native write forwarding says of workloads that write to this variant's reader.
 * They are either emulated, or refused and dropped by dropRefusedSteps.
 */
function forwardingNotes(spec: Spec, v: Variant, vi: number, forwarding: WriteForwardingSupport): PlanNote[] {
  if (forwarding === 'native') return [];
  const wf = v.writeForwarding;
  const notes: PlanNote[] = forwardedWorkloads(spec, v).map((w) => {
    const path = `workloads[${spec.workloads.indexOf(w)}]`;
    if (forwarding === 'none') {
      return {
        level: 'refused',
        path,
        message:
          `workload "${w.name}" on variant "${v.name}" sends writes to a reader: this backend cannot ` +
          `run write forwarding (run with --aws)`,
      };
    }
    return emulatable(w)
      ? {
          level: 'warning',
          path,
          message:
            `workload "${w.name}" on variant "${v.name}" sends writes to a reader: MariaDB replicas ` +
            `cannot forward writes, so locally it runs as a client-side EMULATION of Aurora write forwarding ` +
            `(client/workloads/wf_emulation.lua: reads on the reader, writes on a second connection to the ` +
            `writer, SESSION/GLOBAL as waits for GTIDs on real replication); the numbers are this ` +
            `machine's, not Aurora's`,
        }
      : {
          level: 'refused',
          path,
          message:
            `workload "${w.name}" on variant "${v.name}" sends writes to a reader: Aurora local write ` +
            `forwarding needs AWS (run with --aws); MariaDB replicas cannot forward writes, and the local ` +
            `emulation covers only ${EMULATED_WORKLOADS.join(', ')}`,
        };
  });
  if (forwarding === 'emulated' && wf?.enabled) {
    notes.push({
      level: 'warning',
      path: `variants[${vi}].writeForwarding`,
      message:
        `write forwarding and read consistency ${wf.consistency} are Aurora features: locally emulated ` +
        `on the client (wf_emulation.lua), not measured`,
    });
  }
  return notes;
}

/** The workloads the local write-forwarding emulation can run. */
const EMULATED_WORKLOADS = ['oltp_read_write', 'oltp_write_only', 'rw_consistency.lua'];
const emulatable = (w: Workload): boolean => EMULATED_WORKLOADS.includes(w.test ?? w.script?.split('/').pop() ?? '');

/**
 * The workloads that write to this variant's reader while it forwards writes.
 * Only Aurora's write forwarding, or the local emulation, can run them.
 */
export function forwardedWorkloads(spec: Spec, variant: Variant): Workload[] {
  return spec.workloads.filter(
    (w) => w.target !== 'writer' && workloadWrites(w) && variant.writeForwarding?.enabled === true,
  );
}

/**
 * Removes the steps a refusal names. A refusal that leaves a cell empty fails the plan.
 * A step that writes to a write-forwarding variant's reader is marked with its consistency level.
 * An emulating backend runs it where its emulation covers the workload. Other backends refuse it.
 */
function dropRefusedSteps(
  spec: Spec,
  variant: Variant,
  steps: StepPlan[],
  forwarding: WriteForwardingSupport,
): StepPlan[] {
  const forwarded = forwardedWorkloads(spec, variant);
  const runs = (w: Workload): boolean => forwarding === 'native' || (forwarding === 'emulated' && emulatable(w));
  const refusedWorkloads = new Set(forwarded.filter((w) => !runs(w)).map((w) => w.name));
  const forwardedNames = new Set(forwarded.map((w) => w.name));
  const levelOf = (s: StepPlan): string => {
    const own = (s.options as Record<string, unknown>)['consistency'];
    return typeof own === 'string' && own !== ''
      ? own.toUpperCase()
      : (variant.writeForwarding?.consistency ?? 'EVENTUAL');
  };
  const kept = steps
    .filter((s) => !refusedWorkloads.has(s.workload))
    .map((s) => (forwardedNames.has(s.workload) ? { ...s, forwardedWrites: { consistency: levelOf(s) } } : s));
  // Renumber, and move the data preparation onto the first kept step of each data set.
  const prepared = new Set<string>();
  return kept.map((s, index) => {
    const dataSet = s.script?.name ?? 'sbtest';
    const prepare = spec.data.reuse === 'step' || !prepared.has(dataSet);
    prepared.add(dataSet);
    return { ...s, index, prepare };
  });
}

export function estimate(cells: readonly CellPlan[], backend: BackendKind, maxConcurrency: number): PlanEstimate {
  const t = BACKEND_TIMES[backend];
  const cellTimes = cells.map((c) => {
    const prepareS =
      c.steps.filter((s) => s.prepare).length * Math.ceil((c.data.tables * c.data.tableSize) / t.rowsPerS);
    return prepareS + c.steps.reduce((acc, s) => acc + s.warmupS + s.durationS + t.stepOverheadS, 0);
  });
  // The workflow's Map items. A duet lasts as long as its slowest member.
  const items = new Map<string, number>();
  cells.forEach((c, i) => items.set(c.duet ?? c.cellId, Math.max(items.get(c.duet ?? c.cellId) ?? 0, cellTimes[i]!)));
  // Greedy list scheduling onto maxConcurrency lanes in plan order, as the Map state does.
  const lanes = new Array<number>(Math.max(1, maxConcurrency)).fill(0);
  items.forEach((ct) => {
    const i = lanes.indexOf(Math.min(...lanes));
    lanes[i]! += ct + t.provisionS;
  });
  return {
    wallTimeS: Math.max(...lanes),
    stepTimeS: cellTimes.reduce((a, b) => a + b, 0),
    provisionS: t.provisionS,
  };
}

/** Every workload's options through the command builder, for both phases. Problems go by JSON path. */
function checkSysbenchOptions(spec: Spec, cells: readonly CellPlan[]): PlanNote[] {
  const problems: PlanNote[] = [];
  const checked = new Set<string>();
  for (const cell of cells) {
    for (const step of cell.steps) {
      if (checked.has(step.workload)) continue;
      checked.add(step.workload);
      const wi = spec.workloads.findIndex((w) => w.name === step.workload);
      for (const phase of ['prepare', 'run'] as const) {
        try {
          buildSysbenchArgs(step, cell.data, phase);
        } catch (e) {
          if (!(e instanceof SysbenchOptionError)) throw e;
          problems.push({ level: 'refused', path: `workloads[${wi}].options`, message: e.message.split('\n')[0]! });
          break;
        }
      }
    }
  }
  return problems;
}

export function planRun(spec: Spec, options: PlanOptions): Plan {
  const now = options.now ?? new Date();
  const scripts = options.scripts ?? {};
  const forwarding = writeForwardingOf(options);
  const notes = backendNotes(spec, options.backend, forwarding);
  const cells: CellPlan[] = [];
  // A randomized order without a seed draws one here.
  // preparePlan draws it first and puts it in the spec, so PlanRun plans the same order.
  const orderSeed = spec.order === 'randomized' ? (spec.orderSeed ?? drawOrderSeed()) : undefined;
  if (orderSeed !== undefined) {
    notes.push({
      level: 'info',
      path: 'order',
      message:
        `randomized: each round's variants run in an order shuffled with seed ${orderSeed}` +
        (spec.orderSeed === undefined ? ' (drawn now)' : '') +
        `; "orderSeed": ${orderSeed} in the experiment repeats this order`,
    });
  }
  if (spec.order === 'duet') {
    notes.push({
      level: 'info',
      path: 'order',
      message:
        `duet: the ${spec.variants.length} variants of each round are provisioned together and every step ` +
        `starts on all of them at once (the next step when all are done), so their ratios come from ` +
        `time-paired intervals` +
        (options.backend === 'local'
          ? '; locally their servers and clients share this machine, so a disturbance reaches every variant at ' +
            'the same moment'
          : ''),
    });
  }
  for (const { variantIndex, repeat } of orderCells(spec.variants.length, maxRepeats(spec), spec.order, orderSeed)) {
    const variant = spec.variants[variantIndex]!;
    // A local-only what-if has no Aurora counterpart, so AWS refuses it with a note.
    if (options.backend === 'aws' && hasLocalOnlyParameters(spec, variant)) continue;
    const steps = dropRefusedSteps(spec, variant, buildSteps(spec, scripts, variant.clients.count), forwarding);
    if (steps.length === 0) continue;
    cells.push({
      cellId: `${variant.name}-r${repeat}`,
      index: cells.length,
      repeat,
      variant: resolveVariant(spec, variant),
      data: spec.data,
      steps,
      ...(spec.order === 'duet' ? { duet: duetId(repeat) } : {}),
    });
  }
  // sysbench options are checked now, before any cluster exists.
  const optionProblems = checkSysbenchOptions(spec, cells);
  if (optionProblems.length > 0) throw new PlanError(optionProblems, options.source);
  if (cells.length === 0) {
    const refused = notes.filter((n) => n.level === 'refused');
    throw new PlanError(
      refused.length > 0 ? refused : [{ level: 'refused', path: 'workloads', message: 'no step left to run' }],
      options.source,
    );
  }
  const duets = spec.order === 'duet' ? duetsOf(cells, spec, options.source) : undefined;
  // Every script the spec names, also for refused steps.
  // Planning the same plan for another backend, as the AWS cost of a local plan does, needs them.
  const usedScripts: Record<string, string> = {};
  for (const w of spec.workloads) {
    const name = w.script?.split('/').pop();
    if (name !== undefined && scripts[name] !== undefined) usedScripts[name] = scripts[name];
  }
  return {
    planVersion: 1,
    runId: options.runId ?? makeRunId(spec.name, now),
    specName: spec.name,
    specSha256: sha256(canonicalJson(spec)),
    backend: options.backend,
    region: spec.region,
    engine: { kind: spec.engine.kind, version: spec.engine.version },
    maxConcurrency: spec.maxConcurrency,
    ttlHours: spec.ttlHours,
    dt: now.toISOString().slice(0, 10),
    createdAt: now.toISOString(),
    cells,
    notes,
    estimate: estimate(cells, options.backend, spec.maxConcurrency),
    scripts: usedScripts,
    order: spec.order,
    ...(orderSeed !== undefined ? { orderSeed } : {}),
    ...(duets !== undefined ? { duets } : {}),
    ...(spec.questions !== undefined ? { rounds: repeatRange(spec) } : {}),
  };
}
