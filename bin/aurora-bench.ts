#!/usr/bin/env node
/**
 * The aurora-bench CLI. It only wires: every command's work is in core/ (and lib/ for the stack).
 */
import '../core/polyfills';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { findRepoRoot } from '../core/cli/tool-info';
import { printErr, printOut } from '../core/cli/terminal';
import { formatError, UsageError } from '../core/errors';
import { failIfUnsettledAtExit } from '../core/cli/unsettled-exit';
import { SCALES } from '../core/experiment/scale';
import { repeatsText } from '../core/experiment/rounds';
import { runIdProblem } from '../core/plan/run-id';
import type { HistoryFlags } from '../core/cli/regression-command';

const repoRoot = findRepoRoot(__dirname);
const builtinWorkloads = join(repoRoot, 'client', 'workloads');
const defaultLake = process.env['AURORA_BENCH_LAKE'] ?? join(process.cwd(), '.aurora-bench', 'lake');
/** Where local runs keep datadirs, sockets and their registry (default: <tmpdir>/aurora-bench-runs). */
const localRunRoot = process.env['AURORA_BENCH_RUN_ROOT'];

/** A --run-id is refused before anything starts when it cannot be one (core/plan/run-id.ts). */
function checkRunId(runId: string | undefined): void {
  const problem = runId === undefined ? undefined : runIdProblem(runId);
  if (problem !== undefined) throw new UsageError(problem);
}

/**
 * Every error ends here: a user-facing one as its message and causes,
 * anything else with its stack (core/errors.ts); exit code 1.
 */
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

/** --scale: the experiment as written, or shrunk for a local rehearsal (core/experiment/scale.ts). */
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
      const { loadSpecFile, isSpecSchemaFile } = await import('../core/experiment/validate');
      let bad = 0;
      for (const file of specs) {
        // `validate experiments/*.json` also matches the published JSON Schema itself.
        if (isSpecSchemaFile(file)) {
          printOut(`skip: ${file} (the experiment JSON Schema, not an experiment)\n`);
          continue;
        }
        try {
          const loaded = loadSpecFile(file, builtinWorkloads);
          const { spec } = loaded;
          // Planning checks what the schema cannot: sysbench options per test, step expansion. On
          // AWS unless every variant is a local-only what-if (which only the local backend runs).
          const { hasLocalOnlyParameters } = await import('../core/plan/plan');
          const { preparePlan } = await import('../core/plan/prepare');
          const localOnly = spec.variants.filter((v) => hasLocalOnlyParameters(spec, v)).map((v) => v.name);
          // What the AWS backend cannot provision yet (an engine) is said, not a spec error: the spec is valid.
          const prepared = preparePlan(loaded, {
            backend: localOnly.length === spec.variants.length ? 'local' : 'aws',
            source: file,
            refusals: 'show',
          });
          const whatIfs =
            localOnly.length > 0
              ? `; local-only what-if: ${localOnly.join(', ')} (an AWS plan ` +
                `refuses ${localOnly.length === 1 ? 'it' : 'them'})`
              : '';
          const notOnAws = [
            ...new Set(
              prepared.notes
                .filter((n) => n.level === 'refused')
                .map((n) => `${n.path}: ${n.message.replace(/^variant "[^"]*": /, '')}`),
            ),
          ];
          const awsNote = notOnAws.length > 0 ? `; not on AWS yet: ${notOnAws.join('; ')}` : '';
          printOut(
            `ok: ${file} (${spec.variants.length} variants, ${spec.workloads.length} ` +
              `workloads, ${repeatsText(spec)}${whatIfs}${awsNote})\n`,
          );
        } catch (e) {
          bad++;
          const message = (e as Error).message;
          printErr(`${message.startsWith(file) ? message : `${file}: ${message}`}\n`);
        }
      }
      if (bad > 0) process.exit(1);
    }),
  );

