/**
 * The order the variants ran in, from the lake's step start and end times. Locally the variants
 * run one after another on one machine: whatever drifts over the run (the machine's other load, its
 * caches, its clock speed) moves every later variant the same way, so a trend of a score with run
 * order cannot be told from a difference between the variants. Only variants run interleaved, in a
 * new order each repeat, would tell the two apart.
 */

interface TimedRow {
  readonly variant: string;
  readonly started_at: string;
  readonly ended_at: string;
}

interface VariantWindow {
  readonly variant: string;
  /** 1 for the variant that started first. */
  readonly order: number;
  readonly start: string;
  readonly end: string;
}

export interface RunOrder {
  readonly windows: readonly VariantWindow[];
  /** Some variant started before another had ended: no single order (repeats interleaved). */
  readonly interleaved: boolean;
}

/** Each variant's first start and last end, in start order; null when the rows carry no times. */
export function runOrderOf(rows: readonly TimedRow[]): RunOrder | null {
  const by = new Map<string, { start: string; end: string }>();
  for (const r of rows) {
    if (!r.started_at || !r.ended_at) return null;
    const w = by.get(r.variant);
    by.set(r.variant, {
      start: w === undefined || r.started_at < w.start ? r.started_at : w.start,
      end: w === undefined || r.ended_at > w.end ? r.ended_at : w.end,
    });
  }
  if (by.size < 2) return null;
  const sorted = [...by.entries()].sort((a, b) => (a[1].start < b[1].start ? -1 : 1));
  const windows = sorted.map(([variant, w], i) => ({ variant, order: i + 1, ...w }));
  const interleaved = windows.some((w, i) => i > 0 && w.start < windows[i - 1]!.end);
  return { windows, interleaved };
}

/** "12:51" (UTC) from an ISO time. */
export const clockText = (iso: string, seconds = false): string => iso.slice(11, seconds ? 19 : 16);

const ordinalText = (n: number): string => {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${teen ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;
};

/** The score table's cell: "1st, 12:51–12:54". */
export function windowCell(o: RunOrder, variant: string): string {
  const w = o.windows.find((x) => x.variant === variant);
  if (w === undefined) return '-';
  return `${o.interleaved ? '' : `${ordinalText(w.order)}, `}${clockText(w.start)}–${clockText(w.end)}`;
}

export interface RunTrend {
  /** falls: every variant of the first half of the run order scores above every one of the second half. */
  readonly direction: 'falls' | 'rises' | 'none';
  readonly early: readonly number[];
  readonly late: readonly number[];
}

/** Scores against run order: the first half's range against the second half's. */
export function runTrend(o: RunOrder, scores: readonly { variant: string; score: number }[]): RunTrend | null {
  if (o.interleaved) return null;
  const ordered = o.windows.flatMap((w) => scores.filter((s) => s.variant === w.variant).map((s) => s.score));
  if (ordered.length < 4) return null;
  const half = Math.floor(ordered.length / 2);
  const early = ordered.slice(0, half);
  const late = ordered.slice(ordered.length - half);
  const direction =
    Math.min(...early) > Math.max(...late) ? 'falls' : Math.max(...early) < Math.min(...late) ? 'rises' : 'none';
  return { direction, early, late };
}
