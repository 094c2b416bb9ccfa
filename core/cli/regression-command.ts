/** `aurora-bench compare` and `aurora-bench history` over the local lake, or with --aws over Athena. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { writeUserFile } from '../user-file';
import { AthenaClient } from '@aws-sdk/client-athena';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { S3Client } from '@aws-sdk/client-s3';
import { AthenaLake } from '../backends/aws/athena-lake';
import { UsageError } from '../errors';
import { withLake, type LakeReader } from '../lake/duckdb';
import { renderHtml, renderTerminal } from '../report/report';
import { COMPARE_LEVEL_RANGE, compareRuns, type CompareOptions, type Comparison } from '../regression/compare';
import { buildHistory, HISTORY_DEFAULTS, type History, type HistoryOptions } from '../regression/history';
import { readHistoryInput, readerOpener, type LakeOpener } from '../regression/judge';
import { localLakeOpener } from '../regression/judge-local';
import { loadCompareSide, loadHistoryRuns, REHEARSAL_BACKEND } from '../regression/load';
import { NotFoundError } from '../lake/results';
import { scaleSpec } from '../experiment/scale';
import { comparisonJson, comparisonReport, historyJson, historyReport } from '../regression/render';
import { loadSpecFile } from '../experiment/validate';
import { readStackOutputs, stackLakeStore } from './aws-stack';
import { printErr, printOut } from './terminal';
import type { CliContext } from './cli-context';

/** --aws reads the deployed stack's lake through Athena, as `results --aws` does. */
interface AthenaSource {
  readonly stackName: string;
  readonly athena?: AthenaClient;
  readonly cfn?: CloudFormationClient;
  /** Reads the lake's schema version record. */
  readonly s3?: S3Client;
  /** Poll interval while an Athena query runs, which tests shorten. */
  readonly pollMs?: number;
}

async function athenaLakeOf(source: AthenaSource): Promise<AthenaLake> {
  const outputs = await readStackOutputs(source.cfn ?? new CloudFormationClient({}), source.stackName);
  return new AthenaLake({
    client: source.athena ?? new AthenaClient({}),
    workGroup: outputs.athenaWorkGroup,
    database: outputs.glueDatabase,
    store: stackLakeStore(outputs, source.s3),
    ...(source.pollMs !== undefined ? { pollMs: source.pollMs } : {}),
  });
}

interface CompareCommandOptions {
  readonly lakeDir: string;
  /** Read the deployed stack's lake instead of lakeDir. */
  readonly aws?: AthenaSource;
  readonly runA: string;
  readonly runB: string;
  readonly json?: boolean;
  /** The intervals' confidence level. The default is 0.95. */
  readonly level?: number;
}

/** A comparison of two runs of a lake, as `compare` makes it. */
export async function compareFromLake(
  lake: LakeReader,
  runA: string,
  runB: string,
  options: CompareOptions = {},
): Promise<Comparison> {
  const a = await loadCompareSide(lake, runA);
  const b = await loadCompareSide(lake, runB);
  // A rehearsal's figures come from stand-in servers, so it is never a baseline for a run on AWS.
  const rehearsal = [a, b].find((s) => s.run.backend === REHEARSAL_BACKEND);
  if (rehearsal && [a, b].some((s) => s.run.backend === 'aws')) {
    throw new UsageError(
      `run ${rehearsal.run.run_id} is a rehearsal (run --aws-rehearsal: moto and stand-in servers on this ` +
        `machine, not Aurora), so it is not compared with a run on AWS: compare it with another ` +
        `rehearsal or a local run`,
    );
  }
  return compareRuns(a, b, options);
}

/** --level as a fraction such as 0.99. Anything else is refused with how to write it. */
function parseLevel(text: string): number {
  const level = Number(text);
  if (/^0?\.[0-9]+$/.test(text) && level >= COMPARE_LEVEL_RANGE.min && level <= COMPARE_LEVEL_RANGE.max) return level;
  throw new UsageError(
    `--level ${text}: give a confidence level from ${COMPARE_LEVEL_RANGE.min} to ${COMPARE_LEVEL_RANGE.max} as ` +
      `a fraction (e.g. --level 0.99)`,
  );
}

