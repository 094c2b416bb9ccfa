/**
 * A planned step's sysbench options, checked when planning so a bad option fails before any client runs.
 * Connection options are added by the runner.
 *
 * sysbench 1.0.20 has no --warmup-time.
 * Warmup is `--report-checkpoints=W` with `--time=W+D`, and the checkpoint resets the counters.
 * So the final summary covers only the D measured seconds.
 * Option names take '-' and '_' alike.
 * A script that declares its options makes sysbench reject unknown ones, so they are checked here first.
 */
import type { DataPlan, RunnerPhase, StepPlan } from './types';
import { AuroraBenchError } from '../errors';

/**
 * The database every sysbench job uses, passed explicitly as --mysql-db.
 * It is sysbench 1.0.20's default, but sysbench never creates it. See src/drivers/mysql/drv_mysql.c.
 * The AWS backend and the local template create it. Naming it keeps all three in step.
 */
export const BENCHMARK_DATABASE = 'sbtest';

export class SysbenchOptionError extends AuroraBenchError {
  override readonly name = 'SysbenchOptionError';
}

type Kind = 'bool' | 'int' | 'number' | 'string';

/** sysbench 1.0.20 general options a spec may set, by canonical spelling. */
const GENERAL_OPTIONS: Readonly<Record<string, Kind>> = {
  'forced-shutdown': 'string',
  'thread-stack-size': 'string',
  debug: 'bool',
  validate: 'bool',
  'rand-type': 'string',
  'rand-spec-iter': 'int',
  'rand-spec-pct': 'number',
  'rand-spec-res': 'number',
  'rand-seed': 'int',
  'rand-pareto-h': 'number',
  verbosity: 'int',
  histogram: 'bool',
  'db-ps-mode': 'string',
  'db-debug': 'bool',
  'mysql-ssl': 'bool',
  'mysql-ssl-cipher': 'string',
  'mysql-compression': 'bool',
  'mysql-ignore-errors': 'string',
  'mysql-dry-run': 'bool',
};

/** Options the step or the runner sets. A spec setting them would silently conflict. */
const MANAGED_OPTIONS: Readonly<Record<string, string>> = {
  threads: 'set by the workload\'s "threads" (one step per value)',
  'num-threads': 'set by the workload\'s "threads"',
  time: 'set by "durationS"',
  'max-time': 'set by "durationS"',
  events: 'not supported: steps are timed ("durationS")',
  'max-requests': 'not supported: steps are timed ("durationS")',
  rate: 'set by the workload\'s "rates"',
  'tx-rate': 'set by the workload\'s "rates"',
  'report-interval': 'set by "reportIntervalS"',
  'report-checkpoints': 'used for warmup: set "warmupS"',
  'warmup-time': 'sysbench 1.0.20 has no --warmup-time: set "warmupS"',
  percentile: 'set by "percentile"',
  tables: 'set by data.tables',
  'table-size': 'set by data.tableSize',
  'mysql-host': "set by the runner from the cell's endpoint",
  'mysql-port': "set by the runner from the cell's endpoint",
  'mysql-user': "set by the runner from the cell's credentials",
  'mysql-password': "set by the runner from the cell's credentials",
  'mysql-socket': 'the runner connects over TCP',
  // sysbench 1.0.20's drv_mysql.c would then log the connect arguments, password included.
  'mysql-debug': 'it makes sysbench print the database password into its output',
  'db-driver': 'always mysql',
  'mysql-db': `the benchmark database is always ${BENCHMARK_DATABASE} (the one the backends create)`,
  'config-file': 'the runner uses it for the password',
  help: 'not a benchmark option',
  version: 'not a benchmark option',
};

/** Options of oltp_common.lua, which every stock OLTP test requires. */
const OLTP_OPTIONS: Readonly<Record<string, Kind>> = {
  range_size: 'int',
  point_selects: 'int',
  simple_ranges: 'int',
  sum_ranges: 'int',
  order_ranges: 'int',
  distinct_ranges: 'int',
  index_updates: 'int',
  non_index_updates: 'int',
  delete_inserts: 'int',
  range_selects: 'bool',
  auto_inc: 'bool',
  skip_trx: 'bool',
  secondary: 'bool',
  create_secondary: 'bool',
  mysql_storage_engine: 'string',
  pgsql_variant: 'string',
};

/** Script options per workload, beyond --tables and --table_size. Unknown custom scripts are not checked. */
const SCRIPT_OPTIONS: Readonly<Record<string, Readonly<Record<string, Kind>>>> = {
  oltp_read_only: OLTP_OPTIONS,
  oltp_write_only: OLTP_OPTIONS,
  oltp_read_write: OLTP_OPTIONS,
  oltp_point_select: OLTP_OPTIONS,
  oltp_update_index: OLTP_OPTIONS,
  oltp_update_non_index: OLTP_OPTIONS,
  oltp_insert: OLTP_OPTIONS,
  oltp_delete: OLTP_OPTIONS,
  select_random_points: { ...OLTP_OPTIONS, random_points: 'int' },
  select_random_ranges: { ...OLTP_OPTIONS, number_of_ranges: 'int', delta: 'int' },
  'fullscan_1kb.lua': {},
};

/** Options sysbench reads only while running, so prepare leaves them out. */
const RUN_ONLY_GENERAL = new Set(['histogram', 'forced-shutdown']);

const key = (name: string): string => name.replace(/-/g, '_');

