/**
 * The HTML report in a real browser: reports rendered from lake rows (real DuckDB, real ECharts
 * server-side SVG) are opened in headless Chromium (Debian's chromium, `bash scripts/setup.sh
 * --test`); the page must load with no console error, no exception and no network request, and
 * every chart must show data points. Screenshots are kept under test-output/report-html/.
 *
 * The study pages are rendered from runs written as lake rows (shaped like each study's findings);
 * the last test renders the report of a real local run (MariaDB + sysbench through the local
 * workflow) the same way.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LocalBackend } from '../../core/backends/local/local-backend';
import { checkLocalDependencies } from '../../core/backends/local/preflight';
import { runLocal } from '../../core/cli/run-local';
import { reportCommand } from '../../core/report/report';
import { Chromium, findChromium } from '../helpers/chromium';
import { STUDIES, writeStudyRun } from '../helpers/study-runs';
import { LAYOUT_EXPRESSION, type PageLayout } from '../helpers/report-layout';

const repoRoot = resolve(__dirname, '../..');
const outputDir = join(repoRoot, 'test-output', 'report-html');

interface ChartCheck {
  id: string;
  declared: number;
  visiblePoints: number;
}

/** Per chart: its SVG elements that carry a data index (one per bar / symbol) and have a size on screen. */
const CHART_CHECK = `Array.from(document.querySelectorAll('figure.chart')).map((f) => ({
  id: f.id,
  declared: Number(f.getAttribute('data-series-points')),
  visiblePoints: Array.from(f.querySelectorAll('svg [ecmeta_data_index]'))
    .filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length,
}))`;

/** Opens every collapsed block (evidence, more findings, appendix). */
const OPEN_ALL = `document.querySelectorAll('details').forEach((d) => { d.open = true; }); true`;

interface Layout {
  firstSection: string | null;
  answerItems: number;
  answerCharts: number;
  answerTables: number;
  /** Tables wider than their column at a 1,280 px window (they would scroll sideways). */
  tooWideTables: string[];
  appendixOpen: boolean;
}

/** The page's order and fit: the answer first, with content; no table wider than the page; the appendix collapsed. */
const LAYOUT_CHECK = `(() => {
  const first = document.querySelector('body > section');
  const answer = document.querySelector('section#answer');
  return {
    firstSection: first ? first.id : null,
    answerItems: answer
      ? answer.querySelectorAll('ul.findings li').length + answer.querySelectorAll('table').length
      : 0,
    answerCharts: answer ? answer.querySelectorAll('figure.chart').length : 0,
    answerTables: answer ? answer.querySelectorAll('table').length : 0,
    tooWideTables: Array.from(document.querySelectorAll('div.table-wrap'))
      .filter((d) => d.scrollWidth > d.clientWidth + 1)
      .map((d) => (d.previousElementSibling || {}).textContent || '?'),
    appendixOpen: document.querySelector('details#appendix')?.open ?? true,
  };
})()`;

