/**
 * The report's findings on a lake written by real runs: S1, S2, S3 and S5 rehearsed locally with
 * `aurora-bench run experiments/<study>.json --scale small` (MariaDB 10.11 and sysbench 1.0.20 on a
 * 2-core machine), their steps, intervals and server metrics kept in test/fixtures/lakes/local-small.
 * Each test pins a number the report once got wrong on exactly these rows.
 */
import { resolve } from 'node:path';
import { withLake } from '../../core/lake/duckdb';
import { loadPrices } from '../../core/plan/cost';
import { loadRun, type RunData } from '../../core/report/load';
import { buildReport, renderHtml, renderJson, renderTerminal } from '../../core/report/report';
import { makeContext } from '../../core/report/sections';
import { analyzePrice } from '../../core/report/studies/price';
import { analyzeRate, rateSection } from '../../core/report/studies/rate';
import { analyzeForwarding, forwardingSection, readShareLabel } from '../../core/report/studies/forwarding';
import { analyzeThreadSweep, threadSweepSentences } from '../../core/report/studies/thread-sweep';
import { analyzeAb } from '../../core/report/studies/ab';
import { serverMetricsSection } from '../../core/report/server-metrics-section';
import { compactRatio } from '../../core/report/findings';
import type { Report } from '../../core/report/model';

const repoRoot = resolve(__dirname, '../..');
const lake = resolve(repoRoot, 'test', 'fixtures', 'lakes', 'local-small');
const prices = loadPrices(repoRoot);

const RUNS = {
  s1: 'graviton-vs-intel-small-20261127-112059-afed',
  s2: 'thread-sweep-small-20261127-114932-da85',
  s3: 'write-forwarding-small-20261127-113707-596c',
  s5: 'rate-sweep-small-20261127-112604-f737',
} as const;

async function run(id: string): Promise<RunData> {
  return withLake(lake, (l) => loadRun(l, id));
}