interface Known {
  readonly spelling: string;
  readonly kind: Kind;
}

function lookup(name: string, workload: string): Known | undefined {
  const k = key(name);
  for (const [spelling, kind] of Object.entries(GENERAL_OPTIONS)) if (key(spelling) === k) return { spelling, kind };
  const script = SCRIPT_OPTIONS[workload];
  if (script) for (const [spelling, kind] of Object.entries(script)) if (key(spelling) === k) return { spelling, kind };
  return undefined;
}

function formatValue(option: string, value: string | number | boolean, kind: Kind | undefined): string {
  const bad = (what: string) =>
    new SysbenchOptionError(`sysbench option "${option}" ${what}, got ${JSON.stringify(value)}`);
  if (typeof value === 'boolean') {
    if (kind !== undefined && kind !== 'bool') throw bad(`takes a ${kind === 'string' ? 'string' : 'number'}`);
    return value ? 'on' : 'off';
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw bad('needs a finite number');
    if (kind === 'bool') throw bad('is on/off (use true or false)');
    if (kind === 'int' && !Number.isInteger(value)) throw bad('needs an integer');
    return String(value);
  }
  if (kind === 'bool' && !/^(on|off|true|false|yes|no|1|0)$/i.test(value)) throw bad('is on/off (use true or false)');
  if ((kind === 'int' || kind === 'number') && !/^-?\d+(\.\d+)?$/.test(value)) throw bad('needs a number');
  if (/[\s]/.test(value) || value === '') throw bad('needs a non-empty value without whitespace');
  return value;
}

/** The workload key the option tables use, the stock test name or the script's file name. */
function workloadOf(step: StepPlan): string {
  const w = step.script?.name ?? step.test;
  if (w === undefined) throw new SysbenchOptionError(`step ${step.stepId} has neither a test nor a script`);
  return w;
}

function positiveInt(value: number, field: string, min = 1): number {
  if (!Number.isInteger(value) || value < min)
    throw new SysbenchOptionError(`${field} must be an integer >= ${min}, got ${value}`);
  return value;
}

/**
 * sysbench options for one step and phase, without connection options.
 * Table-shaping options matter to prepare too, so it gets the step's options.
 */
export function buildSysbenchArgs(step: StepPlan, data: DataPlan, phase: RunnerPhase): string[] {
  const workload = workloadOf(step);
  const args = [
    `--mysql-db=${BENCHMARK_DATABASE}`,
    `--tables=${positiveInt(data.tables, 'data.tables')}`,
    `--table-size=${positiveInt(data.tableSize, 'data.tableSize')}`,
  ];
  if (phase === 'prepare') {
    args.push(`--threads=${positiveInt(data.prepareThreads, 'data.prepareThreads')}`);
  } else {
    const warmup = positiveInt(step.warmupS, `step ${step.stepId} warmupS`, 0);
    const duration = positiveInt(step.durationS, `step ${step.stepId} durationS`);
    args.push(`--threads=${positiveInt(step.threads, `step ${step.stepId} threads`)}`, `--time=${warmup + duration}`);
    if (warmup > 0) args.push(`--report-checkpoints=${warmup}`);
    args.push(`--report-interval=${positiveInt(step.reportIntervalS, `step ${step.stepId} reportIntervalS`)}`);
    args.push(`--percentile=${positiveInt(step.percentile, `step ${step.stepId} percentile`, 0)}`);
    if (positiveInt(step.rate, `step ${step.stepId} rate`, 0) > 0) args.push(`--rate=${step.rate}`);
    // The latency distribution comes from the histogram sysbench prints at the end of a run.
    // See sb_histogram_print in src/sysbench.c. It is on unless the step's options say otherwise.
    if (!Object.keys(step.options).some((name) => key(name) === 'histogram')) args.push('--histogram=on');
  }
  const seen = new Map<string, string>();
  // An optional option set to undefined in code is left out.
  for (const [name, value] of Object.entries(step.options) as [string, string | number | boolean | undefined][]) {
    if (value === undefined) continue;
    if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) {
      throw new SysbenchOptionError(
        `sysbench option name "${name}" (workload ${step.workload}) is not a valid option name`,
      );
    }
    const managed = Object.entries(MANAGED_OPTIONS).find(([m]) => key(m) === key(name));
    if (managed)
      throw new SysbenchOptionError(
        `sysbench option "${name}" (workload ${step.workload}) cannot be set in options: ${managed[1]}`,
      );
    const known = lookup(name, workload);
    if (known === undefined && workload in SCRIPT_OPTIONS) {
      throw new SysbenchOptionError(
        `sysbench option "${name}" (workload ${step.workload}) is not accepted by sysbench 1.0.20's ${workload}` +
          ` (known: ${Object.keys(SCRIPT_OPTIONS[workload]!).concat(Object.keys(GENERAL_OPTIONS)).join(', ')})`,
      );
    }
    const spelling = known?.spelling ?? name;
    const previous = seen.get(key(spelling));
    if (previous !== undefined)
      throw new SysbenchOptionError(
        `sysbench option "${name}" (workload ${step.workload}) is given twice (also as "${previous}")`,
      );
    seen.set(key(spelling), name);
    const formatted = formatValue(name, value, known?.kind);
    if (phase === 'prepare' && RUN_ONLY_GENERAL.has(spelling)) continue;
    args.push(`--${spelling}=${formatted}`);
  }
  return args;
}
