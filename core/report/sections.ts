/**
 * The report's sections and the registry that decides which apply to a run. Each study's analysis
 * (core/report/studies/) returns typed findings (values, intervals and what they cover, verdicts);
 * its renderer turns them into a section (tables, charts, sentences) for the terminal and the HTML
 * page, and `report --json` prints the findings themselves. Which sections apply is decided from the
 * run's spec and rows, not from the study's name.
 *
 * To add a section: write its analysis and renderer in a file of its own and add one entry to
 * SECTIONS (in reading order).
 */
import { clip, errorKind } from '../format';
import type { StepResult } from '../lake/results';
import type { ReportSection } from './model';
import { latencySection } from './latency-section';
import { serverMetricsSection } from './server-metrics-section';
import { analyzeVerdicts, renderVerdicts } from './verdicts-section';
import { NO_AURORA_USAGE } from './aurora-usage';
import { analyzeServerless, renderServerless } from './serverless-section';
import { analyzeStorage, renderStorage } from './storage-section';
import { analyzeBill, renderBill } from './bill-section';
import type { Context } from './context';
import { abSection, analyzeAb } from './studies/ab';
import { analyzePrice, priceSection } from './studies/price';
import { analyzeThreadSweep, threadSweepSection } from './studies/thread-sweep';
import { analyzeForwarding, forwardingSection } from './studies/forwarding';
import { networkSection } from './studies/network';
import { analyzeRate, rateSection } from './studies/rate';

export { makeContext, type Context, type ContextOptions } from './context';

/** One section of the report: what it finds in a run (null: it does not apply) and how that is shown. */
interface SectionEntry<F> {
  readonly id: ReportSection['id'];
  readonly analyze: (ctx: Context) => F | null;
  readonly render: (findings: F, ctx: Context) => ReportSection;
}

/** An entry whose findings are its section (sections not split into analysis and rendering yet). */
function sectionOnly(
  id: ReportSection['id'],
  build: (ctx: Context) => ReportSection | null,
): SectionEntry<ReportSection> {
  return { id, analyze: build, render: (s) => s };
}

const entry = <F>(e: SectionEntry<F>): SectionEntry<unknown> => e as SectionEntry<unknown>;

/** The run's Serverless v2 capacity and volume I/O datapoints (none loaded: a local run's). */
const usageOf = (ctx: Context) => ctx.data.auroraUsage ?? NO_AURORA_USAGE;

// ---------------------------------------------------------------------------------------------
// Failures

/** The failed steps, in the lake's order. */
function analyzeFailures(ctx: Context): readonly StepResult[] | null {
  const failed = ctx.data.steps.filter((s) => s.status === 'failed');
  return failed.length === 0 ? null : failed;
}

function renderFailures(failed: readonly StepResult[]): ReportSection {
  return {
    id: 'failures',
    title: 'Failed steps',
    question: 'What did not run, and why?',
    findings: [
      `${failed.length} step${failed.length === 1 ? '' : 's'} failed; their metrics are left out of means and ` +
        `shown as errors in the charts.`,
    ],
    tables: [
      {
        title: 'Failed steps',
        head: ['variant', 'repeat', 'step', 'clients ok', 'kind', 'error'],
        rows: failed.map((s) => [
          s.variant,
          String(s.repeat),
          s.step_id,
          `${s.ok_clients}/${s.clients}`,
          errorKind(s.error),
          clip(s.error, 90),
        ]),
        numeric: [1],
      },
    ],
    charts: [],
    appendix: true,
  };
}

/** Every section, in reading order. */
const SECTIONS: readonly SectionEntry<unknown>[] = [
  entry({ id: 'ab', analyze: analyzeAb, render: abSection }),
  entry({ id: 'price', analyze: analyzePrice, render: priceSection }),
  entry({ id: 'sweep', analyze: analyzeThreadSweep, render: threadSweepSection }),
  entry({ id: 'forwarding', analyze: analyzeForwarding, render: forwardingSection }),
  entry(sectionOnly('network', networkSection)),
  entry({ id: 'rate', analyze: analyzeRate, render: rateSection }),
  entry(sectionOnly('latency', latencySection)),
  entry(sectionOnly('server-metrics', serverMetricsSection)),
  entry({ id: 'serverless', analyze: (ctx) => analyzeServerless(ctx, usageOf(ctx)), render: renderServerless }),
  entry({ id: 'storage', analyze: (ctx) => analyzeStorage(ctx, usageOf(ctx)), render: renderStorage }),
  entry({ id: 'bill', analyze: (ctx) => analyzeBill(ctx, usageOf(ctx)), render: renderBill }),
  entry({ id: 'failures', analyze: analyzeFailures, render: renderFailures }),
  entry({ id: 'verdicts', analyze: analyzeVerdicts, render: renderVerdicts }),
];

export interface AnalyzedSection {
  readonly id: ReportSection['id'];
  readonly findings: unknown;
  readonly section: ReportSection;
}

/** Every section that applies to the run, with its findings, in reading order. */
export function analyzeSections(ctx: Context): AnalyzedSection[] {
  return SECTIONS.flatMap((e) => {
    const findings = e.analyze(ctx);
    return findings === null ? [] : [{ id: e.id, findings, section: e.render(findings, ctx) }];
  });
}

/** Every section that applies to the run, in reading order. @internal exported for its tests (a test seam) */
export function buildSections(ctx: Context): ReportSection[] {
  return analyzeSections(ctx).map((a) => a.section);
}
