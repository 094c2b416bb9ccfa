/**
 * The run judged against its experiment's history: the verdicts the ComputeVerdicts Task wrote for
 * it (the lake's verdicts table), regressions first. Shown only for a run that has verdicts.
 */
import type { VerdictsRow } from '../lake/rows';
import { clip, num, pct } from '../format';
import type { ReportSection } from './model';
import type { Context } from './context';

const ORDER: Readonly<Record<string, number>> = {
  regressed: 0,
  improved: 1,
  'within-noise': 2,
  unknown: 3,
  'not-judged': 4,
};
const TEXT: Readonly<Record<string, string>> = {
  regressed: 'REGRESSED',
  improved: 'improved',
  'within-noise': 'within the noise',
  unknown: 'noise unknown',
  'not-judged': 'not judged',
};

const stepLabel = (v: VerdictsRow): string =>
  `${v.workload} ` +
  `t${v.threads}${v.rate > 0 ? ` @${v.rate}/s` : ''}${v.target !== 'writer' ? ` → ${v.target}` : ''} ` +
  `[${v.variant}]`;

/** "32 step metrics (TPS, QPS, p95 ms and errors/s of each of 8 steps)": what the verdicts count. */
function countedText(verdicts: readonly VerdictsRow[]): string {
  const metrics = [...new Set(verdicts.map((v) => v.metric_label))];
  const steps = new Set(verdicts.map(stepLabel)).size;
  const listed = metrics.length > 1 ? `${metrics.slice(0, -1).join(', ')} and ${metrics.at(-1)!}` : metrics[0]!;
  return (
    `${verdicts.length} step metric${verdicts.length === 1 ? '' : 's'} ` +
    `(${listed} of ${steps === 1 ? 'the one step' : `each of ${steps} steps`}, each judged against its own history)`
  );
}

/** What the verdicts section shows: the run's verdicts, regressions first, and how many of each kind. */
export interface VerdictsFindings {
  readonly verdicts: readonly VerdictsRow[];
  readonly counts: Readonly<Record<string, number>>;
  readonly steps: number;
}

export function analyzeVerdicts(ctx: Context): VerdictsFindings | null {
  const verdicts = [...(ctx.data.verdicts ?? [])].sort(
    (a, b) => (ORDER[a.verdict] ?? 9) - (ORDER[b.verdict] ?? 9) || stepLabel(a).localeCompare(stepLabel(b)),
  );
  if (verdicts.length === 0) return null;
  const counts = Object.fromEntries(Object.keys(ORDER).map((k) => [k, verdicts.filter((v) => v.verdict === k).length]));
  return { verdicts, counts, steps: new Set(verdicts.map(stepLabel)).size };
}

export function renderVerdicts(f: VerdictsFindings): ReportSection {
  const { verdicts, steps } = f;
  const count = (verdict: string) => f.counts[verdict] ?? 0;
  // What "step metrics" counts: one verdict per metric of each step, said once, not a bare number.
  const counted = countedText(verdicts);
  // Nothing judged yet (too few earlier runs): one line, not a table of "noise unknown" rows.
  if (count('regressed') + count('improved') + count('within-noise') === 0)
    return {
      id: 'verdicts',
      title: "Verdicts against the experiment's history",
      question: 'Did this run change anything beyond the noise of the earlier runs of its experiment?',
      findings: [],
      tables: [],
      charts: [],
      // Which metrics would be judged is left unsaid: a study's report need not show them all (S4 shows no TPS).
      leftOut:
        // A verdict is per workload, threads, rate and variant (repeats at one rate together): not the step results.
        `nothing to judge yet: no step of this run (${steps} distinct step${steps === 1 ? '' : 's'}: a workload at ` +
        `one thread count and rate, on one variant) has earlier runs of ` +
        `this experiment with a measured noise to be judged against; run the experiment again to build that ` +
        `history.`,
    };
  const findings = [
    `${count('regressed')} regressed, ${count('improved')} improved, ${count('within-noise')} within the ` +
      `noise, ${count('unknown')} with the noise unknown, ${count('not-judged')} not judged ` +
      `(of ${counted}).`,
    ...verdicts
      .filter((v) => v.verdict === 'regressed' || v.verdict === 'improved')
      .map(
        (v) =>
          `${TEXT[v.verdict]}: ${stepLabel(v)} ${v.metric_label} ${num(v.value, 2)} ` +
          `against ${num(v.baseline_mean, 2)} (${v.ratio === null ? '-' : pct(v.ratio, 1)} of the baseline ` +
          `of ${v.baseline_runs} runs)`,
      ),
  ];
  return {
    id: 'verdicts',
    title: "Verdicts against the experiment's history",
    question: 'Did this run change anything beyond the noise of the earlier runs of its experiment?',
    findings,
    tables: [
      {
        title: `Each step and metric against the last stable segment (${verdicts[0]!.experiment})`,
        head: ['step', 'metric', 'verdict', 'value', 'baseline', 'runs', 'value/baseline', 'why'],
        rows: verdicts.map((v) => [
          stepLabel(v),
          v.metric_label,
          TEXT[v.verdict] ?? v.verdict,
          num(v.value, 2),
          num(v.baseline_mean, 2),
          String(v.baseline_runs),
          v.ratio === null ? '-' : pct(v.ratio, 1),
          clip(v.reason, 120),
        ]),
        numeric: [3, 4, 5, 6],
      },
    ],
    charts: [],
  };
}

/** The section at once. @internal exported for its tests (a test seam) */
export function verdictsSection(ctx: Context): ReportSection | null {
  const findings = analyzeVerdicts(ctx);
  return findings === null ? null : renderVerdicts(findings);
}
