/** What `aurora-bench results` prints. Functions return text, and the CLI only wires them to commander. */
import { clip, fixed, num, textTable } from '../format';
import { writeFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { LakeReader, LakeRowObject } from './duckdb';
import { exportIntoLakeProblem } from './export-target';
import { AuroraBenchError } from '../errors';
import type { RunRow } from './rows';
import type { StepSummaryRow } from './schema';
import { runCostLines, type ActualCellCost } from '../plan/bill';

export class NotFoundError extends AuroraBenchError {
  override readonly name = 'NotFoundError';
}

/** A run as `results` and the report read it. */
export type RunInfo = Pick<
  RunRow,
  | 'run_id'
  | 'spec_name'
  | 'backend'
  | 'region'
  | 'status'
  | 'started_at'
  | 'ended_at'
  | 'error'
  | 'server_version'
  | 'sysbench_version'
  | 'plan'
  | 'spec'
  | 'notes'
  | 'cells'
  | 'dt'
>;

/**
 * One row of step_summary, a step of a cell summed over its clients.
 * Rows built by hand for tests or read through older views may lack the newer columns.
 */
type OptionalStepColumns =
  'lat_p50_ms' | 'lat_p90_ms' | 'lat_p95_ms' | 'lat_p99_ms' | 'lat_p999_ms' | 'stale_reads' | 'read_back_checks';
export type StepResult = Omit<StepSummaryRow, OptionalStepColumns> & Partial<Pick<StepSummaryRow, OptionalStepColumns>>;

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** The run named, or the latest one. Clear errors when the lake has none or not that one. */
export async function findRun(lake: LakeReader, runId?: string): Promise<RunInfo> {
  const rows =
    runId === undefined
      ? await lake.query<RunInfo>('SELECT * FROM latest_run ORDER BY run_id DESC LIMIT 1')
      : await lake.query<RunInfo>(`SELECT * FROM runs WHERE run_id = ${quote(runId)} ORDER BY started_at DESC LIMIT 1`);
  if (rows[0] !== undefined) return rows[0];
  if (runId === undefined) {
    throw new NotFoundError(
      `no run in the results lake at ${lake.lakeDir} yet: run one first (aurora-bench run experiments/quickstart.json)`,
    );
  }
  const known = await lake.query<{ run_id: string }>('SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 5');
  throw new NotFoundError(
    `run "${runId}" is not in the results lake at ${lake.lakeDir}` +
      (known.length > 0 ? ` (latest runs: ${known.map((r) => r.run_id).join(', ')})` : ' (the lake has no run)'),
  );
}

/** The steps of a run in execution order. */
export async function stepResults(lake: LakeReader, runId: string): Promise<StepResult[]> {
  return lake.query<StepResult>(
    `SELECT s.* FROM step_summary s
     JOIN (SELECT cell_id, MIN(started_at) AS cell_started FROM step_summary
           WHERE run_id = ${quote(runId)} GROUP BY cell_id) c
       ON s.cell_id = c.cell_id
     WHERE s.run_id = ${quote(runId)}
     ORDER BY c.cell_started, s.cell_id, s.step_index`,
  );
}

export interface ResultsOptions {
  /** Default is the latest run. */
  readonly runId?: string;
  /** Print the step rows as a JSON array. */
  readonly json?: boolean;
  /** Run this SQL instead and print its result. */
  readonly sql?: string;
  /** Write the SQL's result to this new file instead of printing it. */
  readonly exportFile?: string;
}

class ExportError extends AuroraBenchError {
  override readonly name = 'ExportError';
}

const csvField = (v: LakeRowObject[string] | undefined): string => {
  if (v === null || v === undefined) return '';
  const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** A query result as the file type its name asks for. */
function exportText(file: string, columns: readonly string[], rows: readonly LakeRowObject[]): string {
  switch (extname(file).toLowerCase()) {
    case '.csv':
      return (
        [columns.map(csvField).join(','), ...rows.map((r) => columns.map((c) => csvField(r[c])).join(','))].join('\n') +
        '\n'
      );
    case '.json':
      return JSON.stringify(rows, null, 2) + '\n';
    case '.jsonl':
      return rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length > 0 ? '\n' : '');
    default:
      throw new ExportError(`--export ${file}: the file name must end in .csv, .json or .jsonl (the format written)`);
  }
}

/** Writes the result to a new file, never over an existing one. An export must not destroy anything. */
function exportResult(file: string, columns: readonly string[], rows: readonly LakeRowObject[]): string {
  const text = exportText(file, columns, rows);
  try {
    writeFileSync(file, text, { flag: 'wx' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ExportError(
      code === 'EEXIST'
        ? `--export ${file}: the file exists; choose a new name or remove it first`
        : `--export ${file}: cannot write: ${code ?? (e as Error).message}`,
      { cause: e },
    );
  }
  return `${rows.length} row${rows.length === 1 ? '' : 's'} written to ${file}\n`;
}

function cellStatusLines(run: RunInfo): string[] {
  const lines: string[] = [];
  try {
    const cells = JSON.parse(run.cells || '[]') as { cell_id: string; status: string; error?: string | null }[];
    for (const c of cells)
      if (c.status !== 'succeeded' && c.status !== 'ok')
        lines.push(`  cell ${c.cell_id}: ${c.status}${c.error ? ` (${clip(c.error, 200)})` : ''}`);
  } catch {
    // an unreadable cells column is shown raw rather than hidden
    if (run.cells) lines.push(`  cells: ${clip(run.cells, 200)}`);
  }
  return lines;
}

/** The terminal table of a run's steps, headed by the run's manifest. */
export function renderStepTable(run: RunInfo, steps: readonly StepResult[]): string {
  const out: string[] = [];
  out.push(
    `Run ${run.run_id} (${run.spec_name}) on ${run.backend}` +
      (run.backend === 'aws' ? ` ${run.region}` : '') +
      `: ${run.status}`,
  );
  out.push(
    `  started ${run.started_at}${run.ended_at ? `, ended ${run.ended_at}` : ''}` +
      (run.server_version ? `, server ${run.server_version}` : '') +
      (run.sysbench_version ? `, ${run.sysbench_version}` : ''),
  );
  if (run.error) out.push(`  error: ${run.error}`);
  out.push(...cellStatusLines(run));
  if (steps.length === 0) {
    out.push('No step results in the lake for this run.');
    // A run that failed before its steps still had resources, so their cost closes its output too.
    out.push(...runCostLines(cellCosts(run)));
    return out.join('\n') + '\n';
  }
  const pcts = [...new Set(steps.map((s) => s.lat_pct))];
  const pctHead = pcts.length === 1 ? `p${pcts[0]} ms` : 'pNN ms';
  // The distribution column only when some step recorded a histogram. Older lakes did not.
  const distribution = steps.some((s) => s.lat_p99_ms !== undefined && s.lat_p99_ms !== null);
  const head = [
    'variant',
    'rep',
    'workload',
    'threads',
    'rate/s',
    'target',
    'status',
    'tps',
    'qps',
    'lat avg ms',
    pctHead,
    ...(distribution ? ['p50/p99/p99.9/max ms'] : []),
    'errors',
    'client CPU%',
    'error',
  ];
  const align: ('left' | 'right')[] = [
    'left',
    'right',
    'left',
    'right',
    'right',
    'left',
    'left',
    'right',
    'right',
    'right',
    'right',
  ];
  align.push(...(distribution ? (['right'] as const) : []), 'right', 'right', 'left');
  const rows = steps.map((s) => [
    s.variant,
    s.repeat,
    s.workload,
    s.threads,
    s.rate === 0 ? 'max' : num(s.offered_tps, 0),
    s.target,
    s.status + (s.saturated_clients > 0 ? ' (client-bound)' : ''),
    fixed(s.tps),
    fixed(s.qps),
    fixed(s.lat_avg_ms),
    pcts.length === 1 ? fixed(s.lat_pct_ms) : `${fixed(s.lat_pct_ms)} (p${s.lat_pct})`,
    ...(distribution
      ? [[s.lat_p50_ms, s.lat_p99_ms, s.lat_p999_ms, s.lat_max_ms].map((v) => fixed(v ?? null)).join('/')]
      : []),
    num(s.errors, 0),
    num(s.client_cpu_avg_pct, 0),
    s.status === 'ok' ? '' : clip(s.error, 60),
  ]);
  out.push(textTable(head, rows, { align }));
  out.push(...runCostLines(cellCosts(run)));
  return out.join('\n') + '\n';
}

/** The cells' real costs, as the manifest keeps them for AWS runs. */
function cellCosts(run: RunInfo): ActualCellCost[] {
  try {
    const cells = JSON.parse(run.cells || '[]') as { cost?: ActualCellCost }[];
    return cells.flatMap((c) => (c.cost !== undefined ? [c.cost] : []));
  } catch {
    return [];
  }
}

/** An arbitrary result as a terminal table, columns in the query's order. */
export function renderRowsTable(columns: readonly string[], rows: readonly LakeRowObject[]): string {
  if (rows.length === 0) return `(no rows; columns: ${columns.join(', ')})\n`;
  const cells = rows.map((r) =>
    columns.map((c) => {
      const v = r[c];
      if (v === null || v === undefined) return '';
      if (typeof v === 'number') return Number.isInteger(v) ? String(v) : num(v, 4);
      if (typeof v === 'object') return clip(JSON.stringify(v), 80);
      return clip(String(v), 80);
    }),
  );
  return textTable(columns, cells) + `\n(${rows.length} row${rows.length === 1 ? '' : 's'})\n`;
}

/** Everything `aurora-bench results` prints, for a local lake directory. */
export async function resultsText(lakeDir: string, options: ResultsOptions = {}): Promise<string> {
  if (options.exportFile !== undefined && options.sql === undefined)
    throw new ExportError('--export writes the result of --sql: give the query with --sql');
  const intoLake = options.exportFile === undefined ? undefined : exportIntoLakeProblem(options.exportFile, lakeDir);
  if (intoLake !== undefined) throw new ExportError(intoLake);
  // Loaded here, not at the top. The Task Lambdas import this module, and their runtime has no DuckDB.
  const { skippedFilesText, withLake } = await import('./duckdb');
  return withLake(lakeDir, async (lake) => {
    if (options.sql !== undefined) {
      const { columns, rows } = await lake.queryWithColumns(options.sql);
      if (options.exportFile !== undefined)
        return exportResult(options.exportFile, columns, rows) + skippedFilesText(lake);
      return (
        (options.json ? JSON.stringify(rows, null, 2) + '\n' : renderRowsTable(columns, rows)) + skippedFilesText(lake)
      );
    }
    const run = await findRun(lake, options.runId);
    const steps = await stepResults(lake, run.run_id);
    return (
      (options.json ? JSON.stringify(steps, null, 2) + '\n' : renderStepTable(run, steps)) + skippedFilesText(lake)
    );
  });
}