describe('reports of real local runs (test/fixtures/lakes/local-small)', () => {
  const data: Partial<Record<keyof typeof RUNS, RunData>> = {};
  beforeAll(async () => {
    for (const [k, id] of Object.entries(RUNS)) data[k as keyof typeof RUNS] = await run(id);
  });

  it.each(['s1', 's5'] as const)('%s: the Answer holds its findings in five, none folded away on the page', (k) => {
    // Act
    const report = buildReport(data[k]!, prices);
    // Assert
    expect(report.answer?.lines.length ?? 0).toBeGreaterThan(0);
    expect(report.answer?.lines.length ?? 0).toBeLessThanOrEqual(5);
    expect(report.answer?.more).toBeUndefined();
  });

  it('S5: no per-USD lead between one server twice; its point estimates point at the capacity table', () => {
    // Act
    const text = renderTerminal(buildReport(data.s5!, prices));
    // Assert: the rate sweep section shows no capacity ratio; the Answer's capacity table does.
    expect(text).not.toContain('Most transactions per USD');
    const lead = text.split('\n').find((l) => l.includes('here they are the same server')) ?? '';
    expect(lead).toContain('equal throughput would give 89.49% transactions per USD (1 / 111.75%)');
    expect(lead).toContain("point estimates from the capacities; their noise: the capacity ratios' intervals");
    expect(text).not.toContain('(rate sweep section)');
  });

  it('S1: the per-USD column of one server twice differs by the price list and by noise, not by price alone', () => {
    // Act
    const text = renderTerminal(buildReport(data.s1!, prices));
    // Assert: its r6g-b/r5-b cells are not 1 / the price ratio, so a note saying "the price list" alone is false.
    expect(text).toContain('so the column differs by the price list and by run-to-run noise');
  });

  it('S3: read shares called scattered only at the thread counts whose wins are scattered', () => {
    // Act: in this run only 32 threads has wins, and they are not a threshold.
    const text = renderTerminal(buildReport(data.s3!, prices));
    // Assert
    expect(text).toContain('(64, 128 threads): at 32 threads, scattered cells, not a threshold.');
  });

  it('S2: each offering is priced for its engine, as plan --aws does (not all at Aurora MySQL’s price)', () => {
    // Act
    const f = analyzePrice(makeContext(data.s2!, prices))!;
    // Assert: us-east-1 db.r6g.2xlarge per prices/aws-prices.json: Aurora MySQL 1.038, RDS for MySQL and
    // MariaDB 0.86 (dbInstanceHourlyByEngine), a self-managed server its r6g.2xlarge EC2 instance 0.4032.
    const byVariant = Object.fromEntries(f.variants.map((v) => [v.variant, v.hourly]));
    expect(byVariant).toEqual({
      'aurora-mysql': 1.038,
      'rds-mysql': prices.regions['us-east-1']!.dbInstanceHourlyByEngine!['rds-mysql']!['db.r6g.2xlarge'],
      'rds-mariadb-pool': prices.regions['us-east-1']!.dbInstanceHourlyByEngine!['rds-mariadb']!['db.r6g.2xlarge'],
      'rds-mariadb-per-conn': prices.regions['us-east-1']!.dbInstanceHourlyByEngine!['rds-mariadb']!['db.r6g.2xlarge'],
      'self-managed-pool': prices.regions['us-east-1']!.ec2Hourly['r6g.2xlarge'],
      'self-managed-per-conn': prices.regions['us-east-1']!.ec2Hourly['r6g.2xlarge'],
    });
    expect(new Set(Object.values(byVariant)).size).toBe(3);
  });

  it('S3: the within-run footnote stands under the first Answer table that uses it; later ones point back', () => {
    // Act
    const tables = buildReport(data.s3!, prices).answer!.tables;
    // Assert: the two TPS tables both mark within-run intervals with "*"; the note is printed once.
    const star = (t: (typeof tables)[number]) => (t.notes ?? []).filter((n) => n.startsWith('*: '));
    const byThreads = tables.find((t) => t.title.endsWith('TPS by threads'))!;
    const shares = tables.find((t) => t.title.startsWith('Reader/writer TPS by threads and read share'))!;
    expect(star(byThreads)).toEqual([expect.stringMatching(/^\*: interval from batch means/)]);
    expect(star(shares)).toEqual(['*: as under the table above.']);
    expect(tables.indexOf(byThreads)).toBeLessThan(tables.indexOf(shares));
  });

  it('S3: the read-share sentence says what the grid shows, at every thread count', () => {
    // Act
    const f = analyzeForwarding(makeContext(data.s3!, prices))!;
    const section = forwardingSection(f);
    // A local run: no write is forwarded, the titles say what ran.
    const grid = section.answer!.tables.find((t) => t.title.startsWith('Reader/writer TPS by threads and read share'))!;
    // Assert: a cell the grid calls better is a share the sentence names as a win, and no other.
    for (const v of f.readShares) {
      const row = grid.rows.find((r) => r[0] === String(v.threads))!;
      const better = grid.head.slice(1).filter((_, i) => / better| higher in this run/.test(row[i + 1]!));
      expect(v.wins.map(readShareLabel)).toEqual(better);
      // One repeat: the Answer does not judge the grid and names this run's wins, once.
      const answer = section.answer!.lines.find((l) => l.startsWith('Read share'))!;
      // The one-repeat caveat is said once, in the Answer's first verdict list, and holds for this one too.
      const lines = section.answer!.lines.join('\n');
      expect(lines.match(/1 repeat cannot resolve/g)).toHaveLength(1);
      expect(answer).toMatch(/from which the reader wins: in this run the reader was higher/);
      // Thread counts with the same reading share one parenthesis: "(64, 128 threads)".
      const of = `\\((?:\\d+, )*${v.threads}(?:, \\d+)* threads\\)`;
      if (better.length === 0) expect(answer).toMatch(new RegExp(`at no share ${of}`));
      else if (v.winsFrom !== null) expect(answer).toMatch(new RegExp(`from ${better[0]} up ${of}`));
      else expect(answer).toMatch(new RegExp(`at ${better.join(', ')} but not [^(]* ${of}`));
    }
    // These rows have wins at some shares and not above them: no threshold, and the wins are named.
    expect(f.readShares.some((v) => v.wins.length > 0 && v.winsFrom === null)).toBe(true);
    // One repeat: the verdicts see only within-run noise and say so.
    expect(f.readShares.every((v) => !v.runToRun)).toBe(true);
    expect(section.answer!.lines.join(' ')).not.toMatch(/beyond the noise/);
    expect(compactRatio(f.pairs.find((p) => p.ratio.direction === 'higher')!.ratio, true)).toMatch(
      /better in this run\*$/,
    );
  });

  it('S5: knees at offered rates, a capacity per repeat, one capacity statement, an interval over repeats', () => {
    // Act
    const f = analyzeRate(makeContext(data.s5!, prices))!;
    const section = rateSection(f);
    // Assert
    const offered = new Set(
      data.s5!.steps.filter((s) => s.rate > 0 || /-c\d+$/.test(s.step_id)).map((s) => s.offered_tps),
    );
    for (const sweep of f.sweeps)
      for (const v of sweep.variants) {
        expect(v.repeats.length).toBe(2);
        for (const r of v.repeats) {
          if (r.kneeOffered !== null) expect(offered.has(r.kneeOffered)).toBe(true);
          // The repeat's own highest rate achieved at an offered rate (saturation, open loop): never below a
          // rate the table shows achieved, never a mean over repeats, never the unlimited-rate step's.
          const achieved = v.points.filter((p) => p.repeat === r.repeat && p.achieved !== null).map((p) => p.achieved!);
          expect(r.capacity).toBe(Math.max(...achieved));
        }
        // The repeats probed different rates (each offered multiples of its own capacity).
        expect(new Set(v.repeats.map((r) => r.capacity)).size).toBe(2);
        expect(v.capacity.interval?.covers).toBe('run-to-run');
      }
    // One saturation statement per sweep sentence; no "±"; ticks of the achieved chart's linear axes start at 0.
    for (const line of section.answer!.lines.filter((l) => f.sweeps.some((sw) => l.startsWith(sw.label)))) {
      expect(line.match(/saturation \(/g)).toHaveLength(1);
      expect(line).not.toMatch(/±|unlimited-rate capacity/);
    }
    const chart = section.answer!.charts[0]!.option as { xAxis: { type: string }; yAxis: { type: string } };
    expect([chart.xAxis.type, chart.yAxis.type]).toEqual(['value', 'value']);
    expect(f.sweeps[0]!.capacityRatios[0]!.ratio.interval).not.toBeNull();
  });

  it('S2: no ranking or fall-off is called beyond the noise on one repeat’s intervals', () => {
    // Act
    const f = analyzeThreadSweep(makeContext(data.s2!, prices))!;
    const lines = threadSweepSentences(f);
    // Assert
    expect(f.ranking!.ratio.interval!.covers).toBe('within-run');
    expect(lines.join(' ')).not.toMatch(/beyond the noise|beyond the run-to-run noise/);
    expect(lines.find((l) => l.includes("'s (the next)"))).toMatch(/one repeat cannot resolve a ranking/);
    expect(
      f.sweeps
        .flatMap((s) => s.variants)
        .every((v) => v.fallOff === null || v.fallOff.interval === null || v.fallOff.interval.covers === 'within-run'),
    ).toBe(true);
  });

  it('S1: intervals are ranges that never go below 0, and the opening says the per-AZ QPS of each class', () => {
    // Act
    const report: Report = buildReport(data.s1!, prices);
    const text = renderTerminal(report);
    const ab = analyzeAb(makeContext(data.s1!, prices))!;
    // Assert
    expect(text).not.toMatch(/±/);
    expect(text).not.toMatch(/\(-\d/);
    expect(report.banner).toMatch(/^Local rehearsal/);
    expect(text.indexOf('Local rehearsal')).toBeLessThan(text.indexOf('== Answer =='));
    // Locally the four variants are one server: the Answer says so first, then the author's per-AZ comparison.
    expect(report.answer!.lines[0]).toMatch(/^Locally r5-a, r6g-a, r5-b, r6g-b were identical servers.*A\/A test/);
    expect(report.answer!.lines[1]).toMatch(
      new RegExp(
        /^AZ a, r6g-a vs r5-a \(QPS, p95\): read-only t32 [\d,]+ vs [\d,]+ /.source +
          /\([\d.]+%, p95 [\d.]+ vs [\d.]+ ms(, [^)]* far apart †)?\)/.source,
      ),
    );
    expect(ab.azs.map((a) => a.az)).toEqual(['a', 'b']);
    expect(ab.azs[0]!.rows.every((r) => r.qps.interval?.covers === 'run-to-run')).toBe(true);
  });

  it('local WriteIOPS (deferred page flushes: 0/s under a write-only load) is left out, and says why', () => {
    // Arrange: the rows do carry it
    expect(data.s1!.metrics.some((m) => m.metric === 'WriteIOPS')).toBe(true);
    // Act
    const section = serverMetricsSection(makeContext(data.s1!, prices))!;
    // Assert: no column for it, in a table or, when no metric is left to show, in the section's one line
    expect(section.tables.flatMap((t) => t.head).some((h) => h.startsWith('WriteIOPS'))).toBe(false);
    expect([...section.tables.flatMap((t) => t.notes ?? []), section.leftOut ?? ''].join(' ')).toMatch(
      /WriteIOPS \(left out locally: data-file writes are deferred page flushes/,
    );
  });

  it('report --json carries each section’s typed findings, with what each interval covers', () => {
    // Act
    const doc = JSON.parse(renderJson(buildReport(data.s5!, prices))) as {
      findings: Record<
        string,
        { kind: string; sweeps: { variants: { capacity: { interval: { covers: string } } }[] }[] }
      >;
    };
    // Assert
    expect(Object.keys(doc.findings)).toEqual(expect.arrayContaining(['rate', 'price']));
    expect(doc.findings['rate']!.kind).toBe('rate-sweep');
    expect(doc.findings['rate']!.sweeps[0]!.variants[0]!.capacity.interval.covers).toBe('run-to-run');
  });

  it('the HTML page: banner first, the answer, the evidence collapsed', () => {
    // Act
    const html = renderHtml(buildReport(data.s3!, prices));
    // Assert
    expect(html.indexOf('id="banner"')).toBeLessThan(html.indexOf('id="answer"'));
    expect(html).toMatch(/<details class="evidence" id="evidence-forwarding">/);
    expect(html).not.toMatch(/<details class="evidence"[^>]* open/);
  });
});
