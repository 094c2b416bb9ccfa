/**
 * `aurora-bench import DIR|FILES` puts hand-run sysbench logs into the results lake as one run.
 * Its backend is "import", so `results`, `report`, `compare` and `history` read it beside aurora-bench's runs.
 * The rows are the workflow's, and the run row carries a spec and plan built from the mapping.
 * So a history groups the imported steps into series like any run's.
 *
 * Nothing is half-imported. Every log is parsed and mapped first.
 * The files are staged inside the lake where no reader sees them, then renamed into place.
 * A failure removes what was moved. A run id the lake has is refused.
 */
import { asLakeWriteError } from '../backends/local/local-lake';
import { importStagingDir, removeAbandonedStaging } from '../backends/local/import-staging';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { lakeTableFiles } from '../lake/duckdb';
import { filesOfRuns, lakeKeys, toJsonLines, type IntervalRow, type RunRow, type StepRow } from '../lake/rows';
import { stepRowsOf } from '../lake/step-rows';
import type { CellPlan, Plan, ResolvedVariant, StepPlan } from '../plan/types';
import type { PlanNote } from '../experiment/notes';
import type { Spec } from '../experiment/schema';
import { canonicalJson } from '../experiment/canonical-json';
import { sha256 } from '../experiment/validate';
import { parseSysbenchOutput } from '../sysbench/parser';
import type { ParsedOutput } from '../sysbench/types';
import { AuroraBenchError } from '../errors';
import { MIB, readUserText, UserFileError } from '../user-file';
import {
  assignFiles,
  headerFacts,
  ImportMappingError,
  resolveMapping,
  shownPath,
  type FileAssignment,
  type ImportFlags,
  type ImportMapping,
  type LogFacts,
} from './import-mapping';
import { toolInfo } from './tool-info';

/** The import could not be done as asked, and nothing was written. */
class ImportError extends AuroraBenchError {
  override readonly name = 'ImportError';
}

/** The workflow's plan shape, with the backend "import" and the engine only when the mapping names it. */
type ImportedPlan = Omit<Plan, 'backend' | 'engine'> & {
  readonly backend: 'import';
  readonly engine: Plan['engine'] | null;
};

export interface ImportOptions {
  /** Files and directories, walked with dot files skipped. */
  readonly paths: readonly string[];
  readonly lakeDir: string;
  readonly repoRoot: string;
  /** A JSON or YAML mapping file. */
  readonly mappingFile?: string;
  readonly flags: ImportFlags;
  readonly runId?: string;
  /** Keep logs that did not parse as failed steps instead of refusing the import. */
  readonly allowFailed?: boolean;
  /** One run per day the logs were taken, instead of one run. */
  readonly runPerDate?: boolean;
  readonly log: (line: string) => void;
}

export interface ImportResult {
  readonly runIds: readonly string[];
  readonly files: number;
  readonly failed: number;
}

interface LogFile {
  readonly facts: LogFacts;
  readonly text: string;
  readonly parsed: ParsedOutput;
  readonly reportIntervalS?: number;
}

/**
 * Every regular file under the paths given, in name order.
 * A directory's own files keep their path under it for patterns.
 */
function collectFiles(paths: readonly string[]): { path: string; relativePath: string }[] {
  const out: { path: string; relativePath: string }[] = [];
  for (const given of paths) {
    if (!existsSync(given)) throw new ImportError(`${shownPath(given)}: no such file or directory`);
    if (!statSync(given).isDirectory()) {
      out.push({ path: given, relativePath: given.slice(given.lastIndexOf('/') + 1) });
      continue;
    }
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.name.startsWith('.')) continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.isFile()) out.push({ path, relativePath: relative(given, path) });
      }
    };
    walk(given);
  }
  if (out.length === 0) throw new ImportError(`no log files in ${paths.map(shownPath).join(', ')}`);
  return out;
}

/** A mapping file is a few lines of JSON or YAML. */
const MAX_MAPPING_BYTES = MIB;
/** A day of 1-s intervals is about 20 MiB. */
const MAX_LOG_BYTES = 256 * MIB;

function readMappingFile(file: string): unknown {
  let text: string;
  try {
    text = readUserText(file, MAX_MAPPING_BYTES);
  } catch (e) {
    if (!(e instanceof UserFileError)) throw e;
    throw new ImportMappingError(file, [{ path: '', message: e.reason }]);
  }
  try {
    // YAML 1.2 reads JSON too. uniqueKeys refuses a key given twice.
    return parseYaml(text, { uniqueKeys: true }) as unknown;
  } catch (e) {
    throw new ImportMappingError(file, [
      { path: '', message: `not valid JSON or YAML: ${(e as Error).message.split('\n')[0]!}` },
    ]);
  }
}