/** For the experiment cdk.json schedules nightly: what the schedule costs a month (core/plan/nightly-cost.ts). */
async function nightlyPlanLines(
  file: string,
  plan: import('../core/plan/types').Plan,
  prices: string | undefined,
): Promise<string[]> {
  const { CONFIG_CONTEXT_KEY, parseAppConfig } = await import('../lib/config');
  const cdkJson = JSON.parse(readFileSync(join(repoRoot, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  const nightly = parseAppConfig(cdkJson.context?.[CONFIG_CONTEXT_KEY]).nightly;
  if (resolve(file) !== resolve(repoRoot, nightly.experiment)) return [];
  const { estimatePlanCost, formatMoney, loadPrices } = await import('../core/plan/cost');
  const { nightlyCostLines } = await import('../core/plan/nightly-cost');
  const cost = estimatePlanCost(plan, loadPrices(repoRoot, prices ? resolve(prices) : undefined));
  return nightlyCostLines(nightly, cost.total, cost.currency, cost.pricesAsOf, (v) => formatMoney(v, cost.currency));
}

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
    action(
      async (
        file: string,
        opts: { backend: 'local' | 'aws'; aws?: boolean; json?: boolean; scale: 'full' | 'small'; prices?: string },
      ) => {
        const { preparePlanFromFile } = await import('../core/plan/prepare');
        const { renderPlan } = await import('../core/cli/plan-view');
        const { localSpecRefusalsUnder } = await import('../core/backends/local/preflight');
        const { defaultRunRoot } = await import('../core/backends/local/registry');
        const backend = opts.aws ? 'aws' : opts.backend;
        // The same preparation as `run`; the local backend's refusals are shown here, refused there.
        const prepared = preparePlanFromFile(file, builtinWorkloads, {
          backend,
          scale: opts.scale,
          refusals: 'show',
          ...(backend === 'local' ? { backendRefusals: localSpecRefusalsUnder(localRunRoot ?? defaultRunRoot()) } : {}),
        });
        const plan = { ...prepared.plan, notes: [...prepared.notes] };
        const { planCostLines } = await import('../core/plan/cost');
        const extra = await planCostLines(
          prepared.spec,
          plan,
          repoRoot,
          opts.prices ? resolve(opts.prices) : undefined,
        );
        if (backend === 'aws') {
          const { planVcpuLine } = await import('../core/backends/aws/vcpu-quota');
          extra.push(planVcpuLine(plan), ...(await nightlyPlanLines(file, plan, opts.prices)));
          const { roundsPlanLines } = await import('../core/cli/rounds-plan');
          const { estimatePlanCost, loadPrices } = await import('../core/plan/cost');
          const table = loadPrices(repoRoot, opts.prices ? resolve(opts.prices) : undefined);
          extra.push(...roundsPlanLines(prepared.spec, plan, estimatePlanCost(plan, table).total));
        }
        printOut(opts.json ? JSON.stringify(plan, null, 2) + '\n' : renderPlan(plan, extra) + '\n');
        // A plan that shows a refusal is not what `run` would do as written: scripts and CI see it in the exit code.
        const refused = plan.notes.filter((n) => n.level === 'refused');
        if (refused.length > 0) {
          printErr(
            `aurora-bench: ${file}: ${refused.length} refusal${refused.length === 1 ? '' : 's'} in the plan ` +
              `(${refused.map((n) => n.path).join(', ')}): see [refused] above\n`,
          );
          process.exitCode = 1;
        }
      },
    ),
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
    action(async (file: string, opts: { aws?: boolean; stack: string; region?: string; prices?: string }) => {
      if (!opts.aws)
        throw new UsageError(
          'preflight checks an AWS account: pass --aws (a local run checks its own tools when it starts)',
        );
      const { preflightOnAws } = await import('../core/cli/preflight-aws');
      const { code, text } = await preflightOnAws({
        specFile: file,
        repoRoot,
        stackName: opts.stack,
        ...(opts.region ? { region: opts.region } : {}),
        ...(opts.prices ? { prices: resolve(opts.prices) } : {}),
      });
      printOut(text + '\n');
      process.exit(code);
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
    action(
      async (
        file: string,
        opts: {
          aws?: boolean;
          awsRehearsal?: boolean;
          lake: string;
          runId?: string;
          stack: string;
          region?: string;
          scale: 'full' | 'small';
        },
      ) => {
        if (opts.aws && opts.awsRehearsal) throw new UsageError('give either --aws or --aws-rehearsal');
        checkRunId(opts.runId);
        if (opts.awsRehearsal) {
          const { runRehearsalCommand } = await import('../core/cli/run-rehearsal-command');
          const { rehearsalWiring } = await import('./aws-rehearsal');
          const code = await runRehearsalCommand({
            specFile: file,
            repoRoot,
            scale: opts.scale,
            lakeDir: resolve(opts.lake),
            ...(opts.runId ? { runId: opts.runId } : {}),
            ...(localRunRoot ? { runRoot: localRunRoot } : {}),
            ...rehearsalWiring(repoRoot),
          });
          process.exit(code);
        }
        if (opts.aws) {
          if (opts.scale !== 'full')
            throw new UsageError('--scale small is for local rehearsals; on AWS run the experiment as written');
          const { runOnAws } = await import('../core/cli/run-aws');
          const { askOnInterrupt } = await import('../core/cli/interrupt-choice');
          // First Ctrl-C: the follower asks whether to stop the execution or leave it (core/cli/aws-follow.ts);
          // a second one while it asks exits at once, leaving the execution as it is, and says so.
          const interrupt = new AbortController();
          let executionArn: string | undefined;
          process.on('SIGINT', () => {
            if (!interrupt.signal.aborted) {
              interrupt.abort();
              return;
            }
            printErr(
              `\naurora-bench: second Ctrl-C: exiting without stopping the ` +
                `execution` +
                (executionArn
                  ? `; it goes on: stop it with aws stepfunctions stop-execution --execution-arn ${executionArn}`
                  : '') +
                `\n`,
            );
            process.exit(130);
          });
          const code = await runOnAws({
            specFile: file,
            repoRoot,
            stackName: opts.stack,
            ...(opts.region ? { region: opts.region } : {}),
            ...(opts.runId ? { runId: opts.runId } : {}),
            log: (l) => printOut(l + '\n'),
            interrupt: interrupt.signal,
            onInterrupt: (arn) => {
              executionArn = arn;
              return askOnInterrupt({ input: process.stdin, output: process.stderr }, arn);
            },
          });
          process.exit(code);
        }
        const { runLocalCommand } = await import('../core/cli/run-local-command');
        const code = await runLocalCommand({
          specFile: file,
          repoRoot,
          lakeDir: resolve(opts.lake),
          ...(opts.runId ? { runId: opts.runId } : {}),
          ...(localRunRoot ? { runRoot: localRunRoot } : {}),
          scale: opts.scale,
        });
        process.exit(code);
      },
    ),
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
    action(
      async (opts: {
        run?: string;
        sql?: string;
        export?: string;
        json?: boolean;
        lake: string;
        aws?: boolean;
        stack: string;
      }) => {
        const { resultsCommand } = await import('../core/cli/results-command');
        if (opts.export && opts.aws)
          throw new UsageError(
            '--export writes a local lake query; Athena writes its results to the workgroup output location',
          );
        const { defaultRunRoot } = await import('../core/backends/local/registry');
        printOut(
          await resultsCommand({
            ...opts,
            ...(opts.export ? { export: resolve(opts.export) } : {}),
            lakeDir: resolve(opts.lake),
            repoRoot,
            runRoot: localRunRoot ?? defaultRunRoot(),
          }),
        );
      },
    ),
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
    action(
      async (
        run: string | undefined,
        opts: {
          html?: string;
          prices?: string;
          lake: string;
          aws?: boolean;
          stack: string;
          includeSaturated?: boolean;
          json?: boolean;
        },
      ) => {
        const common = {
          ...(opts.json ? { json: true } : {}),
          ...(run ? { runId: run } : {}),
          repoRoot,
          ...(opts.html ? { html: resolve(opts.html) } : {}),
          ...(opts.prices ? { prices: resolve(opts.prices) } : {}),
          ...(opts.includeSaturated ? { includeSaturated: true } : {}),
        };
        if (opts.aws) {
          const { athenaReportText } = await import('../core/cli/report-aws');
          printOut(await athenaReportText({ ...common, stackName: opts.stack }));
          return;
        }
        const { reportCommand } = await import('../core/report/report');
        const { ownerGoneNote } = await import('../core/cli/results-command');
        const { defaultRunRoot } = await import('../core/backends/local/registry');
        const note = await ownerGoneNote(resolve(opts.lake), localRunRoot ?? defaultRunRoot(), run);
        printOut(note + (await reportCommand({ ...common, lakeDir: resolve(opts.lake) })));
      },
    ),
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
    action(
      async (
        runA: string,
        runB: string,
        opts: { json?: boolean; level: string; failOn?: 'regression'; lake: string; aws?: boolean; stack: string },
      ) => {
        const { compareCommand, parseLevel } = await import('../core/cli/regression-command');
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
        if (opts.failOn === 'regression' && comparison.regressions > 0) {
          printErr(
            `aurora-bench: ${comparison.regressions} regression${comparison.regressions === 1 ? '' : 's'} ` +
              `from ${runA} to ${runB}\n`,
          );
          process.exit(2);
        }
      },
    ),
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
    action(
      async (
        experiment: string,
        opts: HistoryFlags & { json?: boolean; html?: string; lake: string; aws?: boolean; stack: string },
      ) => {
        const { historyCommand, historyFlags } = await import('../core/cli/regression-command');
        const { text } = await historyCommand({
          lakeDir: resolve(opts.lake),
          ...(opts.aws ? { aws: { stackName: opts.stack } } : {}),
          experiment,
          builtinWorkloads,
          ...historyFlags(opts),
          ...(opts.json ? { json: true } : {}),
          ...(opts.html ? { html: resolve(opts.html) } : {}),
        });
        printOut(text);
      },
    ),
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
    action(
      async (
        paths: string[],
        opts: {
          mapping?: string;
          experiment?: string;
          variant?: string;
          variantPattern?: string[];
          workload?: string;
          test?: string;
          threads?: string;
          rate?: string;
          date?: string;
          instanceClass?: string;
          runId?: string;
          allowFailed?: boolean;
          runPerDate?: boolean;
          lake: string;
        },
      ) => {
        const { importLogs } = await import('../core/cli/import-logs');
        const { mapping, runId, allowFailed, runPerDate, lake, ...flags } = opts;
        checkRunId(runId);
        importLogs({
          paths,
          lakeDir: resolve(lake),
          repoRoot,
          ...(mapping !== undefined ? { mappingFile: mapping } : {}),
          flags,
          ...(runId !== undefined ? { runId } : {}),
          ...(allowFailed ? { allowFailed: true } : {}),
          ...(runPerDate ? { runPerDate: true } : {}),
          log: (l) => printOut(l + '\n'),
        });
      },
    ),
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
