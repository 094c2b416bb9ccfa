/**
 * `aurora-bench report RUN`: the report that answers the study's question, printed as terminal
 * tables, and with --html FILE a self-contained HTML page (inline CSS, charts as server-rendered
 * SVG, no script and no network needed to view it).
 */
import { writeUserFile } from '../user-file';
import { skippedFilesText, withLake, type LakeReader } from '../lake/duckdb';
import { chartPointCount, renderChartSvg } from './charts';
import { loadPrices, type PriceTable } from '../plan/cost';
import { textTable } from '../format';
import { loadRun, type RunData } from './load';
import { maxRepeats, ROUNDS_NOTE_PATH } from '../experiment/rounds';
import type { AnswerPart, ChartBlock, Report, ReportSection, TableBlock } from './model';
import { analyzeSections, makeContext, type ContextOptions } from './sections';
import { notesOnce } from './notes-once';
import { LOCAL_EMULATION_WARNING, type ForwardingFindings } from './studies/forwarding';
import { priceRegionDeviation, type PriceFindings } from './studies/price';

interface PlanNoteRow {
  readonly level?: string;
  readonly path?: string;
  readonly message?: string;
}

function parsedNotes(data: RunData): PlanNoteRow[] {
  try {
    return JSON.parse(data.run.notes || '[]') as PlanNoteRow[];
  } catch {
    return [];
  }
}

/** Notes of path "host" say other runs shared the machine: every figure reads differently, so the banner has them. */
const isHostNote = (n: PlanNoteRow): boolean => n.path === 'host';

/** The rounds FinishRun recorded (a note of path "rounds"): how many ran and why they stopped. */
function roundsRan(data: RunData): string | null {
  const note = parsedNotes(data).find((n) => n.path === ROUNDS_NOTE_PATH);
  return note?.message ?? null;
}

function planNotes(data: RunData): string[] {
  return parsedNotes(data)
    .filter((n) => !isHostNote(n) && n.path !== ROUNDS_NOTE_PATH)
    .map((n) => `[${n.level ?? 'info'}] ${n.path ? `${n.path}: ` : ''}${n.message ?? ''}`);
}

