/**
 * Which of the parameters the variants differ in act on the servers that ran: a difference in the
 * experiment file is a confounder only if the servers ran with different values. The lake says so:
 * the plan notes name the parameters a backend could not apply ("not applicable locally": MariaDB
 * has no such system variable, e.g. Aurora's innodb_trx_commit_allow_data_loss), and the
 * server_config table holds what each server ran with, read at prepare (a requested value, checked
 * in effect, or one of the performance variables recorded whether set or not: a parameter one
 * variant sets may be the server's default on the others, as innodb_flush_method O_DIRECT is on
 * MariaDB 10.11).
 */
import type { LocalCaveats } from './local-caveats';
import type { TableBlock } from './model';
import { uniqueInOrder, type Context } from './context';

type ParameterDifference = LocalCaveats['parameterDifferences'][number];

export interface ParameterInEffect {
  readonly parameter: string;
  /**
   * differs: the servers ran with different values (or one variant's is not recorded); same: every
   * server ran with one value; not-applied: no server that set it could apply it.
   */
  readonly effect: 'differs' | 'same' | 'not-applied';
  /** Each variant's value as it ran: recorded, else as set (null: not recorded). */
  readonly values: readonly { readonly variant: string; readonly value: string | null }[];
  /** Why it does not differ: "no such variable on MariaDB: AWS only", "the same on every server: O_DIRECT". */
  readonly why: string | null;
}

/** Variants whose plan note says the parameter could not be applied on this backend. */
function notApplied(ctx: Context, parameter: string): Set<string> {
  let notes: { path?: string; message?: string }[] = [];
  try {
    notes = JSON.parse(ctx.data.run.notes || '[]') as typeof notes;
  } catch {
    return new Set();
  }
  const out = new Set<string>();
  for (const n of notes) {
    const m = /^variants\[name=([^\]]+)\]\.\w+\.([\w.]+)$/.exec(n.path ?? '');
    if (m !== null && m[2] === parameter && /not applicable locally|takes effect on AWS only/.test(n.message ?? ''))
      out.add(m[1]!);
  }
  return out;
}

/** Each parameter difference as the servers ran it; null when the lake records no server values (older runs). */
export function parametersInEffect(
  ctx: Context,
  differences: readonly ParameterDifference[],
): ParameterInEffect[] | null {
  const config = ctx.data.serverConfig ?? [];
  if (config.length === 0) return null;
  return differences.map((d) => {
    const off = notApplied(ctx, d.parameter);
    const setBy = d.values.filter((x) => x.value !== null).map((x) => x.variant);
    const values = d.values.map((x) => {
      const ran = config.find((c) => c.variant === x.variant && c.name === d.parameter);
      if (ran !== undefined) return { variant: x.variant, value: ran.value };
      // Set but not applied here: the server ran without it, as the variants that left it unset.
      if (off.has(x.variant) || x.value === null) return { variant: x.variant, value: null };
      return { variant: x.variant, value: String(x.value) };
    });
    if (setBy.length > 0 && setBy.every((v) => off.has(v)))
      return {
        parameter: d.parameter,
        effect: 'not-applied',
        values,
        why: ctx.data.run.backend === 'local' ? 'no such variable on MariaDB: AWS only' : 'not applied by the engine',
      };
    const ran = uniqueInOrder(values.map((x) => x.value));
    if (ran.length === 1 && ran[0] !== null)
      return { parameter: d.parameter, effect: 'same', values, why: `the same on every server: ${ran[0]}` };
    return { parameter: d.parameter, effect: 'differs', values, why: null };
  });
}

/** MariaDB's defaults for parameters the lake records only when set (MariaDB KB, "InnoDB System Variables"). */
const MARIADB_DEFAULTS: Readonly<Record<string, string>> = { innodb_flush_neighbors: '1' };

/** A value the lake does not hold: the variant left it unset, so the server ran its default. */
export const valueText = (x: string | null, parameter: string): string =>
  x !== null
    ? x
    : MARIADB_DEFAULTS[parameter] !== undefined
      ? `unset: MariaDB's default ${MARIADB_DEFAULTS[parameter]}`
      : 'unset: the server default, not recorded';

/**
 * The acting differences grouped by the variants that depart from the rest, as local-caveats.ts
 * groups them: per group, "parameter value (others value)"; the rest is the largest group sharing a value.
 */
