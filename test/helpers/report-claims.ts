/**
 * A mechanical reader of a report: does every sentence say what the tables beside it show? For
 * each sentence of the sections asked about it checks that
 *  - every number is a displayed table cell, or follows from two displayed cells of one table (a
 *    ratio, a difference, a distance from 100%) at the displayed rounding;
 *  - every interval written "x% (a%–b%)" is one a table displays, so a spread of point estimates
 *    cannot pass for an interval;
 *  - every direction word agrees with the interval beside it: "within ... noise" only when it
 *    holds 100%, "beyond the noise", "better" or "worse" only when it does not; "ranks above" only
 *    with a ratio of at least 100%;
 *  - a ratio that a table shows with an interval is not quoted in a sentence without that
 *    interval or a verdict.
 * The renderers are held to the same text: the HTML page holds every sentence and cell, and
 * `--json` holds a value behind every ratio a table displays.
 */
import type { Report, ReportSection, TableBlock } from '../../core/report/model';

export interface Contradiction {
  readonly section: string;
  readonly sentence: string;
  readonly problem: string;
}

/** A number as displayed: its value and the half-width of its rounding. */
interface Shown {
  readonly value: number;
  readonly half: number;
}

const NUMBER = /\d[\d,]*(?:\.\d+)?/g;

function shown(text: string): Shown {
  const decimals = text.includes('.') ? text.length - text.indexOf('.') - 1 : 0;
  return { value: Number(text.replace(/,/g, '')), half: 0.5 * 10 ** -decimals };
}

/** Every number in a cell, embedded ones included ("t64" shows 64 threads). */
function cellNumbers(cell: string): Shown[] {
  return [...cell.matchAll(NUMBER)].map((m) => shown(m[0]));
}

/** "x% (a%–b%)" or "x (a–b)": an estimate and its interval; an end past the printed range reads "<10%" or ">1,000%". */
const INTERVAL = /(\d[\d,]*(?:\.\d+)?)(%?) \((?:95% CI )?<?(\d[\d,]*(?:\.\d+)?)%?–>?(\d[\d,]*(?:\.\d+)?)(%?)\)/g;

interface ShownInterval {
  readonly estimate: string;
  readonly low: string;
  readonly high: string;
}

function intervalsIn(text: string): (ShownInterval & { readonly at: number; readonly end: number })[] {
  return [...text.matchAll(INTERVAL)].map((m) => ({
    estimate: m[1]!,
    low: m[3]!,
    high: m[4]!,
    at: m.index,
    end: m.index + m[0].length,
  }));
}

/** Numbers in a sentence, not those inside names ("r6g", "t32", "p95", "db.r5.2xlarge", "2xlarge"). */
function sentenceNumbers(s: string): { text: string; at: number }[] {
  return [...s.matchAll(NUMBER)]
    .filter((m) => {
      const before = s[m.index - 1] ?? ' ';
      const after = s[m.index + m[0].length] ?? ' ';
      return !/[A-Za-z0-9._-]/.test(before) && !/[A-Za-z]/.test(after);
    })
    .map((m) => ({ text: m[0].replace(/\.$/, ''), at: m.index }));
}

/** Whether [lo, hi] meets x's rounding interval (a hair wider: 71.445 is shown as 71.45). */
const overlaps = (lo: number, hi: number, x: Shown): boolean => {
  const eps = 1e-9 * Math.max(1, Math.abs(x.value));
  return x.value - x.half - eps <= hi && lo <= x.value + x.half + eps;
};

/** The tables a reader sees beside the sentences: the answer's and every section's. */
function displayedTables(report: Report): TableBlock[] {
  const fromSections = report.sections.flatMap((s) => [...s.tables, ...(s.answer?.tables ?? [])]);
  return [...(report.answer?.tables ?? []), ...fromSections];
}

/** Constants of the method a sentence may name without a table: the level, the 100% line, the rules' thresholds. */
const METHOD_CONSTANTS = new Set([95, 100, 90, 80, 0.1, 2]);

