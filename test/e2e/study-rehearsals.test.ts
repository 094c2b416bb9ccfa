/**
 * Each of the five studies rehearsed locally, end to end, and its report read in a browser: the
 * experiment file at --scale small (real MariaDB writer and replicas, real sysbench 1.0.20, the
 * local workflow), cut further for CI to one run per study with short steps (the cuts are listed
 * in CI_CUTS: fewer variants, workloads and points, 2-s steps), then `report --html` opened in
 * headless Chromium. The run must end succeeded and the page open with the study's answer, with
 * data in every chart and no table wider than a 1,280-px window. Screenshots are kept under
 * test-output/study-rehearsals/.
 *
 * The full --scale small rehearsals (the experiment files as they are) take 2-10 minutes each on a
 * 2-core machine; their figures are in docs/studies.md (Reports).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LocalBackend } from '../../core/backends/local/local-backend';
import { checkLocalDependencies } from '../../core/backends/local/preflight';
import { runLocal } from '../../core/cli/run-local';
import { reportCommand } from '../../core/report/report';
import { Chromium, findChromium } from '../helpers/chromium';

const repoRoot = resolve(__dirname, '../..');
const outputDir = join(repoRoot, 'test-output', 'study-rehearsals');

type Doc = Record<string, unknown> & {
  variants: { name: string }[];
  workloads: { name: string; threads?: number[] }[];
  defaults: Record<string, number>;
};

/** What CI cuts from each experiment beyond --scale small, so the five runs share a few minutes. */
const CI_CUTS: Record<string, (d: Doc) => void> = {
  'graviton-vs-intel': (d) => {
    d.variants = d.variants.filter((v) => v.name.endsWith('-a'));
    d.workloads = d.workloads.filter((w) => w.name === 'read-only');
  },
  'thread-sweep': (d) => {
    d.variants = d.variants.slice(0, 2);
    d.workloads = d.workloads.filter((w) => w.name === 'read-write').map((w) => ({ ...w, threads: [2, 8, 32, 128] }));
  },
  'write-forwarding': (d) => {
    const keep = [
      'ps4-writer',
      'ps4-reader',
      'ps36-writer',
      'ps36-reader',
      'ps4-2readers',
      'consistency-eventual',
      'consistency-session',
      'consistency-global',
    ];
    d.workloads = d.workloads.filter((w) => keep.includes(w.name)).map((w) => ({ ...w, threads: [8] }));
  },
  'network-throughput': (d) => {
    d.variants = [d.variants[0]!, d.variants[d.variants.length - 1]!];
  },
  'rate-sweep': (d) => {
    d.workloads = d.workloads.filter((w) => w.name === 'update');
    // The curve and its knee per variant need every rate, not a second round of them.
    d['repeats'] = 1;
  },
};

interface PageCheck {
  firstSection: string | null;
  answerItems: number;
  charts: { id: string; visiblePoints: number }[];
  tooWideTables: string[];
}

const PAGE_CHECK = `(() => {
  const answer = document.querySelector('section#answer');
  return {
    firstSection: (document.querySelector('body > section') || {}).id || null,
    answerItems: answer ? answer.querySelectorAll('ul.findings li, table, figure.chart').length : 0,
    charts: Array.from(document.querySelectorAll('figure.chart')).map((f) => ({
      id: f.id,
      visiblePoints: Array.from(f.querySelectorAll('svg [ecmeta_data_index]'))
        .filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length,
    })),
    tooWideTables: Array.from(document.querySelectorAll('div.table-wrap'))
      .filter((d) => d.scrollWidth > d.clientWidth + 1)
      .map((d) => (d.previousElementSibling || {}).textContent || '?'),
  };
})()`;

