/**
 * A series the rounds judged against its history gets that call as its verdict.
 * The run line said quiet or moved after each round, so the verdicts table and the report must agree.
 */
import type { VerdictsRow } from '../../lake/rows';
import type { RoundsJudged } from './judge-round';
import type { HistorySeriesState } from './round-types';

type Key = NonNullable<HistorySeriesState['key']>;

const keyText = (k: Omit<Key, 'metric'> & { readonly metric: string }): string =>
  [k.variant, k.workload, k.threads, k.rate, k.target, k.metric].join('\u0000');

/** The verdict a round call gives: lower latency and higher throughput are better. */
function verdictOf(s: HistorySeriesState, metric: Key['metric']): VerdictsRow['verdict'] | undefined {
  if (s.call === 'quiet') return 'within-noise';
  if (s.call === 'continue') return 'unknown';
  if (s.call !== 'moved') return undefined;
  return s.ratio > 1 === (metric !== 'latency') ? 'improved' : 'regressed';
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

function reasonOf(s: HistorySeriesState): string {
  const rounds = `${s.rounds} round${s.rounds === 1 ? '' : 's'}`;
  const what = s.call === 'continue' ? 'still unclear at the last round' : s.call === 'quiet' ? 'quiet' : 'moved';
  const against = `${pct(s.ratio)} of its level, z ${s.z.toFixed(2)}`;
  return `judged after ${rounds} against its stable history: ${against} (${what})`;
}

export function withRoundCalls(verdicts: readonly VerdictsRow[], judged: RoundsJudged | undefined): VerdictsRow[] {
  const calls = new Map<string, HistorySeriesState>();
  for (const s of judged?.history ?? []) if (s.key !== undefined) calls.set(keyText(s.key), s);
  return verdicts.map((v) => {
    const s = calls.get(keyText(v));
    const verdict = s === undefined ? undefined : verdictOf(s, s.key!.metric);
    if (s === undefined || verdict === undefined) return v;
    // The history's prediction interval is another method's. It is left out so no figure disagrees with the call.
    return { ...v, verdict, ratio: s.ratio, interval_low: null, interval_high: null, reason: reasonOf(s) };
  });
}