/** Can `x` be read off one table's numbers: a cell, 100 - a cell, a cell - 100, or a ratio or difference of two? */
function follows(x: Shown, tables: readonly Shown[][]): boolean {
  for (const nums of tables) {
    for (const a of nums) {
      if (overlaps(a.value - a.half, a.value + a.half, x)) return true;
      if (overlaps(a.value - a.half - 100, a.value + a.half - 100, x)) return true;
      if (overlaps(100 - a.value - a.half, 100 - a.value + a.half, x)) return true;
    }
    for (const a of nums)
      for (const b of nums) {
        if (a === b || !(b.value - b.half > 0)) continue;
        const lo = (100 * (a.value - a.half)) / (b.value + b.half);
        const hi = (100 * (a.value + a.half)) / (b.value - b.half);
        if (overlaps(lo, hi, x) || overlaps(lo - 100, hi - 100, x)) return true;
      }
  }
  return false;
}

/** Text from `at` to the end of its clause (the next ';', figure or sentence end): where its verdict is said. */
function clauseAfter(s: string, at: number): string {
  const rest = s.slice(at);
  // Its verdict comes before the next figure.
  const next = rest.search(/\d/) < 0 ? rest.length : rest.search(/\d/);
  const end = rest.search(/;|\.(\s|$)/);
  return rest.slice(0, Math.min(next, end < 0 ? rest.length : end));
}

/** The clause holding `at`: from the ';' before it to the ';' after it (or the sentence's ends). */
function clauseAround(s: string, at: number): string {
  const start = s.lastIndexOf(';', at) + 1;
  const end = s.indexOf(';', at);
  return s.slice(start, end < 0 ? s.length : end);
}

const WITHIN = /within (the |this run's |the run-to-run )?noise/;
const BEYOND = /beyond the (run-to-run )?noise|\b(better|worse|faster|slower)\b|\b(higher|lower) in this run\b/;

export interface CheckOptions {
  /** Section ids whose sentences are checked (default: all). */
  readonly sections?: readonly ReportSection['id'][];
}

export function checkReport(report: Report, options: CheckOptions = {}): Contradiction[] {
  const out: Contradiction[] = [];
  const tables = displayedTables(report);
  const tableNumbers = tables.map((t) => [t.title, ...t.head, ...t.rows.flat()].flatMap(cellNumbers));
  const cellIntervals = tables.flatMap((t) => t.rows.flat().flatMap(intervalsIn));
  const intervalShown = (i: ShownInterval): boolean =>
    cellIntervals.some((c) => c.estimate === i.estimate && c.low === i.low && c.high === i.high);
  const sections = report.sections.filter((s) => options.sections === undefined || options.sections.includes(s.id));
  for (const section of sections) {
    const sentences = [...section.findings, ...(section.answer?.lines ?? []), ...(section.answer?.more ?? [])];
    for (const sentence of sentences) {
      const flag = (problem: string): void => void out.push({ section: section.id, sentence, problem });
      for (const n of sentenceNumbers(sentence)) {
        const x = shown(n.text);
        if (METHOD_CONSTANTS.has(x.value) || follows(x, tableNumbers)) continue;
        flag(`${n.text} is no displayed cell and follows from none`);
      }
      for (const i of intervalsIn(sentence)) {
        if (!intervalShown(i))
          flag(`${i.estimate} (${i.low}–${i.high}) is written as an interval but no table shows that interval`);
        const clause = clauseAfter(sentence, i.end);
        const holds100 = shown(i.low).value <= 100 && 100 <= shown(i.high).value;
        if (WITHIN.test(clause) && !holds100) flag(`"within the noise" beside ${i.low}–${i.high}, which excludes 100%`);
        if (BEYOND.test(clause) && !WITHIN.test(clause) && holds100)
          flag(`"${BEYOND.exec(clause)![0]}" beside ${i.low}–${i.high}, which holds 100%`);
      }
      // A bare range "a%–b%" not after an estimate is a spread written as an interval.
      for (const m of sentence.matchAll(/(\d[\d,]*(?:\.\d+)?)%–(\d[\d,]*(?:\.\d+)?)%/g)) {
        const inInterval = intervalsIn(sentence).some((i) => i.at < m.index && m.index < i.end);
        if (!inInterval) flag(`${m[0]} is a range without an estimate, written like an interval`);
      }
      for (const m of sentence.matchAll(/ranks above [^;]*?ratio (\d[\d,]*(?:\.\d+)?)%/g))
        if (shown(m[1]!).value + shown(m[1]!).half < 100) flag(`"ranks above" with a ratio of ${m[1]}%`);
      // A ratio the tables show with its interval, quoted bare (no interval, no verdict in its clause).
      // A sentence listing bare ratios and then a verdict on every one of them ("none differs ...",
      // "x worse, the others within the noise") gives each its verdict.
      const wholeListVerdict = /none differs|the others within/.test(sentence);
      for (const n of wholeListVerdict ? [] : sentenceNumbers(sentence)) {
        const text = `${n.text}%`;
        if (sentence.slice(n.at, n.at + text.length) !== text) continue;
        // The 100% line an interval is read against ("every interval includes 100%") is no quoted ratio.
        if (text === '100%' && /(includes?|excludes?|above|below|clear of) $/.test(sentence.slice(0, n.at))) continue;
        const clause = clauseAround(sentence, n.at);
        const withInterval = intervalsIn(sentence).some((i) => i.at === n.at);
        if (
          withInterval ||
          WITHIN.test(clause) ||
          BEYOND.test(clause) ||
          /not (measured|judged)|resolve|point estimate/.test(clause)
        )
          continue;
        const asEstimate = cellIntervals.some((c) => c.estimate === n.text);
        const elsewhere = tableNumbers.flat().filter((c) => c.value === shown(n.text).value).length;
        if (asEstimate && elsewhere <= cellIntervals.filter((c) => c.estimate === n.text).length)
          flag(`${text} is a ratio the tables show with an interval, quoted without it or a verdict`);
      }
    }
  }
  return out;
}

const unescape = (html: string): string =>
  html
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** The HTML page shows the same sentences and cells as the terminal, word for word. */
export function checkHtml(report: Report, html: string, options: CheckOptions = {}): Contradiction[] {
  const page = unescape(html);
  const out: Contradiction[] = [];
  for (const sentence of [...(report.answer?.lines ?? []), ...(report.answer?.more ?? [])])
    if (!page.includes(sentence)) out.push({ section: 'answer', sentence, problem: 'not on the HTML page' });
  for (const section of report.sections.filter((s) => options.sections?.includes(s.id) ?? true)) {
    // Every sentence the terminal prints is on the page: the answer part's, and the evidence's findings
    // where the section has evidence to show (core/report/report.ts hasEvidence).
    const evidence =
      section.leftOut === undefined &&
      (section.tables.length > 0 || section.charts.length > 0 || section.answer === undefined);
    for (const sentence of [...(evidence ? section.findings : []), ...(section.answer?.lines ?? [])])
      if (!page.includes(sentence)) out.push({ section: section.id, sentence, problem: 'not on the HTML page' });
    for (const t of [...section.tables, ...(section.answer?.tables ?? [])])
      for (const cell of t.rows.flat())
        if (cell !== '' && !page.includes(cell))
          out.push({ section: section.id, sentence: cell, problem: `cell of "${t.title}" not on the HTML page` });
  }
  return out;
}

/** Every number in a JSON document. */
function jsonNumbers(v: unknown, acc: number[] = []): number[] {
  if (typeof v === 'number') acc.push(v);
  else if (Array.isArray(v)) for (const x of v) jsonNumbers(x, acc);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) jsonNumbers(x, acc);
  return acc;
}

