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
  /** Why it does not act: "no such variable here, AWS only", "O_DIRECT on every server". */
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
      return { parameter: d.parameter, effect: 'same', values, why: `${ran[0]} on every server` };
    return { parameter: d.parameter, effect: 'differs', values, why: null };
  });
}

/** A value the lake does not hold: the variant left it unset and the server's value was not recorded. */
const valueText = (x: string | null): string => (x === null ? 'unset, not recorded' : x);

/**
 * The acting differences grouped by the variants that depart from the rest, as local-caveats.ts
 * groups them: per group, "parameter value (others value)"; the rest is the largest group sharing a value.
 */
function departures(ps: readonly ParameterInEffect[]): { variants: string[]; parts: string[] }[] {
  const groups = new Map<string, { variants: string[]; parts: string[] }>();
  for (const d of ps) {
    const values = uniqueInOrder(d.values.map((x) => valueText(x.value)));
    const holders = (val: string): string[] => d.values.filter((x) => valueText(x.value) === val).map((x) => x.variant);
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
 * The confounder sentence from what the servers ran with: the differences that act, then those that
 * do not and why; null when the variants differ in nothing.
 */
export function parameterEffectSentence(ps: readonly ParameterInEffect[]): string | null {
  if (ps.length === 0) return null;
  const acting = departures(ps.filter((p) => p.effect === 'differs')).map(
    (g) => `${g.variants.join(', ')} ran ${g.parts.join(', ')}`,
  );
  const inert = ps.filter((p) => p.effect !== 'differs').map((p) => `${p.parameter} (${p.why})`);
  const head =
    acting.length > 0
      ? `Parameters besides the one studied, as these servers ran them: ${acting.join('; ')}; a difference ` +
        `between the variants may come from ${acting.length === 1 && !acting[0]!.includes(', ') ? 'it' : 'these'}`
      : 'The variants’ other parameter differences do not act on these servers';
  return `${head}${inert.length > 0 ? `; not acting here: ${inert.join(', ')}` : ''}.`;
}

/** The caveat table's parameter rows: every value the sentence quotes is one of these cells. */
export function parameterEffectRows(ps: readonly ParameterInEffect[]): string[][] {
  return [
    ...departures(ps.filter((p) => p.effect === 'differs')).map((g) => [
      `${g.variants.join(', ')}: parameters as run`,
      g.parts.join(', '),
    ]),
    ...(ps.some((p) => p.effect !== 'differs')
      ? [
          [
            'parameters not acting here',
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
