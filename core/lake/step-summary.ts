/**
 * step_summary, declared once: how a step of a cell is summed over its clients' rows.
 * The view's SQL is generated from these declarations.
 * The workflow needs a step's status before its rows are queryable, so it evaluates them in TypeScript.
 * test/unit/lake-schema.test.ts runs both on real rows and compares every column.
 *
 * Throughput is summed over clients, since they ran at once.
 * Latency takes the worst client's percentiles, since a percentile cannot be averaged.
 * A step with any failed client is failed.
 * Its metrics stay NULL when no client produced a summary, so a failure never reads as zero throughput.
 * A step whose clients are ok or overloaded is overloaded, a measurement rather than a failure.
 *
 * The SQL keeps to what both Trino and DuckDB run. test/unit/lake-views-sql.test.ts checks it.
 * Explicit CASTs to DOUBLE keep Trino from integer division.
 * The TypeScript follows SQL's NULL rules.
 */
import type { StepRow } from './rows';
import { VIEW_COLUMNS, type StepSummaryRow } from './schema';

type StepColumn = keyof StepRow;

/** A test of one client row. Its column holds one of the values, or with `not` none of them. */
type Condition =
  | { readonly column: StepColumn; readonly oneOf: readonly string[]; readonly not?: true }
  | { readonly column: StepColumn; readonly isTrue: true };

/** How one step_summary column comes from the step's client rows. */
type Aggregate =
  /** A column the rows are grouped by. */
  | { readonly kind: 'group' }
  | { readonly kind: 'max' | 'min' | 'avg'; readonly of: StepColumn }
  /** `orZero` gives 0 rather than NULL when no row has a value. */
  | { readonly kind: 'sum'; readonly of: StepColumn; readonly orZero?: true }
  /** The number of rows, one per client. */
  | { readonly kind: 'count' }
  | { readonly kind: 'count-where'; readonly where: Condition }
  /** A per-client figure times the number of clients, as a double. */
  | { readonly kind: 'max-times-count'; readonly of: StepColumn }
  /** The sum of a column per the largest of another. NULL for 0. */
  | { readonly kind: 'sum-per-max'; readonly of: StepColumn; readonly per: StepColumn }
  /** The mean weighted by another column over the rows that have both. The plain mean when no weight is there. */
  | { readonly kind: 'weighted-mean'; readonly of: StepColumn; readonly weight: StepColumn }
  /**
   * The value of the first rule that holds, else `otherwise`.
   * `all` needs every row to meet the condition, `any` some row.
   */
  | {
      readonly kind: 'first-rule';
      readonly rules: readonly { readonly value: string; readonly when: 'all' | 'any'; readonly where: Condition }[];
      readonly otherwise: string;
    };

/** A step's status from its clients'. */
const STATUS = {
  kind: 'first-rule',
  rules: [
    { value: 'skipped', when: 'all', where: { column: 'status', oneOf: ['skipped'] } },
    { value: 'failed', when: 'any', where: { column: 'status', oneOf: ['ok', 'overloaded'], not: true } },
    { value: 'overloaded', when: 'any', where: { column: 'status', oneOf: ['overloaded'] } },
  ],
  otherwise: 'ok',
} as const satisfies Aggregate;

/** What a step's status can be (step_summary.status). */
export type StepStatus = (typeof STATUS.rules)[number]['value'] | typeof STATUS.otherwise;

const max = (of: StepColumn): Aggregate => ({ kind: 'max', of });
const sum = (of: StepColumn): Aggregate => ({ kind: 'sum', of });
const GROUP: Aggregate = { kind: 'group' };