describe('HTML report in headless Chromium', () => {
  const binary = findChromium();
  let work: string;
  let browser: Chromium | undefined;

  beforeAll(async () => {
    if (binary === undefined)
      throw new Error('chromium is not installed: run `bash scripts/setup.sh --test` (apt-get install chromium)');
    work = mkdtempSync(join(tmpdir(), 'aurora-bench-report-html-'));
    mkdirSync(outputDir, { recursive: true });
    browser = await Chromium.launch(binary, join(work, 'profile'));
  });

  afterAll(async () => {
    await browser?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('detects console errors, exceptions and network requests (the checks below can fail)', async () => {
    // Arrange: a page that does all three
    const bad = join(work, 'bad.html');
    writeFileSync(
      bad,
      '<!DOCTYPE html><html><body><img src="http://192.0.2.1/x.png"><script>console.error("boom"); throw new ' +
        'Error("kaput");</script></body></html>',
    );
    // Act
    const { events } = await browser!.open(pathToFileURL(bad).href);
    // Assert
    expect(events.consoleErrors.join()).toMatch(/boom/);
    expect(events.exceptions.join()).toMatch(/kaput/);
    expect(events.requests.filter((u) => !u.startsWith('file:'))).toEqual(['http://192.0.2.1/x.png']);
  });

  it.each(STUDIES.map((s) => [s]))(
    '%s: the report loads cleanly, offline, and every chart has data points',
    async (study) => {
      // Arrange
      const lake = join(work, `lake-${study}`);
      const { runId } = writeStudyRun(lake, repoRoot, study);
      const html = join(work, `${study}.html`);
      const text = await reportCommand({ lakeDir: lake, repoRoot, runId, html });
      // Act
      const { sessionId, events } = await browser!.open(pathToFileURL(html).href, { width: 1280, height: 900 });
      const layout = await browser!.evaluate<Layout>(sessionId, LAYOUT_CHECK);
      // The evidence is collapsed: open every section to see its charts drawn.
      await browser!.evaluate(sessionId, OPEN_ALL);
      const charts = await browser!.evaluate<ChartCheck[]>(sessionId, CHART_CHECK);
      const sections = await browser!.evaluate<string[]>(
        sessionId,
        `Array.from(document.querySelectorAll('section h2')).map((h) => h.textContent)`,
      );
      const texts = await browser!.evaluate<PageLayout>(sessionId, LAYOUT_EXPRESSION);
      writeFileSync(join(outputDir, `${study}.png`), await browser!.screenshot(sessionId));
      writeFileSync(join(outputDir, `${study}.html`), readFileSync(html));
      // Assert
      expect(text).toMatch(/HTML report written to/);
      expect(events.consoleErrors).toEqual([]);
      expect(events.exceptions).toEqual([]);
      expect(events.logErrors).toEqual([]);
      expect(events.requests.filter((u) => !u.startsWith('file:'))).toEqual([]);
      expect(charts.length).toBeGreaterThan(0);
      for (const c of charts)
        expect({ id: c.id, hasPoints: c.visiblePoints > 0 }).toEqual({ id: c.id, hasPoints: true });
      expect(sections.length).toBeGreaterThan(0);
      expect(layout.firstSection).toBe('answer');
      expect(layout.answerItems).toBeGreaterThan(0);
      expect(layout.answerCharts + layout.answerTables).toBeGreaterThan(0);
      expect(layout.tooWideTables).toEqual([]);
      expect(layout.appendixOpen).toBe(false);
      expect(texts.overlaps).toEqual([]);
    },
  );

  it('the overlap check finds overlapping chart texts (it can fail)', async () => {
    // Arrange: two labels drawn at the same place in a chart figure
    const bad = join(work, 'overlap.html');
    writeFileSync(
      bad,
      '<!DOCTYPE html><html><body><figure class="chart" id="chart-x"><svg width="300" height="100"><text ' +
        'x="10" y="50">offered TPS</text><text x="14" y="52">ideal line</text></svg></figure></body></html>',
    );
    // Act
    const { sessionId } = await browser!.open(pathToFileURL(bad).href);
    const layout = await browser!.evaluate<PageLayout>(sessionId, LAYOUT_EXPRESSION);
    // Assert
    expect(layout.overlaps).toEqual([{ chart: 'chart-x', a: 'offered TPS', b: 'ideal line' }]);
  });

  // The reports of real --scale small runs of S1, S2, S3 and S5 (test/fixtures/lakes/local-small).
  it.each([
    ['S1', 'graviton-vs-intel-small-20261127-112059-afed'],
    ['S2', 'thread-sweep-small-20261127-114932-da85'],
    ['S3', 'write-forwarding-small-20261127-113707-596c'],
    ['S5', 'rate-sweep-small-20261127-112604-f737'],
  ])(
    '%s from a real local run: no chart text overlaps another, and the page fits in 3.6 screens',
    async (study, runId) => {
      // Arrange
      const html = join(work, `real-${study}.html`);
      await reportCommand({
        lakeDir: join(repoRoot, 'test', 'fixtures', 'lakes', 'local-small'),
        repoRoot,
        runId,
        html,
      });
      // Act
      const { sessionId, events } = await browser!.open(pathToFileURL(html).href, { width: 1280, height: 900 });
      const layout = await browser!.evaluate<PageLayout>(sessionId, LAYOUT_EXPRESSION);
      writeFileSync(join(outputDir, `real-${study}.png`), await browser!.screenshot(sessionId));
      process.stdout.write(`${study}: page height ${layout.height} px, ${layout.textsMeasured} chart texts measured\n`);
      // Assert
      expect(events.exceptions).toEqual([]);
      expect(layout.textsMeasured).toBeGreaterThan(10);
      expect(layout.overlaps).toEqual([]);
      // The answer in at most 3.6 screens of 900 px, the rest collapsed: the study's findings beside
      // this run's stay open (a reader who does not click must see how the run answers the study).
      expect(layout.height).toBeLessThan(3.6 * 900);
    },
  );

  it('a real local run (two variants, thread sweep, two repeats): the report loads cleanly with data', async () => {
    // Arrange: run the local workflow for real
    const versions = await checkLocalDependencies();
    const lake = join(work, 'lake-real');
    const specFile = join(work, 'real.json');
    writeFileSync(
      specFile,
      JSON.stringify({
        name: 'report-real',
        engine: { version: '3.04.0' },
        variants: [
          { name: 'r6g', instanceClass: 'db.r6g.large' },
          { name: 'r5', instanceClass: 'db.r5.large' },
        ],
        data: { tables: 2, tableSize: 1000 },
        // 1-s steps: the report needs each step's figures, not long
        // ones (a sweep is four thread counts, MIN_SWEEP_THREADS).
        defaults: { durationS: 1, warmupS: 0, reportIntervalS: 1, percentile: 95 },
        workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1, 2, 4, 8] }],
        repeats: 2,
      }),
    );
    const backend = new LocalBackend({ lakeDir: lake, repoRoot, runRoot: join(work, 'runs') });
    const result = await runLocal({
      specFile,
      repoRoot,
      lakeDir: lake,
      backend,
      serverVersion: versions.serverVersion,
      log: () => undefined,
    });
    const html = join(work, 'real.html');
    // Act
    const text = await reportCommand({ lakeDir: lake, repoRoot, runId: result.plan.runId, html });
    const { sessionId, events } = await browser!.open(pathToFileURL(html).href);
    await browser!.evaluate(sessionId, OPEN_ALL);
    const charts = await browser!.evaluate<ChartCheck[]>(sessionId, CHART_CHECK);
    writeFileSync(join(outputDir, 'real-local-run.png'), await browser!.screenshot(sessionId));
    // Assert
    expect(result.status).toBe('SUCCEEDED');
    expect(text).toMatch(/== Variants compared|== Thread sweep ==/);
    expect(text).toMatch(/rw: (r6g|r5) peaks at \d+ threads/);
    expect(events.consoleErrors).toEqual([]);
    expect(events.exceptions).toEqual([]);
    expect(events.requests.filter((u) => !u.startsWith('file:'))).toEqual([]);
    expect(charts.map((c) => c.id)).toEqual(expect.arrayContaining(['chart-sweep-tps-0', 'chart-sweep-lat-0']));
    for (const c of charts) expect({ id: c.id, hasPoints: c.visiblePoints > 0 }).toEqual({ id: c.id, hasPoints: true });
  }, 600_000);
});