/** Every interval a section's tables display has its estimate and bounds among the section's `--json` findings. */
export function checkJson(report: Report, json: string, options: CheckOptions = {}): Contradiction[] {
  const findings = (JSON.parse(json) as { findings?: Record<string, unknown> }).findings ?? {};
  const out: Contradiction[] = [];
  for (const section of report.sections.filter((s) => options.sections?.includes(s.id) ?? true)) {
    const values = jsonNumbers(findings[section.id]);
    const typed = (text: string, percent: boolean): boolean => {
      const x = shown(text);
      return values.some((v) => overlaps(percent ? v * 100 : v, percent ? v * 100 : v, x));
    };
    for (const t of [...section.tables, ...(section.answer?.tables ?? [])])
      for (const cell of t.rows.flat())
        for (const m of cell.matchAll(INTERVAL)) {
          const percent = m[2] === '%';
          // A range cut at 0 shows 0 for a negative low bound.
          // An end printed "<10%" or ">1,000%" is a display bound: the finding holds the end past it.
          const clippedLow = m[0].includes('(<') || m[0].includes('CI <');
          const clippedHigh = m[0].includes('–>');
          const parts = [
            m[1]!,
            ...(m[3] === '0' || /^0\.0+$/.test(m[3]!) || clippedLow ? [] : [m[3]!]),
            ...(clippedHigh ? [] : [m[4]!]),
          ];
          for (const p of parts)
            if (!typed(p, percent))
              out.push({
                section: section.id,
                sentence: cell,
                problem: `${p} of "${t.title}" is in no --json finding`,
              });
        }
  }
  return out;
}
