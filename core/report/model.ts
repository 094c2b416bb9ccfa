/** What a report is made of, independent of where it is shown (terminal or HTML). */
import type { EChartsOption } from 'echarts';

export interface TableBlock {
  readonly title: string;
  readonly head: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Right-align these column indexes (numbers). */
  readonly numeric?: readonly number[];
  /** Row indexes to emphasise (ratios, totals). */
  readonly emphasis?: readonly number[];
  readonly notes?: readonly string[];
  /** Detail the page folds away (HTML: a collapsed block under its title); the terminal prints it. */
  readonly folded?: boolean;
}

export interface ChartBlock {
  readonly id: string;
  readonly title: string;
  readonly option: EChartsOption;
  readonly width?: number;
  readonly height?: number;
}

export interface ReportSection {
  readonly id:
    | 'ab'
    | 'price'
    | 'sweep'
    | 'forwarding'
    | 'network'
    | 'rate'
    | 'latency'
    | 'server-metrics'
    | 'failures'
    | 'compare'
    | 'latest'
    | 'change-points'
    | 'trends'
    | 'verdicts'
    // core/report/serverless-section.ts, storage-section.ts, bill-section.ts
    | 'serverless'
    | 'storage'
    | 'bill';
  readonly title: string;
  /** What the section answers, in one line. */
  readonly question: string;
  /** Plain-language findings, the first thing a reader sees. */
  readonly findings: readonly string[];
  readonly tables: readonly TableBlock[];
  readonly charts: readonly ChartBlock[];
  /**
   * This section's part of the study's answer, in the shape its author asked the question: shown
   * first, before every section's evidence (its tables and charts are not repeated below).
   */
  readonly answer?: AnswerPart;
  /** Error details and the like: shown in the appendix (collapsed in HTML), not among the evidence. */
  readonly appendix?: boolean;
  /**
   * Why the section shows nothing in this run (a first run has no history, every metric read 0):
   * the report prints this one line instead of an empty heading.
   */
  readonly leftOut?: string;
}

export interface AnswerPart {
  readonly lines: readonly string[];
  /** Sentences past the opening few: shown after them (collapsed in HTML). */
  readonly more?: readonly string[];
  readonly tables: readonly TableBlock[];
  readonly charts: readonly ChartBlock[];
}

export interface Report {
  readonly title: string;
  /** Shown above everything (e.g. "a local rehearsal: this machine's numbers, not AWS's"). */
  readonly banner?: string;
  /** Warnings that change how every figure reads (other runs shared the host): shown in the banner too. */
  readonly warnings?: readonly string[];
  /** Each section's typed findings by section id, for `report --json`. */
  readonly findings?: Readonly<Record<string, unknown>>;
  readonly meta: readonly [string, string][];
  readonly notes: readonly string[];
  /** The study's answer first: the sections' answer parts in section order; null when none applies. */
  readonly answer?: AnswerPart | null;
  readonly sections: readonly ReportSection[];
}