/**
 * The text to print and the comparison. The caller decides the exit code from its regressions.
 * @internal exported for its tests (a test seam)
 */
export async function compareCommand(
  options: CompareCommandOptions,
): Promise<{ text: string; comparison: Comparison }> {
  const compareOptions: CompareOptions = options.level !== undefined ? { level: options.level } : {};
  const comparison = options.aws
    ? await compareFromLake(await athenaLakeOf(options.aws), options.runA, options.runB, compareOptions)
    : await withLake(options.lakeDir, (lake) => compareFromLake(lake, options.runA, options.runB, compareOptions));
  return { comparison, text: options.json ? comparisonJson(comparison) : renderTerminal(comparisonReport(comparison)) };
}

interface HistoryCommandOptions extends HistoryOptions {
  readonly lakeDir: string;
  /** Read the deployed stack's lake instead of lakeDir. */
  readonly aws?: AthenaSource;
  /** An experiment name, or an experiment file whose name is used. */
  readonly experiment: string;
  readonly json?: boolean;
  readonly html?: string;
  /** Where built-in workloads live, to read an experiment file. */
  readonly builtinWorkloads: string;
}

/** --window: at least 2 runs, or "all". Anything else is refused with how to write it. */
function parseWindow(text: string): number | 'all' {
  if (text === 'all') return 'all';
  if (/^[0-9]+$/.test(text) && Number(text) >= 2) return Number(text);
  throw new UsageError(`--window ${text}: give a number of runs (2 or more, e.g. --window 100) or "all"`);
}

/**
 * The names a history may be under.
 * An experiment file's runs with `--scale small` are stored under a renamed name, so that one is tried too.
 */
function experimentNames(arg: string, builtinWorkloads: string): { names: string[]; fromFile: boolean } {
  if (/\.(json|ya?ml)$/i.test(arg) && existsSync(arg)) {
    const { spec } = loadSpecFile(arg, builtinWorkloads);
    return { names: [spec.name, scaleSpec(spec, 'small').spec.name], fromFile: true };
  }
  return { names: [arg], fromFile: false };
}

/** The `history` flags as commander gives them, as strings. */
interface HistoryFlags {
  readonly window: string;
  readonly significance: string;
  readonly permutations: string;
  readonly magnitude: string;
  readonly nearMiss: string;
  readonly seed: string;
}

/** The `history` flags parsed. Each is refused with how to write it when it does not parse. */
function historyFlags(flags: HistoryFlags): HistoryOptions {
  return {
    window: parseWindow(flags.window),
    significance: parseFraction('--significance', flags.significance),
    permutations: parseCount('--permutations', flags.permutations, 1),
    magnitude: parseFraction('--magnitude', flags.magnitude, true),
    nearMissUpTo: parseFraction('--near-miss', flags.nearMiss),
    seed: parseCount('--seed', flags.seed, 0),
  };
}

/** A fraction in (0, 1), or [0, 1) for the magnitude. */
function parseFraction(flag: string, text: string, allowZero = false): number {
  const value = Number(text);
  if (/^[0-9]*\.?[0-9]+$/.test(text) && value < 1 && (allowZero ? value >= 0 : value > 0)) return value;
  throw new UsageError(
    `${flag} ${text}: give a fraction ${allowZero ? 'from 0' : 'above 0'} and below 1 ` +
      `(e.g. ${flag} ${allowZero ? '0.02 for 2%' : '0.01'})`,
  );
}

/** A whole number of at least `min`. */
function parseCount(flag: string, text: string, min: number): number {
  if (/^[0-9]+$/.test(text) && Number(text) >= min && Number.isSafeInteger(Number(text))) return Number(text);
  throw new UsageError(`${flag} ${text}: give a whole number of at least ${min}`);
}

/** Whether the runs table has a run of the experiment. */
async function hasRuns(lake: LakeOpener | LakeReader, experiment: string): Promise<boolean> {
  const open = typeof lake === 'function' ? lake : readerOpener(lake);
  return open((l) => loadHistoryRuns(l, experiment), { tables: ['runs'] }).then(
    (runs) => runs.length > 0,
    (e: unknown) => {
      if (e instanceof NotFoundError) return false;
      throw e;
    },
  );
}