describe('the five studies rehearsed locally (--scale small, cut for CI) and their reports in Chromium', () => {
  const binary = findChromium();
  let work: string;
  /** Short: the servers' unix socket paths live under it (107 bytes at most). */
  let runRoot: string;
  let browser: Chromium | undefined;
  let serverVersion: string | null = null;

  beforeAll(async () => {
    if (binary === undefined)
      throw new Error('chromium is not installed: run `bash scripts/setup.sh --test` (apt-get install chromium)');
    work = mkdtempSync(join(tmpdir(), 'aurora-bench-study-rehearsals-'));
    runRoot = mkdtempSync(join(tmpdir(), 'ab-sr-'));
    mkdirSync(outputDir, { recursive: true });
    cpSync(join(repoRoot, 'experiments', 'workloads'), join(work, 'workloads'), { recursive: true });
    serverVersion = (await checkLocalDependencies()).serverVersion;
    browser = await Chromium.launch(binary, join(work, 'profile'));
  });

  afterAll(async () => {
    await browser?.close();
    if (work) rmSync(work, { recursive: true, force: true });
    if (runRoot) rmSync(runRoot, { recursive: true, force: true });
  });

  it.each(Object.keys(CI_CUTS).map((s) => [s]))(
    '%s: the rehearsal succeeds and its report opens with the answer, every chart with data',
    async (study) => {
      // Arrange: the experiment file, cut for CI, next to its workloads
      const doc = JSON.parse(readFileSync(join(repoRoot, 'experiments', `${study}.json`), 'utf8')) as Doc;
      delete doc['$schema'];
      CI_CUTS[study]!(doc);
      // A question stays only where the cut kept both its variants.
      const names = new Set((doc['variants'] as { name: string }[]).map((v) => v.name));
      const questions = doc['questions'] as { baseline: string; candidate: string }[] | undefined;
      if (questions !== undefined)
        doc['questions'] = questions.filter((q) => names.has(q.baseline) && names.has(q.candidate));
      doc.defaults = { ...doc.defaults, durationS: 2, warmupS: 0, reportIntervalS: 1 };
      // A fixed count or a {min, max} range of rounds: at most 2 either way.
      const repeats = doc['repeats'] as number | { min: number; max: number } | undefined;
      doc['repeats'] =
        typeof repeats === 'object'
          ? { min: Math.min(repeats.min, 2), max: Math.min(repeats.max, 2) }
          : Math.min(repeats ?? 1, 2);
      const specFile = join(work, `${study}.json`);
      writeFileSync(specFile, JSON.stringify(doc));
      const lake = join(work, `lake-${study}`);
      const backend = new LocalBackend({ lakeDir: lake, repoRoot, runRoot });
      // Act
      const result = await runLocal({
        specFile,
        repoRoot,
        lakeDir: lake,
        backend,
        serverVersion,
        scale: 'small',
        log: () => undefined,
      });
      const html = join(work, `${study}.html`);
      await reportCommand({ lakeDir: lake, repoRoot, runId: result.plan.runId, html });
      const { sessionId, events } = await browser!.open(pathToFileURL(html).href, { width: 1280, height: 900 });
      // The report collapses the evidence below its answer: open it to see every chart drawn.
      await browser!.evaluate(
        sessionId,
        `document.querySelectorAll('details').forEach((d) => { d.open = true; }); true`,
      );
      const page = await browser!.evaluate<PageCheck>(sessionId, PAGE_CHECK);
      writeFileSync(join(outputDir, `${study}.png`), await browser!.screenshot(sessionId));
      writeFileSync(join(outputDir, `${study}.html`), readFileSync(html));
      // Assert
      expect({ status: result.status, cause: result.status === 'SUCCEEDED' ? null : (result.cause ?? null) }).toEqual({
        status: 'SUCCEEDED',
        cause: null,
      });
      expect(events.exceptions).toEqual([]);
      expect(page.firstSection).toBe('answer');
      expect(page.answerItems).toBeGreaterThan(0);
      expect(page.charts.length).toBeGreaterThan(0);
      for (const c of page.charts)
        expect({ id: c.id, hasPoints: c.visiblePoints > 0 }).toEqual({ id: c.id, hasPoints: true });
      expect(page.tooWideTables).toEqual([]);
    },
    600_000,
  );
});