/** Every column of step_summary, in the schema's order. */
const STEP_SUMMARY: { readonly [K in keyof StepSummaryRow]: Aggregate } = {
  run_id: GROUP,
  cell_id: GROUP,
  variant: GROUP,
  repeat: max('repeat'),
  instance_class: max('instance_class'),
  az: max('az'),
  step_id: GROUP,
  step_index: max('step_index'),
  workload: max('workload'),
  test: max('test'),
  threads: max('threads'),
  rate: max('rate'),
  offered_tps: { kind: 'max-times-count', of: 'rate' },
  target: max('target'),
  clients: { kind: 'count' },
  ok_clients: { kind: 'count-where', where: { column: 'status', oneOf: ['ok'] } },
  status: STATUS,
  error: max('error'),
  started_at: { kind: 'min', of: 'started_at' },
  ended_at: max('ended_at'),
  tps: sum('tps'),
  qps: sum('qps'),
  events: sum('events'),
  reads: sum('reads'),
  writes: sum('writes'),
  other: sum('other'),
  errors: { kind: 'sum', of: 'errors', orZero: true },
  reconnects: { kind: 'sum', of: 'reconnects', orZero: true },
  errors_per_s: { kind: 'sum-per-max', of: 'errors', per: 'total_time_s' },
  lat_min_ms: { kind: 'min', of: 'lat_min_ms' },
  lat_avg_ms: { kind: 'weighted-mean', of: 'lat_avg_ms', weight: 'events' },
  lat_pct: max('lat_pct'),
  lat_pct_ms: max('lat_pct_ms'),
  lat_p50_ms: max('lat_p50_ms'),
  lat_p90_ms: max('lat_p90_ms'),
  lat_p95_ms: max('lat_p95_ms'),
  lat_p99_ms: max('lat_p99_ms'),
  lat_p999_ms: max('lat_p999_ms'),
  lat_max_ms: max('lat_max_ms'),
  total_time_s: max('total_time_s'),
  interval_count: sum('interval_count'),
  client_cpu_avg_pct: { kind: 'avg', of: 'client_cpu_avg_pct' },
  client_cpu_max_pct: max('client_cpu_max_pct'),
  saturated_clients: { kind: 'count-where', where: { column: 'client_saturated', isTrue: true } },
  read_back_checks: sum('read_back_checks'),
  stale_reads: sum('stale_reads'),
  dt: max('dt'),
};

const summaryColumns = (): (keyof StepSummaryRow)[] =>
  Object.keys(VIEW_COLUMNS.step_summary) as (keyof StepSummaryRow)[];

// ---- SQL ----

const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** 1 for a row that meets the condition, else 0. */
function conditionSql(c: Condition): string {
  if ('isTrue' in c) return `CASE WHEN ${c.column} THEN 1 ELSE 0 END`;
  const test = `${c.column} IN (${c.oneOf.map(sqlString).join(', ')})`;
  return c.not === true ? `CASE WHEN ${test} THEN 0 ELSE 1 END` : `CASE WHEN ${test} THEN 1 ELSE 0 END`;
}

function aggregateSql(column: string, a: Aggregate): string {
  switch (a.kind) {
    case 'group':
      return column;
    case 'max':
    case 'min':
    case 'avg':
      return `${a.kind.toUpperCase()}(${a.of})`;
    case 'sum':
      return a.orZero === true ? `COALESCE(SUM(${a.of}), 0)` : `SUM(${a.of})`;
    case 'count':
      return 'COUNT(*)';
    case 'count-where':
      return `SUM(${conditionSql(a.where)})`;
    case 'max-times-count':
      return `CAST(MAX(${a.of}) * COUNT(*) AS DOUBLE)`;
    case 'sum-per-max':
      return `CAST(SUM(${a.of}) AS DOUBLE) / NULLIF(MAX(${a.per}), 0)`;
    case 'weighted-mean': {
      const weights = `SUM(CASE WHEN ${a.of} IS NOT NULL THEN ${a.weight} ELSE 0 END)`;
      return (
        `CASE WHEN ${weights} > 0 THEN SUM(CAST(${a.of} AS DOUBLE) * ${a.weight}) / ${weights} ELSE ` +
        `AVG(${a.of}) END`
      );
    }
    case 'first-rule': {
      const rules = a.rules.map(
        (r) =>
          `WHEN SUM(${conditionSql(r.where)}) ${r.when === 'all' ? '= COUNT(*)' : '> 0'} THEN ${sqlString(r.value)}`,
      );
      return `CASE ${rules.join(' ')} ELSE ${sqlString(a.otherwise)} END`;
    }
  }
}