/**
 * The history of an experiment from a lake, reading only the window's runs.
 * Locally each run is read over only its own files.
 */
export async function historyFromLake(
  lake: LakeOpener | LakeReader,
  experiment: string,
  options: HistoryOptions = {},
): Promise<History> {
  const open = typeof lake === 'function' ? lake : readerOpener(lake);
  return buildHistory(
    await readHistoryInput(open, experiment, { window: options.window ?? HISTORY_DEFAULTS.window }),
    options,
  );
}

/** The text to print and the history. @internal exported for its tests (a test seam) */
export async function historyCommand(options: HistoryCommandOptions): Promise<{ text: string; history: History }> {
  const { names, fromFile } = experimentNames(options.experiment, options.builtinWorkloads);
  const { lakeDir, aws, experiment: _e, json, html, builtinWorkloads: _b, ...historyOptions } = options;
  const lake = aws ? await athenaLakeOf(aws) : localLakeOpener(lakeDir);
  // The file's own name first, then its --scale small runs, said in the history's notices.
  let history: History | undefined;
  let firstMiss: unknown;
  for (const name of [...new Set(names)]) {
    try {
      history = await historyFromLake(lake, name, historyOptions);
      break;
    } catch (e) {
      if (!(e instanceof NotFoundError) || !/^no run of experiment/.test(e.message)) throw e;
      firstMiss ??= e;
    }
  }
  if (history === undefined) throw firstMiss;
  if (fromFile && history.experiment !== names[0])
    history = {
      ...history,
      notices: [
        `${options.experiment} has no run as written ("${names[0]}"): these are its --scale small runs, stored ` +
          `as "${history.experiment}"`,
        ...history.notices,
      ],
    };
  else if (fromFile && names[1] !== undefined && names[1] !== names[0] && (await hasRuns(lake, names[1])))
    history = {
      ...history,
      notices: [
        `its --scale small runs are a history of their own: aurora-bench history ${names[1]}`,
        ...history.notices,
      ],
    };
  let text = json ? historyJson(history) : renderTerminal(historyReport(history));
  if (html !== undefined) {
    writeUserFile(html, renderHtml(historyReport(history, { charts: true })));
    if (!json) text += `\nHTML history written to ${html}\n`;
  }
  return { text, history };
}

/** The `compare` flags as commander gives them. */
export interface CompareFlags {
  readonly json?: boolean;
  readonly level: string;
  readonly failOn?: 'regression';
  readonly lake: string;
  readonly aws?: boolean;
  readonly stack: string;
}

/** `aurora-bench compare A B` exits 2 when --fail-on regression finds one. */
export async function compareAction(runA: string, runB: string, opts: CompareFlags): Promise<number> {
  const level = parseLevel(opts.level);
  const { text, comparison } = await compareCommand({
    lakeDir: resolve(opts.lake),
    level,
    ...(opts.aws ? { aws: { stackName: opts.stack } } : {}),
    runA,
    runB,
    ...(opts.json ? { json: true } : {}),
  });
  printOut(text);
  if (opts.failOn !== 'regression' || comparison.regressions === 0) return 0;
  printErr(
    `aurora-bench: ${comparison.regressions} regression${comparison.regressions === 1 ? '' : 's'} ` +
      `from ${runA} to ${runB}\n`,
  );
  return 2;
}

/** The `history` flags as commander gives them, with the change-point ones. */
export interface HistoryCommandFlags extends HistoryFlags {
  readonly json?: boolean;
  readonly html?: string;
  readonly lake: string;
  readonly aws?: boolean;
  readonly stack: string;
}

/** `aurora-bench history EXPERIMENT` prints the history and writes its HTML page when asked. */
export async function historyAction(
  experiment: string,
  opts: HistoryCommandFlags,
  context: Pick<CliContext, 'builtinWorkloads'>,
): Promise<void> {
  const { text } = await historyCommand({
    lakeDir: resolve(opts.lake),
    ...(opts.aws ? { aws: { stackName: opts.stack } } : {}),
    experiment,
    builtinWorkloads: context.builtinWorkloads,
    ...historyFlags(opts),
    ...(opts.json ? { json: true } : {}),
    ...(opts.html ? { html: resolve(opts.html) } : {}),
  });
  printOut(text);
}
