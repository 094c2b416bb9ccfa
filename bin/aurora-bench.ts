#!/usr/bin/env node
/** The aurora-bench CLI. It only wires, and every command's work is in core/ and lib/. */
import '../core/polyfills';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { findRepoRoot } from '../core/cli/tool-info';
import { printErr, printOut } from '../core/cli/terminal';
import { formatError } from '../core/errors';
import { failIfUnsettledAtExit } from '../core/cli/unsettled-exit';
import { SCALES } from '../core/experiment/scale';
import type { CliContext } from '../core/cli/cli-context';
import type { PlanFlags } from '../core/cli/plan-command';
import type { PreflightFlags } from '../core/cli/preflight-command';
import type { RunFlags } from '../core/cli/run-command';
import type { ResultsFlags } from '../core/cli/results-command';
import type { ReportFlags } from '../core/cli/report-command';
import type { CompareFlags, HistoryCommandFlags } from '../core/cli/regression-command';
import type { ImportCommandFlags } from '../core/cli/import-command';

const repoRoot = findRepoRoot(__dirname);
const builtinWorkloads = join(repoRoot, 'client', 'workloads');
const defaultLake = process.env['AURORA_BENCH_LAKE'] ?? join(process.cwd(), '.aurora-bench', 'lake');
/** Where local runs keep datadirs, sockets and their registry. */
const localRunRoot = process.env['AURORA_BENCH_RUN_ROOT'];

const context: CliContext = { repoRoot, builtinWorkloads, runRoot: localRunRoot };