function departures(ps: readonly ParameterInEffect[]): { variants: string[]; parts: string[] }[] {
  const groups = new Map<string, { variants: string[]; parts: string[] }>();
  for (const d of ps) {
    const text = (x: string | null): string => valueText(x, d.parameter);
    const values = uniqueInOrder(d.values.map((x) => text(x.value)));
    const holders = (val: string): string[] => d.values.filter((x) => text(x.value) === val).map((x) => x.variant);
    const common = values.reduce((a, b) => (holders(b).length > holders(a).length ? b : a));
    for (const val of values.filter((v) => v !== common)) {
      const key = holders(val).join(', ');
      const g = groups.get(key) ?? { variants: holders(val), parts: [] };
      g.parts.push(`${d.parameter} ${val} (others ${common})`);
      groups.set(key, g);
    }
  }
  return [...groups.values()];
}

/**
 * Parameters that act only when a transaction commits: innodb_flush_log_at_trx_commit flushes the redo log
 * at commit and sync_binlog syncs the binary log, written at commit (MySQL Reference Manual, "InnoDB Startup
 * Options and System Variables", "Binary Logging Options and Variables"). A workload that commits nothing
 * (sysbench --skip-trx over SELECTs) is out of their reach.
 */
export const COMMIT_ONLY: ReadonlySet<string> = new Set(['innodb_flush_log_at_trx_commit', 'sync_binlog']);

export interface EffectScope {
  /** The parameters the study varies on purpose: named as the one studied, not a confounder. */
  readonly studied: readonly string[];
  /** The workloads that commit (where the commit-only parameters can act) and those that do not. */
  readonly committing: readonly string[];
  readonly notCommitting: readonly string[];
}

/**
 * The confounder sentence from what the servers ran with: the differences that act, where the commit
 * ones can act, then those that do not differ and why; null when the variants differ in nothing.
 */
export function parameterEffectSentence(ps: readonly ParameterInEffect[], scope: EffectScope): string | null {
  if (ps.length === 0) return null;
  const differs = ps.filter((p) => p.effect === 'differs');
  const acting = departures(differs).map((g) => `${g.variants.join(', ')} ran ${g.parts.join(', ')}`);
  const commit = differs.filter((p) => COMMIT_ONLY.has(p.parameter)).map((p) => p.parameter);
  const where =
    commit.length > 0 && scope.notCommitting.length > 0 && scope.committing.length > 0
      ? ` (${commit.join(', ')} only in ${scope.committing.join(', ')}: ${scope.notCommitting.join(', ')} ` +
        `(--skip-trx) commits nothing)`
      : '';
  const inert = ps.filter((p) => p.effect !== 'differs').map((p) => `${p.parameter} (${p.why})`);
  const studied =
    scope.studied.length > 0 ? `${scope.studied.join(', ')} (varied on purpose)` : 'the one varied on purpose';
  const head =
    acting.length > 0
      ? `Parameters besides ${studied}, as these servers ran them: ${acting.join('; ')}; a difference ` +
        `between the variants may come from ${acting.length === 1 && !acting[0]!.includes(', ') ? 'it' : 'these'}` +
        where
      : 'The variants’ other parameter differences do not act on these servers';
  return `${head}${inert.length > 0 ? `; not differing here: ${inert.join(', ')}` : ''}.`;
}

/** The caveat table's parameter rows: every value the sentence quotes is one of these cells. */
function parameterEffectRows(ps: readonly ParameterInEffect[]): string[][] {
  return [
    ...departures(ps.filter((p) => p.effect === 'differs')).map((g) => [
      `${g.variants.join(', ')}: parameters as run`,
      g.parts.join(', '),
    ]),
    ...(ps.some((p) => p.effect !== 'differs')
      ? [
          [
            'parameters not differing here',
            ps
              .filter((p) => p.effect !== 'differs')
              .map((p) => `${p.parameter}: ${p.why}`)
              .join('; '),
          ],
        ]
      : []),
  ];
}

/** A caveats table with the parameter rows as the servers ran them in place of the rows as set. */
export function withParameterRows(table: TableBlock | null, ps: readonly ParameterInEffect[]): TableBlock | null {
  const rows = parameterEffectRows(ps);
  if (table === null)
    return rows.length === 0 ? null : { title: 'What else shapes these numbers', head: ['what', 'this run'], rows };
  return { ...table, rows: [...rows, ...table.rows] };
}