const stepIdOf = (a: Pick<FileAssignment, 'workload' | 'threads' | 'rate'>): string =>
  `${a.workload}-t${a.threads}` + (a.rate > 0 ? `-r${a.rate}` : '');
const cellIdOf = (variant: string, repeat: number): string => `${variant}-r${repeat}`;
const DEFAULT_INSTANCE_CLASS = 'unknown';
const CLIENT_ID = 'log';

/** The run's spec, cells and steps as the mapping and the logs say. The notes name what they do not say. */
function buildPlan(
  mapping: ImportMapping,
  runId: string,
  assigned: readonly { a: FileAssignment; log: LogFile }[],
  createdAt: string,
  dt: string,
) {
  const variants = [...new Set(assigned.map(({ a }) => a.variant))];
  const workloads = [...new Set(assigned.map(({ a }) => a.workload))];
  const classOf = (v: string): string =>
    assigned.find(({ a }) => a.variant === v && a.instanceClass)?.a.instanceClass ?? DEFAULT_INSTANCE_CLASS;
  const resolved = (name: string): ResolvedVariant => ({
    name,
    ...(mapping.engine ? { engine: mapping.engine } : {}),
    instanceClass: classOf(name),
    readers: 0,
    clusterParameters: {},
    instanceParameters: {},
    performanceInsights: false,
    clients: { count: 1, instanceType: 'unknown', placement: 'any' },
  });
  const data = { tables: 0, tableSize: 0, reuse: 'cell' as const, prepareThreads: 0 };
  const repeats = Math.max(...assigned.map(({ a }) => a.repeat));
  const cells: CellPlan[] = [];
  const stepOf = new Map<string, StepPlan>();
  for (let repeat = 1; repeat <= repeats; repeat++) {
    for (const variant of variants) {
      const logs = assigned
        .filter(({ a }) => a.variant === variant && a.repeat === repeat)
        .sort(
          (x, y) =>
            workloads.indexOf(x.a.workload) - workloads.indexOf(y.a.workload) ||
            x.a.threads - y.a.threads ||
            x.a.rate - y.a.rate,
        );
      if (logs.length === 0) continue;
      const steps = logs.map(({ a, log }, index): StepPlan => {
        const summary = log.parsed.summary;
        const step: StepPlan = {
          stepId: stepIdOf(a),
          index,
          workload: a.workload,
          ...(a.test !== undefined ? { test: a.test } : {}),
          options: {},
          threads: a.threads,
          rate: a.rate,
          durationS: Math.round(summary?.totalTimeS ?? log.parsed.intervals.at(-1)?.t ?? 0),
          warmupS: 0,
          reportIntervalS: log.reportIntervalS ?? 0,
          percentile: summary?.latencyMs.percentile ?? 95,
          target: 'writer',
          clients: 1,
          prepare: false,
          waitS: 0,
        };
        stepOf.set(a.path, step);
        return step;
      });
      cells.push({
        cellId: cellIdOf(variant, repeat),
        index: cells.length,
        repeat,
        variant: resolved(variant),
        data,
        steps,
      });
    }
  }
  const spec = {
    name: mapping.experiment,
    description:
      mapping.description ??
      `sysbench logs imported with aurora-bench import (${assigned.length} file${assigned.length === 1 ? '' : 's'})`,
    ...(mapping.engine ? { engine: mapping.engine } : {}),
    region: mapping.region ?? '',
    parameterTemplates: {},
    variants: variants.map((v) => ({
      name: v,
      instanceClass: classOf(v),
      readers: 0,
      clusterParameters: {},
      instanceParameters: {},
      performanceInsights: false,
    })),
    data,
    workloads: workloads.map((w) => {
      const of = assigned.filter(({ a }) => a.workload === w);
      const test = of.find(({ a }) => a.test)?.a.test;
      return {
        name: w,
        ...(test !== undefined ? { test } : {}),
        options: {},
        threads: [...new Set(of.map(({ a }) => a.threads))].sort((x, y) => x - y),
        rates: [...new Set(of.map(({ a }) => a.rate))].sort((x, y) => x - y),
        stopAtOverload: false,
        target: 'writer',
      };
    }),
    repeats,
    order: 'sequential',
    maxConcurrency: 1,
    ttlHours: 1,
  } as unknown as Spec;
  const notes: PlanNote[] = [
    {
      level: 'info',
      path: '',
      message:
        `imported from ${assigned.length} sysbench log` +
        (assigned.length === 1 ? '' : 's') +
        `: data size, sysbench options and server configuration are not in the logs and are not recorded (0 ` +
        `where a number is required)`,
    },
    ...assigned.map(({ a }) => ({
      level: 'info' as const,
      path: `cells.${cellIdOf(a.variant, a.repeat)}.${stepIdOf(a)}`,
      message: `from ${a.path}${a.dateFrom === 'mtime' ? ' (date: the file modification time)' : ''}`,
    })),
  ];
  const plan: ImportedPlan = {
    planVersion: 1,
    runId,
    specName: mapping.experiment,
    specSha256: sha256(canonicalJson(spec)),
    backend: 'import',
    region: mapping.region ?? '',
    engine: mapping.engine ?? null,
    maxConcurrency: 1,
    ttlHours: 1,
    dt,
    createdAt,
    cells,
    notes,
    estimate: { wallTimeS: 0, stepTimeS: 0, provisionS: 0 },
    scripts: {},
  };
  return { spec, plan, stepOf };
}