/** The host warnings, as the banner shows them: first, since every figure of the run includes that load. */
function hostWarnings(data: RunData): string[] {
  // The note was written while the run went on, from when it registered on the host; the report's
  // duration is the run's own start to end, so the banner says that one (the Appendix shows both ends).
  const { started_at: started, ended_at: ended } = data.run;
  const runS = ended ? Math.round((Date.parse(ended) - Date.parse(started)) / 1000) : NaN;
  return parsedNotes(data)
    .filter(isHostNote)
    .map((n) => {
      const message = Number.isFinite(runS)
        ? (n.message ?? '').replace(/of this run's \d+ s/g, `of this run's ${runS} s`)
        : (n.message ?? '');
      return `Co-tenant load: ${message}.`;
    });
}

/** "3 failed, 4 overloaded, 2 skipped": the steps that are not plain ok, by status. */
function stepCounts(data: RunData): string {
  const count = (status: string): number => data.steps.filter((s) => s.status === status).length;
  const parts = [`${count('failed')} failed`];
  // An overload within the warm-up measured nothing: counted apart from those that measured a rate.
  const warm = data.steps.filter((s) => s.status === 'overloaded' && s.tps === null).length;
  const measured = count('overloaded') - warm;
  if (measured > 0) parts.push(`${measured} overloaded (sysbench's queue filled; measured before it did)`);
  if (warm > 0) parts.push(`${warm} overloaded in warm-up (not measured)`);
  if (count('skipped') > 0) parts.push(`${count('skipped')} skipped`);
  return parts.join(', ');
}

/** A scaled-down run's experiment text describes the full design, not what ran. */
const AS_DESIGNED =
  'as designed for AWS, at full scale (this run: --scale small, on the engine its versions line names; ' +
  'see the notes): ';
/**
 * Older experiment texts, as a stored run holds them, in today's words: "Findings detected" is what the
 * full-scale study looks for, not this run's findings; S2 does not compare what its author compared.
 */
const OLDER_TEXTS: readonly (readonly [string, string])[] = [
  ['Findings detected: ', 'What the full-scale study looks for (this run could not reach it): '],
  [
    'S2 as its author framed it: the same thread sweep across offerings, scored out of 100 per offering.',
    "S2's thread sweep and its 100-point score per offering, over AWS offerings only: the study's providers " +
      'and its dedicated vs general-purpose tiers are not compared here, nor Percona Server (self-managed ' +
      'MariaDB with and without its thread pool stands in).',
  ],
];
const current = (description: string): string =>
  OLDER_TEXTS.reduce((d, [old, now]) => d.replace(old, now), description);
const asDesigned = (description: string): string => AS_DESIGNED + current(description);

export function buildReport(data: RunData, prices: PriceTable, options: ContextOptions = {}): Report {
  const ctx = makeContext(data, prices, options);
  const r = data.run;
  const meta: [string, string][] = [
    ['run', r.run_id],
    [
      'experiment',
      r.spec_name +
        (data.spec?.description
          ? ` — ${/-small$/.test(r.spec_name) ? asDesigned(data.spec.description) : current(data.spec.description)}`
          : ''),
    ],
    [
      'backend',
      r.backend === 'aws'
        ? `AWS ${r.region}`
        : r.backend === 'import'
          ? 'import (hand-run sysbench logs, aurora-bench import)'
          : r.backend === 'aws-rehearsal'
            ? `AWS rehearsal ${r.region} (run --aws-rehearsal: moto and stand-in servers on this machine, not Aurora)`
            : 'local (MariaDB on this machine)',
    ],
    ['status', r.status + (r.error ? `: ${r.error}` : '')],
    ['started', `${r.started_at}${r.ended_at ? ` — ended ${r.ended_at}` : ''}`],
    [
      'versions',
      [r.server_version, r.sysbench_version ? `sysbench ${r.sysbench_version}` : ''].filter(Boolean).join(', ') || '-',
    ],
    [
      'variants',
      ctx.variants
        .map(
          (v) =>
            // A self-managed server is an EC2 instance: its class without the db. prefix.
            `${v.name} (` +
            (v.engine?.kind === 'self-managed' ? `EC2 ${v.instanceClass.replace(/^db\./, '')}` : v.instanceClass) +
            (v.az ? `, AZ ${v.az}` : '') +
            (v.readers ? `, ${v.readers} reader${v.readers > 1 ? 's' : ''}` : '') +
            `)`,
        )
        .join('; '),
    ],
    [
      'steps',
      `${data.steps.length} step results (${stepCounts(data)}), ` +
        (roundsRan(data) ??
          (maxRepeats(data.spec ?? { repeats: 1 }) > 1
            ? `${maxRepeats(data.spec!)} repeats in ${data.spec!.order} order`
            : 'one repeat')),
    ],
  ];
  const leftOut = ctx.leftOutSaturated.map((s) => `${s.variant} ${s.step_id} (repeat ${s.repeat})`);
  const saturationNotes =
    leftOut.length > 0
      ? [
          `Left out of every ratio, score and price-performance figure: ${leftOut.length} step ` +
            `result${leftOut.length === 1 ? '' : 's'} whose client saturated its CPU (the numbers measure the ` +
            `client, not the server): ${leftOut.join(', ')}. Keep them with --include-saturated.`,
        ]
      : [];
  const analyzed = analyzeSections(ctx);
  // A deviation from the study the experiment's text cannot state: which region's prices weigh the classes.
  const priced = analyzed.find((a) => a.id === 'price')?.findings as PriceFindings | undefined;
  const priceDeviation = priced !== undefined ? priceRegionDeviation(priced) : null;
  if (priceDeviation !== null) meta.splice(2, 0, ['deviation (prices)', priceDeviation]);
  const sections = analyzed.map((a) => a.section);
  const forwarding = analyzed.find((a) => a.id === 'forwarding')?.findings as ForwardingFindings | undefined;
  const warnings = [...(forwarding?.localEmulation === true ? [LOCAL_EMULATION_WARNING] : []), ...hostWarnings(data)];
  return {
    title: `aurora-bench report: ${r.spec_name}`,
    ...(banner(data) !== null ? { banner: banner(data)! } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    findings: Object.fromEntries(analyzed.map((a) => [a.id, a.findings])),
    meta,
    notes: [...saturationNotes, ...planNotes(data)],
    answer: composeAnswer(sections),
    sections,
  };
}

/** The CPUs the local servers ran on, as the plan notes of the run recorded them ("with 2 CPU(s)"). */
function localCpus(data: RunData): number | null {
  for (const n of parsedNotes(data)) {
    const m = /with (\d+) CPU\(s\)/.exec(n.message ?? '');
    if (m) return Number(m[1]);
  }
  return null;
}

/** What --scale small changed, from the plan's own notes, so the banner says how far the run is from the study. */
function scaledText(data: RunData): string {
  const prefix = 'scaled for a local rehearsal: ';
  const said = new Set<string>();
  for (const n of parsedNotes(data)) {
    const message = n.message ?? '';
    if (!message.startsWith(prefix)) continue;
    // Per-workload sweeps are in the plan notes; the banner keeps data, step length, clients and repeats.
    if (!/^(data|defaults|repeats|variants\[\d+\]\.clients\.count)$/.test(n.path ?? '')) continue;
    // The report interval is how often sysbench printed, not how far the run is from the study.
    said.add(message.slice(prefix.length).replace(/, \d+ s report interval$/, ''));
  }
  return said.size > 0 ? [...said].join('; ') : 'fewer rows, shorter steps';
}

/** A local run says so before anything else: its numbers are this machine's, not the AWS classes'. */
function banner(data: RunData): string | null {
  if (data.run.backend !== 'local') return null;
  const server = data.run.server_version ? ` (${data.run.server_version})` : '';
  const small = /-small$/.test(data.run.spec_name) ? `, at --scale small (${scaledText(data)})` : '';
  const cpus = localCpus(data);
  // The servers and the sysbench clients compete for the same CPUs: the first thing that bounds every figure.
  const shared =
    cpus !== null
      ? `; each server shared this machine's ${cpus} CPU${cpus === 1 ? '' : 's'} with its sysbench client`
      : '';
  return (
    `Local rehearsal on this machine${server}${small}${shared}. The numbers show the method and this ` +
    `machine, not the AWS classes.`
  );
}

/** The answer opens with at most this many sentences; the others follow, collapsed in HTML. */
const ANSWER_LINES = 5;

/** The sections' answer parts, in section order: the study's answer, before any evidence. */
function composeAnswer(sections: readonly ReportSection[]): AnswerPart | null {
  // The study's own comparison first, price-performance after it ("performance ratio vs price ratio").
  const ordered = [...sections.filter((s) => s.id !== 'price'), ...sections.filter((s) => s.id === 'price')];
  const parts = ordered.map((s) => s.answer).filter((a): a is AnswerPart => a !== undefined);
  if (parts.length === 0) return null;
  const lines = parts.flatMap((p) => p.lines);
  return {
    lines: lines.slice(0, ANSWER_LINES),
    ...(lines.length > ANSWER_LINES ? { more: lines.slice(ANSWER_LINES) } : {}),
    tables: notesOnce(parts.flatMap((p) => p.tables)),
    charts: parts.flatMap((p) => p.charts),
  };
}

const evidenceOf = (report: Report): ReportSection[] => report.sections.filter((s) => s.appendix !== true);
const appendixOf = (report: Report): ReportSection[] => report.sections.filter((s) => s.appendix === true);
/** A section with nothing left once its answer part moved up: no heading for it. */
const hasEvidence = (s: ReportSection): boolean =>
  s.leftOut === undefined &&
  (s.tables.length > 0 || s.charts.length > 0 || (s.answer === undefined && s.findings.length > 0));

/** The sections left out of this run's report, one line each saying why. */
const leftOutLines = (report: Report): string[] =>
  report.sections.flatMap((s) => (s.leftOut !== undefined ? [`${s.title}: ${s.leftOut}`] : []));

/** A section's evidence without the sentences the Answer already says: nothing is said twice. */
function withoutAnswerLines(s: ReportSection, answer: AnswerPart | null): ReportSection {
  if (answer === null) return s;
  const said = new Set([...answer.lines, ...(answer.more ?? [])]);
  return { ...s, findings: s.findings.filter((f) => !said.has(f)) };
}

// ---------------------------------------------------------------------------------------------
// Terminal

function terminalTable(t: TableBlock): string {
  const numeric = new Set(t.numeric ?? []);
  const align = t.head.map((_, i) => (numeric.has(i) ? ('right' as const) : ('left' as const)));
  const out = [t.title, textTable(t.head, t.rows, { align })];
  for (const n of t.notes ?? []) out.push(`  ${n}`);
  return out.join('\n');
}

function terminalSection(s: ReportSection): string {
  if (s.leftOut !== undefined) return `== ${s.title} ==\n  ${s.leftOut}`;
  const out = [`== ${s.title} ==`, s.question];
  if (s.findings.length > 0) out.push(...s.findings.map((f) => `  * ${f}`));
  for (const t of s.tables) out.push('', terminalTable(t));
  if (s.charts.length > 0)
    out.push('', `  (${s.charts.length} chart${s.charts.length === 1 ? '' : 's'} in the HTML report: --html FILE)`);
  return out.join('\n');
}

/** Reports without a study answer (compare, history): the run details first, then the sections. */
function renderTerminalPlain(report: Report): string {
  const out = [
    report.title,
    ...(report.warnings ?? []).map((w) => `!! ${w}`),
    ...report.meta.map(([k, v]) => `  ${k}: ${v}`),
  ];
  if (report.notes.length > 0) out.push('  notes:', ...report.notes.map((n) => `    ${n}`));
  if (report.sections.length === 0) out.push('', 'Nothing to report: the run has no step results.');
  for (const s of report.sections) out.push('', terminalSection(s));
  return out.join('\n') + '\n';
}

export function renderTerminal(report: Report): string {
  if (report.answer === undefined) return renderTerminalPlain(report);
  const out = [report.title];
  if (report.banner !== undefined) out.push('', `!! ${report.banner}`);
  for (const w of report.warnings ?? []) out.push(`!! ${w}`);
  const answer = report.answer ?? null;
  if (answer !== null) {
    out.push('', '== Answer ==', ...answer.lines.map((l) => `  * ${l}`), ...(answer.more ?? []).map((l) => `  * ${l}`));
    for (const t of answer.tables) out.push('', terminalTable(t));
    if (answer.charts.length > 0)
      out.push(
        '',
        `  (${answer.charts.length} chart${answer.charts.length === 1 ? '' : 's'} in the HTML report: --html FILE)`,
      );
  }
  if (report.sections.length === 0) out.push('', 'Nothing to report: the run has no step results.');
  for (const s of evidenceOf(report).filter(hasEvidence)) out.push('', terminalSection(withoutAnswerLines(s, answer)));
  const leftOut = leftOutLines(report);
  if (leftOut.length > 0) out.push('', '== Not shown ==', ...leftOut.map((l) => `  * ${l}`));
  out.push('', '== Appendix ==', ...report.meta.map(([k, v]) => `  ${k}: ${v}`));
  if (report.notes.length > 0) out.push('  plan notes:', ...report.notes.map((n) => `    ${n}`));
  for (const s of appendixOf(report)) out.push('', terminalSection(s));
  return out.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// HTML

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const CSS = `
body { font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  margin: 2rem auto; max-width: 1180px; color: #222; padding: 0 1rem; }
section.answer { background: #f7fbff; border: 1px solid #cfe3f7; border-radius: 6px; padding: 0 1rem 1rem; }
details#appendix { margin-top: 2.5rem; border-top: 1px solid #ddd; padding-top: 1rem; }
details#appendix summary, details.evidence > summary, details.more > summary { font-weight: 600; cursor: pointer; }
details.evidence { margin-top: 1rem; border-top: 1px solid #ddd; padding-top: .6rem; }
div.banner { background: #fff4e5; border: 1px solid #f0b35a; border-radius: 6px; padding: 0 1rem; font-weight: 600; }
div.banner p { margin: .6rem 0; }
h1 { font-size: 1.5rem; }
h2 { font-size: 1.25rem; margin-top: 2.5rem; border-bottom: 1px solid #ddd; padding-bottom: .3rem; }
h3 { font-size: 1rem; margin-top: 1.5rem; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; font-size: .9rem; }
dl.meta dt { font-weight: 600; color: #555; }
.question { color: #555; font-style: italic; }
ul.findings li { margin: .25rem 0; }
div.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: .85rem; margin: .5rem 0; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; vertical-align: top; overflow-wrap: break-word; }
th { background: #f4f5f7; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.emphasis td.num, section.answer td.num { white-space: normal; }
tr.emphasis td { background: #f7fbff; font-weight: 600; }
p.note { font-size: .8rem; color: #555; margin: .2rem 0; }
figure.chart { margin: 1rem 0; }
figure.chart svg { max-width: 100%; height: auto; }
div.charts.pairs { display: grid; grid-template-columns: repeat(auto-fit, minmax(540px, 1fr)); gap: 0 1rem; }
div.charts.pairs figure.chart { margin: .5rem 0; }
ul.notes { font-size: .85rem; color: #555; }
`;

function htmlTable(t: TableBlock): string {
  const numeric = new Set(t.numeric ?? []);
  const emphasis = new Set(t.emphasis ?? []);
  const head = `<tr>${t.head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>`;
  const body = t.rows
    .map(
      (row, i) =>
        `<tr` +
        (emphasis.has(i) ? ' class="emphasis"' : '') +
        `>` +
        row.map((c, j) => `<td${numeric.has(j) ? ' class="num"' : ''}>${escapeHtml(c)}</td>`).join('') +
        `</tr>`,
    )
    .join('\n');
  const notes = (t.notes ?? []).map((n) => `<p class="note">${escapeHtml(n)}</p>`).join('');
  const table =
    `<div class="table-wrap"><table>\n<thead>${head}</thead>\n<tbody>\n${body}\n</tbody>\n</table></div>` + notes;
  return t.folded === true
    ? `<details class="more"><summary>${escapeHtml(t.title)}</summary>\n${table}</details>`
    : `<h3>${escapeHtml(t.title)}</h3>\n${table}`;
}

function htmlChart(c: ChartBlock): string {
  return (
    `<figure class="chart" id="chart-${escapeHtml(c.id)}" role="img" aria-label="${escapeHtml(c.title)}" ` +
    `data-series-points="${chartPointCount(c)}">${renderChartSvg(c)}</figure>`
  );
}

function htmlSection(s: ReportSection): string {
  if (s.leftOut !== undefined)
    return (
      `<section id="${s.id}"><h2>${escapeHtml(s.title)}</h2>` + `<p class="note">${escapeHtml(s.leftOut)}</p></section>`
    );
  const parts = [
    `<section id="${s.id}">`,
    `<h2>${escapeHtml(s.title)}</h2><p class="question">${escapeHtml(s.question)}</p>`,
  ];
  // The evidence's findings, as the terminal prints them (renderHtml drops those the answer already says).
  if (s.findings.length > 0)
    parts.push(`<ul class="findings">${s.findings.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>`);
  for (const c of s.charts) parts.push(htmlChart(c));
  for (const t of s.tables) parts.push(htmlTable(t));
  parts.push('</section>');
  return parts.join('\n');
}

export function renderHtml(report: Report): string {
  const parts: string[] = [];
  parts.push(`<h1>${escapeHtml(report.title)}</h1>`);
  if (report.banner !== undefined || report.warnings !== undefined)
    parts.push(
      `<div class="banner" id="banner">` +
        [report.banner, ...(report.warnings ?? [])]
          .filter((b): b is string => b !== undefined)
          .map((b) => `<p>${escapeHtml(b)}</p>`)
          .join('') +
        `</div>`,
    );
  if (report.answer === undefined) {
    // Reports without a study answer (compare, history): the run details first, then the sections.
    parts.push(
      `<dl class="meta">` +
        report.meta.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('') +
        `</dl>`,
    );
    for (const s of report.sections) parts.push(htmlSection({ ...s, answer: undefined }));
    return page(report.title, parts);
  }
  const answer = report.answer;
  if (answer !== null) {
    parts.push('<section id="answer" class="answer">', '<h2>Answer</h2>');
    parts.push(`<ul class="findings">${answer.lines.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>`);
    if (answer.more !== undefined && answer.more.length > 0)
      parts.push(
        `<details class="more"><summary>${answer.more.length} more ` +
          `finding${answer.more.length === 1 ? '' : 's'}</summary><ul ` +
          `class="findings">${answer.more.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul></details>`,
      );
    for (const t of answer.tables) parts.push(htmlTable(t));
    // Charts side by side where the page is wide enough (a sweep's achieved and latency charts read as a pair).
    if (answer.charts.length > 0)
      parts.push(
        `<div class="charts` +
          (answer.charts.length > 1 ? ' pairs' : '') +
          `">` +
          answer.charts.map(htmlChart).join('\n') +
          `</div>`,
      );
    parts.push('</section>');
  }
  if (report.sections.length === 0) parts.push('<p>Nothing to report: the run has no step results.</p>');
  // The evidence behind the answer, one collapsed block per section: the answer is the page.
  for (const s of evidenceOf(report).filter(hasEvidence))
    parts.push(
      `<details class="evidence" id="evidence-${s.id}"><summary>${escapeHtml(s.title)}: the ` +
        `evidence</summary>\n${htmlSection(withoutAnswerLines(s, answer))}\n</details>`,
    );
  const leftOut = leftOutLines(report);
  if (leftOut.length > 0)
    parts.push(
      `<section id="not-shown"><h2>Not shown</h2><ul class="notes">` +
        leftOut.map((l) => `<li>${escapeHtml(l)}</li>`).join('') +
        `</ul></section>`,
    );
  parts.push('<details id="appendix"><summary>Appendix: run details, plan notes and error details</summary>');
  parts.push(
    `<dl class="meta">` +
      report.meta.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('') +
      `</dl>`,
  );
  if (report.notes.length > 0)
    parts.push(
      `<h3>Plan notes</h3><ul class="notes">${report.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul>`,
    );
  for (const s of appendixOf(report)) parts.push(htmlSection(s));
  parts.push('</details>');
  return page(report.title, parts);
}

function page(title: string, parts: readonly string[]): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
${parts.join('\n')}
<p class="note">Generated by aurora-bench. Charts rendered with Apache ECharts (server-side SVG);
this page loads nothing from the network.</p>
</body>
</html>
`;
}

// ---------------------------------------------------------------------------------------------
// JSON

/**
 * `report --json`: the run's details and each section's typed findings (values, intervals with what
 * they cover, verdicts), for notebooks and other tools. Numbers that are not finite become null.
 * @internal exported for its tests (a test seam)
 */
export function renderJson(report: Report): string {
  const doc = {
    title: report.title,
    ...(report.banner !== undefined ? { banner: report.banner } : {}),
    ...(report.warnings !== undefined ? { warnings: report.warnings } : {}),
    run: Object.fromEntries(report.meta),
    notes: report.notes,
    answer: report.answer ? [...report.answer.lines, ...(report.answer.more ?? [])] : [],
    findings: report.findings ?? {},
  };
  return JSON.stringify(doc, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2) + '\n';
}

// ---------------------------------------------------------------------------------------------
// Entry points

export interface ReportOptions {
  /** Default: the latest run. */
  readonly runId?: string;
  readonly repoRoot: string;
  /** A price file merged over prices/aws-prices.json. */
  readonly prices?: string;
  /** Also write the HTML report here. */
  readonly html?: string;
  /** Keep client-bound repeats in ratios, scores and price-performance. */
  readonly includeSaturated?: boolean;
  /** Print the findings as JSON (renderJson) instead of the terminal tables. */
  readonly json?: boolean;
}

/** The report of a run from any lake (DuckDB or Athena). */
export async function reportFromLake(
  lake: LakeReader,
  options: ReportOptions,
): Promise<{ report: Report; text: string; html?: string }> {
  const prices = loadPrices(options.repoRoot, options.prices);
  const data = await loadRun(lake, options.runId);
  const report = buildReport(data, prices, { includeSaturated: options.includeSaturated === true });
  return {
    report,
    text: options.json === true ? renderJson(report) : renderTerminal(report),
    ...(options.html !== undefined ? { html: renderHtml(report) } : {}),
  };
}

/** What `aurora-bench report` prints, for a local lake; writes the HTML file when asked. */
export async function reportCommand(options: ReportOptions & { readonly lakeDir: string }): Promise<string> {
  return withLake(options.lakeDir, async (lake) => {
    const { text, html } = await reportFromLake(lake, options);
    // One unreadable lake file does not stop the report; it is named.
    const skipped = skippedFilesText(lake);
    if (options.html !== undefined && html !== undefined) {
      writeUserFile(options.html, html);
      // JSON on stdout stays parseable: the file's path goes to the caller's log only in text mode.
      return options.json === true ? text : text + `\nHTML report written to ${options.html}\n` + skipped;
    }
    return options.json === true ? text : text + skipped;
  });
}