/** The step_summary view over the steps table. */
export function stepSummaryViewSql(): string {
  const columns = summaryColumns();
  const select = columns.map((c) =>
    STEP_SUMMARY[c].kind === 'group' ? `  ${c}` : `  ${aggregateSql(c, STEP_SUMMARY[c])} AS ${c}`,
  );
  const groups = columns.filter((c) => STEP_SUMMARY[c].kind === 'group');
  return [
    'CREATE OR REPLACE VIEW step_summary AS',
    'SELECT',
    select.join(',\n'),
    'FROM steps',
    `GROUP BY ${groups.join(', ')}`,
  ].join('\n');
}

// ---- TypeScript ----

/** The client rows of one step, or as much of them as the columns read. */
type ClientRows = readonly Readonly<Partial<Record<StepColumn, unknown>>>[];

const valueOf = (row: ClientRows[number], column: StepColumn): unknown => row[column] ?? null;
const numbers = (rows: ClientRows, column: StepColumn): number[] =>
  rows
    .map((r) => valueOf(r, column))
    .filter((v): v is number => v !== null)
    .map(Number);
const total = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

function meets(row: ClientRows[number], c: Condition): boolean {
  const v = valueOf(row, c.column);
  if ('isTrue' in c) return v === true;
  const holds = typeof v === 'string' && c.oneOf.includes(v);
  return c.not === true ? !holds : holds;
}

/** The largest or smallest non-NULL value. Strings compare in code-unit order, like SQL's binary collation. */
function extreme(rows: ClientRows, column: StepColumn, largest: boolean): unknown {
  const values = rows.map((r) => valueOf(r, column)).filter((v) => v !== null) as (number | string)[];
  if (values.length === 0) return null;
  return values.reduce((a, b) => (largest ? (b > a ? b : a) : b < a ? b : a));
}

function aggregate(rows: ClientRows, column: keyof StepSummaryRow, a: Aggregate): unknown {
  switch (a.kind) {
    case 'group':
      return rows.length === 0 ? null : valueOf(rows[0]!, column as StepColumn);
    case 'max':
    case 'min':
      return extreme(rows, a.of, a.kind === 'max');
    case 'avg': {
      const xs = numbers(rows, a.of);
      return xs.length === 0 ? null : total(xs) / xs.length;
    }
    case 'sum': {
      const xs = numbers(rows, a.of);
      return xs.length === 0 ? (a.orZero === true ? 0 : null) : total(xs);
    }
    case 'count':
      return rows.length;
    case 'count-where':
      return rows.filter((r) => meets(r, a.where)).length;
    case 'max-times-count': {
      const m = extreme(rows, a.of, true);
      return m === null ? null : Number(m) * rows.length;
    }
    case 'sum-per-max': {
      const xs = numbers(rows, a.of);
      const per = extreme(rows, a.per, true);
      return xs.length === 0 || per === null || Number(per) === 0 ? null : total(xs) / Number(per);
    }
    case 'weighted-mean': {
      const both = rows.filter((r) => valueOf(r, a.of) !== null && valueOf(r, a.weight) !== null);
      const weights = total(both.map((r) => Number(valueOf(r, a.weight))));
      if (weights > 0) return total(both.map((r) => Number(valueOf(r, a.of)) * Number(valueOf(r, a.weight)))) / weights;
      const xs = numbers(rows, a.of);
      return xs.length === 0 ? null : total(xs) / xs.length;
    }
    case 'first-rule': {
      // SQL's SUM over no rows is NULL, which equals nothing. So an `all` rule never holds for no rows.
      const rule = a.rules.find((r) =>
        r.when === 'all'
          ? rows.length > 0 && rows.every((x) => meets(x, r.where))
          : rows.some((x) => meets(x, r.where)),
      );
      return rule?.value ?? a.otherwise;
    }
  }
}

/** Columns of a step's summary, computed by the same declarations as the view. */
export function summarizeStep<K extends keyof StepSummaryRow>(
  rows: ClientRows,
  columns: readonly K[] = summaryColumns() as K[],
): Pick<StepSummaryRow, K> {
  return Object.fromEntries(columns.map((c) => [c, aggregate(rows, c, STEP_SUMMARY[c])])) as Pick<StepSummaryRow, K>;
}