/**
 * The default run id hashes the logs' content and their mapping.
 * So importing the same logs again is refused.
 */
function defaultRunId(experiment: string, assigned: readonly { a: FileAssignment; log: LogFile }[]): string {
  const h = createHash('sha256');
  for (const { a, log } of [...assigned].sort((x, y) => x.a.path.localeCompare(y.a.path)))
    h.update(canonicalJson({ ...a, path: undefined, content: sha256(log.text) }));
  return `${experiment}-import-${h.digest('hex').slice(0, 10)}`;
}

function statusLine(path: string, parsed: ParsedOutput, a: FileAssignment | undefined): string {
  const version = parsed.sysbenchVersion ? `sysbench ${parsed.sysbenchVersion}` : 'sysbench version not in the log';
  const where = a ? ` → ${cellIdOf(a.variant, a.repeat)} ${stepIdOf(a)}` : '';
  if (parsed.status === 'ok' && parsed.summary) {
    const s = parsed.summary;
    return (
      `ok      ${shownPath(path)}${where} (${version}, ${s.tps.toFixed(2)} tps, ` +
      `p${s.latencyMs.percentile} ${s.latencyMs.value} ms, ${parsed.intervals.length} intervals)`
    );
  }
  return `failed  ${shownPath(path)}${where} (${version}): ${parsed.error ?? 'no summary'}`;
}

export function importLogs(options: ImportOptions): ImportResult {
  const { log } = options;
  const mappingFile = options.mappingFile !== undefined ? resolve(options.mappingFile) : undefined;
  const mapping = resolveMapping(
    mappingFile !== undefined ? readMappingFile(mappingFile) : undefined,
    options.mappingFile,
    options.flags,
  );

  // 1. Read and parse every log, and say how each parsed.
  const files: LogFile[] = collectFiles(options.paths).map(({ path, relativePath }) => {
    let text: string;
    try {
      text = readUserText(path, MAX_LOG_BYTES);
    } catch (e) {
      if (!(e instanceof UserFileError)) throw e;
      throw new ImportError(`${shownPath(path)}: ${e.reason}`);
    }
    const header = headerFacts(text);
    return {
      text,
      parsed: parseSysbenchOutput(text, {}),
      ...(header.reportIntervalS !== undefined ? { reportIntervalS: header.reportIntervalS } : {}),
      facts: {
        path,
        relativePath,
        ...(header.threads !== undefined ? { threads: header.threads } : {}),
        ...(header.rate !== undefined ? { rate: header.rate } : {}),
        modifiedAt: statSync(path).mtime.toISOString(),
      },
    };
  });
  // 2. Map them, with every problem at once.
  let assignments: FileAssignment[];
  try {
    assignments = assignFiles(
      mapping,
      files.map((f) => f.facts),
      options.mappingFile ?? 'the mapping',
    );
  } catch (e) {
    for (const f of files) log(statusLine(f.facts.path, f.parsed, undefined));
    throw e;
  }
  const assigned = assignments.map((a) => ({ a, log: files.find((f) => f.facts.path === a.path)! }));
  // One run, or one per date with each day's repeats numbered within it.
  // The status lines name the cell each log lands in.
  const groups = options.runPerDate === true ? byDate(assigned) : [assigned];
  for (const group of groups) for (const { a, log: f } of group) log(statusLine(f.facts.path, f.parsed, a));
  const failed = assigned.filter(({ log: f }) => f.parsed.status !== 'ok');
  if (failed.length > 0 && options.allowFailed !== true) {
    throw new ImportError(
      `${failed.length} of ${files.length} log${files.length === 1 ? '' : 's'} did not parse (` +
        failed.map(({ log: f }) => shownPath(f.facts.path)).join(', ') +
        `): nothing was imported; remove ` +
        (failed.length === 1 ? 'it' : 'them') +
        ` from the paths, or pass --allow-failed to keep ` +
        (failed.length === 1 ? 'it' : 'them') +
        ` as failed steps`,
    );
  }

  // 3. The runs are staged in memory, then moved into the lake together.
  const lakeDir = resolve(options.lakeDir);
  const existingRuns = lakeTableFiles(lakeDir, 'runs');
  const runs = groups.map((group) => {
    const dt = group
      .map(({ a }) => a.startedAt)
      .sort()[0]!
      .slice(0, 10);
    const runId =
      options.runId !== undefined
        ? groups.length > 1
          ? `${options.runId}-${dt}`
          : options.runId
        : defaultRunId(mapping.experiment, group);
    if (!/^[A-Za-z0-9._-]+$/.test(runId))
      throw new ImportError(`--run-id ${JSON.stringify(runId)}: use letters, digits, ".", "_" and "-"`);
    const existing = existingRuns.filter(filesOfRuns([runId]));
    if (existing.length > 0) {
      throw new ImportError(
        `run ${runId} is already in the lake (${existing[0]!}): ` +
          (options.runId === undefined
            ? 'these logs were imported before with the same mapping'
            : 'pick another --run-id') +
          `; nothing was imported`,
      );
    }
    return stageRun(mapping, runId, group, options.repoRoot);
  });
  moveIntoLake(lakeDir, runs);
  for (const run of runs) {
    log(
      `imported ${run.logs} log${run.logs === 1 ? '' : 's'} as run ${run.runId} ` +
        `(experiment ${mapping.experiment}, ${run.cells} cells, backend import) into ${lakeDir}`,
    );
  }
  return {
    runIds: runs.map((r) => r.runId),
    files: assigned.length,
    failed: runs.reduce((n, r) => n + r.failedSteps, 0),
  };
}

