/**
 * A round judged against history: every series a question covers, tested against its stable runs.
 * A series without a stable history cannot be judged early, so it keeps the run going to the maximum.
 */
import type { NamedHistoryQuestion } from '../../experiment/rounds';
import type { StepRow } from '../../lake/rows';
import { historyTest } from '../../rounds/history-test';
import type { HistorySeriesState, SeriesLevel } from './round-types';

const keyOf = (r: Pick<StepRow, 'variant' | 'workload' | 'threads' | 'rate' | 'target'>): string =>
  [r.variant, r.workload, r.threads, r.rate, r.target].join('\u0000');

/** As the history labels a step, such as "read-write t16 [r7g-large]". */
const labelOf = (r: Pick<StepRow, 'variant' | 'workload' | 'threads' | 'rate' | 'target'>): string =>
  `${r.workload} t${r.threads}${r.rate > 0 ? ` @${r.rate}/s` : ''}${r.target !== 'writer' ? ` → ${r.target}` : ''} ` +
  `[${r.variant}]`;

/** A cell step's value as step_summary totals it: throughput summed, latency the worst. */
function stepValue(clients: readonly StepRow[], metric: SeriesLevel['metric']): number | null {
  // As the history judges, a failed or client-bound step's numbers do not count.
  if (clients.some((r) => r.status !== 'ok' || r.client_saturated)) return null;
  const vs = clients.map((r) => (metric === 'tps' ? r.tps : metric === 'qps' ? r.qps : r.lat_pct_ms));
  if (vs.some((v) => typeof v !== 'number' || !(v > 0))) return null;
  const xs = vs as number[];
  return metric === 'latency' ? Math.max(...xs) : xs.reduce((a, b) => a + b, 0);
}

/** Each round's mean over its cell steps. Rounds without one are left out. */
function roundLogs(rows: readonly StepRow[], metric: SeriesLevel['metric'], rounds: number): number[] {
  const out: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const steps = new Map<string, StepRow[]>();
    for (const r of rows.filter((x) => x.repeat === round))
      steps.set(`${r.cell_id}\u0000${r.step_id}`, [...(steps.get(`${r.cell_id}\u0000${r.step_id}`) ?? []), r]);
    const vs = [...steps.values()].map((c) => stepValue(c, metric)).filter((v): v is number => v !== null);
    if (vs.length > 0) out.push(Math.log(vs.reduce((a, b) => a + b, 0) / vs.length));
  }
  return out;
}

export function historyRound(
  questions: readonly NamedHistoryQuestion[],
  rows: readonly StepRow[],
  levels: readonly SeriesLevel[],
  round: number,
  maxRounds: number,
): HistorySeriesState[] {
  const levelOf = new Map(levels.map((l) => [`${keyOf(l)}\u0000${l.metric}`, l]));
  return questions.flatMap((q) => {
    const bySeries = new Map<string, StepRow[]>();
    for (const r of rows) {
      if (q.variant !== undefined && r.variant !== q.variant) continue;
      if (q.workload !== undefined && r.workload !== q.workload) continue;
      bySeries.set(keyOf(r), [...(bySeries.get(keyOf(r)) ?? []), r]);
    }
    return [...bySeries.values()].map((series): HistorySeriesState => {
      const label = labelOf(series[0]!);
      const logs = roundLogs(series, q.metric, round);
      const level = levelOf.get(`${keyOf(series[0]!)}\u0000${q.metric}`);
      const { variant, workload, threads, rate, target } = series[0]!;
      const key = { variant, workload, threads, rate, target, metric: q.metric };
      const base = { question: q.id, series: label, key, rounds: logs.length };
      if (level?.level === undefined)
        return { ...base, ratio: Number.NaN, z: Number.NaN, call: 'no-history', why: level?.why ?? 'no earlier run' };
      if (logs.length === 0)
        return { ...base, ratio: Number.NaN, z: Number.NaN, call: 'continue', why: 'no value yet' };
      const look = historyTest(logs, level.level, { maxRounds });
      return { ...base, ratio: look.ratio, z: look.z, call: look.call };
    });
  });
}