/** cdk.json's nightly schedule, for `plan --aws`. It is read here, since core does not import lib. */
async function nightlyConfig() {
  const { CONFIG_CONTEXT_KEY, parseAppConfig } = await import('../lib/config');
  const cdkJson = JSON.parse(readFileSync(join(repoRoot, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  return parseAppConfig(cdkJson.context?.[CONFIG_CONTEXT_KEY]).nightly;
}

/** Every error ends here with exit code 1. A user-facing one prints its message and causes, anything else its stack. */
function fail(error: unknown): never {
  printErr(`aurora-bench: ${formatError(error)}\n`);
  process.exit(1);
}

function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void) {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (e) {
      fail(e);
    }
  };
}

/** --scale gives the experiment as written, or shrunk for a local rehearsal. */
function scaleOption(): Option {
  return new Option(
    '--scale <scale>',
    'full: as written; small: fewer rows, shorter steps, fewer sweep points, for a local rehearsal in minutes',
  )
    .choices(SCALES)
    .default('full');
}

const program = new Command();
program
  .name('aurora-bench')
  .description(
    'Run a database benchmark study from one experiment file: locally on MariaDB, or on Aurora through Step Functions.',
  )
  .version((JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version);

program
  .command('validate')
  .description('check experiment files against the schema; every problem is named by file and JSON path')
  .argument('<spec...>', 'experiment files (JSON or YAML)')
  .action(
    action(async (specs: string[]) => {
      const { validateAction } = await import('../core/cli/validate-command');
      const code = await validateAction(specs, context);
      if (code !== 0) process.exit(code);
    }),
  );

program
  .command('plan')
  .description('expand an experiment into cells and steps, with ids, order and an estimate of time (and cost on AWS)')
  .argument('<spec>', 'experiment file')
  .addOption(new Option('--backend <kind>', 'where it would run').choices(['local', 'aws']).default('local'))
  .option('--aws', 'same as --backend aws')
  .addOption(scaleOption())
  .option('--prices <file>', 'a price table overriding prices/aws-prices.json')
  .option('--json', 'print the plan as JSON')
  .action(
    action(async (file: string, opts: PlanFlags) => {
      const { planAction } = await import('../core/cli/plan-command');
      const code = await planAction(file, opts, { ...context, nightly: nightlyConfig });
      if (code !== 0) process.exitCode = code;
    }),
  );

program
  .command('preflight')
  .description(
    'read-only checks of the AWS account against an experiment before anything is created: engine version, ' +
      'instance classes per AZ, parameters, service-linked role, vCPU quota, stack and network, budget',
  )
  .argument('<spec>', 'experiment file')
  .option('--aws', 'check against the AWS account (the only kind of preflight)')
  .option('--stack <name>', 'deployed stack name', 'AuroraBench')
  .option('--region <region>', "region of the stack (default: the spec's region)")
  .option('--prices <file>', 'a price table overriding prices/aws-prices.json for the budget check')
  .action(
    action(async (file: string, opts: PreflightFlags) => {
      const { preflightAction } = await import('../core/cli/preflight-command');
      process.exit(await preflightAction(file, opts, context));
    }),
  );

program
  .command('run')
  .description('run an experiment end to end (default: locally, on MariaDB servers this command starts and stops)')
  .argument('<spec>', 'experiment file')
  .option('--local', 'run on this machine (default)')
  .option('--aws', 'start an execution of the deployed stack and follow it')
  .option(
    '--aws-rehearsal',
    'run the AWS path on this machine: the synthesized state machine, the Lambda handlers and the AWS backend ' +
      'against a moto server, with real MariaDB servers and sysbench (see docs/aws.md, "Before your first AWS run")',
  )
  .option('--lake <dir>', 'local results lake directory', defaultLake)
  .option('--run-id <id>', 'use this run id instead of a new one')
  .addOption(scaleOption())
  .option('--stack <name>', 'deployed stack name (with --aws)', 'AuroraBench')
  .option('--region <region>', "region of the stack (with --aws; default: the spec's region)")
  .action(
    action(async (file: string, opts: RunFlags) => {
      const { runAction } = await import('../core/cli/run-command');
      const rehearsalWiring = async () => (await import('./aws-rehearsal')).rehearsalWiring(repoRoot);
      process.exit(await runAction(file, opts, { ...context, rehearsalWiring }));
    }),
  );

program
  .command('results')
  .description(
    'summary table per step of the latest run (or --run), or SQL over the results lake (DuckDB; Athena with --aws)',
  )
  .option('--run <id>', 'a run id (default: the latest run)')
  .option(
    '--sql <query>',
    'run a read-only query (SELECT) over the tables runs, steps, intervals, server_metrics and the summary ' +
      'views; it can read nothing outside the lake',
  )
  .option(
    '--export <file>',
    'write the --sql result to this new file (.csv, .json or .jsonl, outside the lake) instead of printing it',
  )
  .option('--json', 'print the step rows as a JSON array')
  .option('--lake <dir>', 'local results lake directory', defaultLake)
  .option('--aws', 'query Athena instead of the local lake')
  .option('--stack <name>', 'deployed stack name (with --aws)', 'AuroraBench')
  .action(
    action(async (opts: ResultsFlags) => {
      const { resultsAction } = await import('../core/cli/results-command');
      await resultsAction(opts, context);
    }),
  );

program
  .command('report')
  .description("the report that answers the study's question: tables in the terminal, and an HTML page with charts")
  .argument('[run]', 'run id (default: the latest run)')
  .option('--html <file>', 'also write a self-contained HTML report')
  .option('--prices <file>', 'a price table overriding prices/aws-prices.json')
  .option('--lake <dir>', 'local results lake directory', defaultLake)
  .option('--aws', "read the run from Athena over the deployed stack's lake instead of the local lake")
  .option('--stack <name>', 'deployed stack name (with --aws)', 'AuroraBench')
  .option(
    '--include-saturated',
    'keep steps whose client saturated its CPU in ratios, scores and price-performance (left out by default)',
  )
  .option(
    '--json',
    "print each section's findings (values, intervals and what they cover, verdicts) as JSON instead of the tables",
  )
  .action(
    action(async (run: string | undefined, opts: ReportFlags) => {
      const { reportAction } = await import('../core/cli/report-command');
      await reportAction(run, opts, context);
    }),
  );

program
  .command('compare')
  .description(
    'compare two runs step by step: each metric as B/A with a 95% interval, and whether it improved, regressed ' +
      'or is within the noise',
  )
  .argument('<runA>', 'the run compared against (a run id)')
  .argument('<runB>', 'the run judged (a run id)')
  .option('--json', 'print the comparison as JSON')
  .option(
    '--level <confidence>',
    'confidence level of the intervals: at 0.95 two runs of one configuration differ beyond the noise about ' +
      'one time in twenty per metric; a CI gate over many steps may want 0.99 or 0.999',
    '0.95',
  )
  .addOption(
    new Option('--fail-on <what>', 'exit with code 2 when any judged metric regressed (for CI)').choices([
      'regression',
    ]),
  )
  .option('--lake <dir>', 'local results lake directory', defaultLake)
  .option('--aws', "read the runs from Athena over the deployed stack's lake instead of the local lake")
  .option('--stack <name>', 'deployed stack name (with --aws)', 'AuroraBench')
  .action(
    action(async (runA: string, runB: string, opts: CompareFlags) => {
      const { compareAction } = await import('../core/cli/regression-command');
      const code = await compareAction(runA, runB, opts);
      if (code !== 0) process.exit(code);
    }),
  );

program
  .command('history')
  .description(
    'every run of an experiment: per step and metric the series over time, its change points (E-Divisive ' +
      "means), and the latest run's verdict",
  )
  .argument('<experiment>', 'experiment name (or its file)')
  .option('--json', 'print the history as JSON')
  .option('--html <file>', 'also write a self-contained HTML page with a trend chart per step, change points marked')
  .option(
    '--window <runs>',
    'search change points in the last N runs of each series, or "all" (cost grows with the square of the runs)',
    '100',
  )
  .option('--significance <p>', "a split is a change point when its permutation test's p-value is at most this", '0.01')
  .option('--permutations <n>', 'permutations per test (the smallest p-value is 1/(n+1))', '199')
  .option(
    '--magnitude <fraction>',
    "a change point must change the mean by at least this fraction, |after/before - 1| (as Apache Otava's " +
      '--magnitude; 0.02 = 2%)',
    '0',
  )
  .option(
    '--near-miss <p>',
    'list splits with a p-value above --significance up to this (never below twice --significance)',
    '0.05',
  )
  .option(
    '--seed <n>',
    "added to every series' seed: other permutations, to see whether a borderline answer holds",
    '0',
  )
  .option('--lake <dir>', 'local results lake directory', defaultLake)
  .option('--aws', "read the runs from Athena over the deployed stack's lake instead of the local lake")
  .option('--stack <name>', 'deployed stack name (with --aws)', 'AuroraBench')
  .action(
    action(async (experiment: string, opts: HistoryCommandFlags) => {
      const { historyAction } = await import('../core/cli/regression-command');
      await historyAction(experiment, opts, context);
    }),
  );

program
  .command('import')
  .description(
    'bring hand-run sysbench logs (1.0.x and 1.1.x, mysql and pgsql) into the results lake as one run (backend ' +
      '"import"), so results, report, compare and history read them; each file\'s parse status is printed, and ' +
      'nothing is imported unless every file parses and maps',
  )
  .argument('<paths...>', 'log files, or directories of them')
  .option(
    '--mapping <file>',
    'a mapping file (JSON or YAML): experiment, defaults, and files entries by name or pattern ({variant}, ' +
      '{workload}, {threads}, {rate}, {repeat}, {date}, * and ?)',
  )
  .option('--experiment <name>', 'the experiment the logs belong to (history groups runs by it)')
  .option('--variant <name>', 'the variant of every log (unless a pattern or mapping entry says otherwise)')
  .option(
    '--variant-pattern <name=pattern>',
    'logs whose file name matches pattern are variant name (repeatable)',
    (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
  )
  .option('--workload <name>', 'the workload of every log')
  .option('--test <test>', 'the stock sysbench test the logs ran (oltp_read_write, ...)')
  .option('--threads <n>', 'threads (default: the log\'s "Number of threads")')
  .option('--rate <n>', 'offered transactions/s (default: the log\'s "Target transaction rate", else unlimited)')
  .option('--date <date>', "the day (or ISO instant) the logs were taken (default: each file's modification time)")
  .option('--instance-class <class>', 'the DB instance class the logs measured (db.r6g.large ...)')
  .option(
    '--run-id <id>',
    'the run id (default: the experiment and a hash of the logs and mapping; an id the lake has is refused)',
  )
  .option('--allow-failed', 'import logs that did not parse as failed steps instead of refusing the import')
  .option(
    '--run-per-date',
    'one run per day the logs were taken (so history has a point per day), instead of one run; with --run-id, ' +
      'ID-YYYY-MM-DD',
  )
  .option('--lake <dir>', 'local results lake directory', defaultLake)
  .action(
    action(async (paths: string[], opts: ImportCommandFlags) => {
      const { importAction } = await import('../core/cli/import-command');
      importAction(paths, opts, context);
    }),
  );

program
  .command('parse')
  .description('parse a sysbench output file (or a runner output directory) into one JSON object')
  .argument('<file>', 'sysbench output, or a directory holding output.log and result.json')
  .action(
    action(async (file: string) => {
      const { parseRunnerOutput } = await import('../core/sysbench/parse-file');
      printOut(JSON.stringify(parseRunnerOutput(file), null, 2) + '\n');
    }),
  );

program
  .command('schema')
  .description('print the experiment JSON Schema (published as experiments/schema.json)')
  .option('--write', 'write experiments/schema.json')
  .action(
    action(async (opts: { write?: boolean }) => {
      const { specJsonSchema } = await import('../core/experiment/validate');
      const text = JSON.stringify(specJsonSchema(), null, 2) + '\n';
      if (opts.write) writeFileSync(join(repoRoot, 'experiments', 'schema.json'), text);
      else printOut(text);
    }),
  );

program
  .command('cleanup')
  .description('stop every local mariadbd and runner a crashed aurora-bench left behind, and remove their temp data')
  .addHelpText(
    'after',
    '\nExit codes: 0 when every run found is settled; 75 when a run was kept unsettled (a live run, or a lake ' +
      'that refused\n' +
      'to record its end): the last line names it and why, and a later cleanup settles it; 1 on an error.',
  )
  .option('--lake <dir>', 'local results lake directory (the staging folders of killed imports go)', defaultLake)
  .action(
    action(async (opts: { lake: string }) => {
      const { cleanupLocalLeftovers } = await import('../core/cli/cleanup-command');
      const { text, exitCode } = await cleanupLocalLeftovers(localRunRoot, resolve(opts.lake));
      printOut(text + '\n');
      process.exitCode = exitCode;
    }),
  );

const main = program.parseAsync(process.argv);
failIfUnsettledAtExit(main, 'aurora-bench');
main.catch(fail);