type Assigned = { a: FileAssignment; log: LogFile };

/** The logs by the day they were taken, each day's repeats renumbered per step. */
function byDate(assigned: readonly Assigned[]): Assigned[][] {
  const days = new Map<string, Assigned[]>();
  for (const x of [...assigned].sort((p, q) => p.a.startedAt.localeCompare(q.a.startedAt)))
    days.set(x.a.startedAt.slice(0, 10), [...(days.get(x.a.startedAt.slice(0, 10)) ?? []), x]);
  return [...days.values()].map((day) => {
    const next = new Map<string, number>();
    return [...day]
      .sort((p, q) => p.a.repeat - q.a.repeat)
      .map((x) => {
        const key = `${x.a.variant}\u0000${stepIdOf(x.a)}`;
        const repeat = (next.get(key) ?? 0) + 1;
        next.set(key, repeat);
        return { ...x, a: { ...x.a, repeat } };
      });
  });
}

interface StagedRun {
  readonly runId: string;
  /** Lake key to body, for the step tables and raw logs. */
  readonly files: ReadonlyMap<string, string>;
  readonly runKey: string;
  readonly runRow: string;
  readonly cells: number;
  readonly logs: number;
  readonly failedSteps: number;
}

/** One run's rows and files in memory. Nothing is written here. */
function stageRun(mapping: ImportMapping, runId: string, assigned: readonly Assigned[], repoRoot: string): StagedRun {
  const startedAt = assigned.map(({ a }) => a.startedAt).sort()[0]!;
  const dt = startedAt.slice(0, 10);
  const { spec, plan, stepOf } = buildPlan(mapping, runId, assigned, new Date().toISOString(), dt);
  const staged = new Map<string, string>();
  const stepRows: StepRow[] = [];
  for (const cell of plan.cells) {
    for (const step of cell.steps) {
      const { a, log: f } = assigned.find(
        (x) => cellIdOf(x.a.variant, x.a.repeat) === cell.cellId && stepOf.get(x.a.path) === step,
      )!;
      const ended = new Date(
        Date.parse(a.startedAt) + Math.round((f.parsed.summary?.totalTimeS ?? step.durationS) * 1000),
      ).toISOString();
      const rows = stepRowsOf({
        run: { runId, dt },
        cell,
        step,
        outputs: [
          {
            clientId: CLIENT_ID,
            jobStartedAt: a.startedAt,
            parsed: f.parsed,
            result: {
              phase: 'run',
              exitCode: 0,
              startedAt: a.startedAt,
              endedAt: ended,
              sysbenchVersion: f.parsed.sysbenchVersion ?? '',
              hostname: '',
              command: '',
            },
            cpuSamples: [],
          },
        ],
        endpointOf: () => ({ instanceId: 'writer' }),
        sharedHost: false,
        timedOut: false,
        now: ended,
      });
      stepRows.push(...rows.steps);
      staged.set(lakeKeys.stepTable('steps', dt, runId, cell.cellId, step.stepId), toJsonLines(rows.steps));
      if (rows.intervals.length > 0)
        staged.set(
          lakeKeys.stepTable('intervals', dt, runId, cell.cellId, step.stepId),
          toJsonLines(rows.intervals satisfies IntervalRow[]),
        );
      staged.set(lakeKeys.raw(dt, runId, cell.cellId, step.stepId, 'run', CLIENT_ID) + 'output.log', f.text);
    }
  }
  const failedSteps = stepRows.filter((r) => r.status === 'failed');
  const versions = [
    ...new Set(assigned.map(({ log: f }) => f.parsed.sysbenchVersion).filter((v): v is string => v !== undefined)),
  ];
  const tool = toolInfo(repoRoot);
  const row: RunRow = {
    run_id: runId,
    spec_name: mapping.experiment,
    spec: JSON.stringify(spec),
    spec_sha256: plan.specSha256,
    plan: JSON.stringify(plan),
    backend: 'import',
    region: mapping.region ?? '',
    engine_version: mapping.engine?.version ?? 'unknown',
    server_version: null,
    sysbench_version: versions.join(', ') || null,
    tool_version: tool.version,
    git_sha: tool.gitSha,
    started_at: startedAt,
    ended_at: stepRows
      .map((r) => r.ended_at)
      .sort()
      .at(-1)!,
    status: failedSteps.length > 0 ? 'failed' : 'succeeded',
    error:
      failedSteps.length > 0
        ? failedSteps.map((r) => `step ${r.cell_id}/${r.step_id}: ${r.error ?? 'failed'}`).join('\n')
        : null,
    cells: JSON.stringify(
      plan.cells.map((c) => {
        const bad = failedSteps.filter((r) => r.cell_id === c.cellId);
        return {
          cell_id: c.cellId,
          status: bad.length > 0 ? 'failed' : 'succeeded',
          error: bad.length > 0 ? `${bad.length} step${bad.length === 1 ? '' : 's'} failed` : null,
        };
      }),
    ),
    notes: JSON.stringify(plan.notes),
    server_config: null,
    dt,
  };
  return {
    runId,
    files: staged,
    runKey: lakeKeys.run(dt, runId),
    runRow: toJsonLines([row]),
    cells: plan.cells.length,
    logs: assigned.length,
    failedSteps: failedSteps.length,
  };
}

/**
 * Every file goes under a staging directory in the lake first, then is renamed into place.
 * A rename on one filesystem is atomic. The runs' rows go last, so no reader lists a run before its rows.
 * On any failure what was moved is removed again, and the lake is as before.
 */
function moveIntoLake(lakeDir: string, runs: readonly StagedRun[]): void {
  // What killed imports left is removed first. The folder's name says which process it is of.
  removeAbandonedStaging(lakeDir);
  const staging = importStagingDir(lakeDir);
  const moved: string[] = [];
  const createdDirs: string[] = [];
  try {
    const all = [...runs.flatMap((r) => [...r.files.entries()]), ...runs.map((r) => [r.runKey, r.runRow] as const)];
    for (const [key, body] of all) {
      const path = join(staging, key);
      mkdirSync(dirname(path), { recursive: true });
      // A plain write, since the staging directory is invisible to readers until the rename.
      writeFileSync(path, body, { flag: 'wx' });
    }
    for (const [key] of all) {
      const target = join(lakeDir, key);
      if (existsSync(target)) throw new ImportError(`${target} exists already: nothing was imported`);
      const dir = dirname(target);
      if (!existsSync(dir)) {
        // The topmost directory created, to remove on failure.
        let top = dir;
        while (!existsSync(dirname(top))) top = dirname(top);
        mkdirSync(dir, { recursive: true });
        createdDirs.push(top);
      }
      renameSync(join(staging, key), target);
      moved.push(target);
    }
  } catch (e) {
    for (const path of moved.reverse()) rmSync(path, { force: true });
    for (const dir of createdDirs.reverse()) rmSync(dir, { recursive: true, force: true });
    // A lake that refuses writes is said as such, not as a stack trace.
    throw asLakeWriteError(lakeDir, e);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    try {
      // The .staging folder itself, when no other import is using it.
      if (readdirSync(join(lakeDir, '.staging')).length === 0)
        rmSync(join(lakeDir, '.staging'), { recursive: true, force: true });
    } catch {
      // Already gone.
    }
  }
}
