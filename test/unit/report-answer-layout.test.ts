/**
 * The report's layout rules over every study: the co-tenant warning in the banner, nothing said
 * twice, sections with nothing measured left out with one line, all-zero metrics without a column.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { RunData } from '../../core/report/load';
import type { Report } from '../../core/report/model';
import { buildReport, renderHtml, renderTerminal } from '../../core/report/report';
import { makeContext } from '../../core/report/sections';
import { serverMetricsSection } from '../../core/report/server-metrics-section';
import { verdictsSection } from '../../core/report/verdicts-section';
import type { VerdictsRow } from '../../core/lake/rows';
import { runData, stepResult } from '../helpers/step-results';
import { experiment, plantedRunData } from '../helpers/planted-lakes';

const prices = loadPrices(resolve(__dirname, '../..'));

type Metric = RunData['metrics'][number];
const metric = (over: Partial<Metric> & Pick<Metric, 'cell_id' | 'metric' | 'avg_value'>): Metric => ({
  step_id: 'rw',
  role: 'writer',
  instance_id: `${over.cell_id}-writer`,
  max_value: over.avg_value,
  samples: 5,
  source: 'local',
  partial: false,
  ...over,
});

const HOST_NOTE = 'run r1 shared box with 3 other runs: a, b, c; its figures include their load';

describe('report layout', () => {
  it('puts the co-tenant warning in the banner at the top, not among the appendix notes', () => {
    // Arrange: a run whose manifest notes say other runs shared the host.
    const base = runData([stepResult({ variant: 'a', step_id: 'rw' })]);
    const data: RunData = {
      ...base,
      run: { ...base.run, notes: JSON.stringify([{ level: 'warning', path: 'host', message: HOST_NOTE }]) },
    };

    // Act
    const report = buildReport(data, prices);
    const text = renderTerminal(report);
    const html = renderHtml(report);

    // Assert
    expect(report.notes.join(' ')).not.toContain(HOST_NOTE);
    const at = text.indexOf(HOST_NOTE);
    expect(at).toBeGreaterThan(0);
    expect(text.indexOf(HOST_NOTE, at + 1)).toBe(-1);
    expect(at).toBeLessThan(text.indexOf('== Appendix =='));
    expect(at).toBeLessThan(Math.max(text.indexOf('== Answer =='), text.indexOf('== ')));
    const banner = /<div class="banner" id="banner">(.*?)<\/div>/s.exec(html);
    expect(banner?.[1]).toContain('its figures include their load');
    expect(html.indexOf('id="banner"')).toBeLessThan(html.indexOf('<details'));
  });

  it('does not repeat an Answer sentence under the evidence', () => {
    // Arrange: a section whose findings include the sentence its answer part opens with.
    const said = 'r6g/r5 QPS 104.0% (98.0%–110.0%): within noise.';
    const report: Report = {
      title: 't',
      meta: [],
      notes: [],
      answer: { lines: [said], tables: [], charts: [] },
      sections: [
        {
          id: 'ab',
          title: 'A/B',
          question: 'q',
          findings: [said, 'Another sentence.'],
          tables: [{ title: 'tbl', head: ['x'], rows: [['1']] }],
          charts: [],
          answer: { lines: [said], tables: [], charts: [] },
        },
      ],
    };

    // Act
    const text = renderTerminal(report);

    // Assert
    expect(text.split(said).length - 1).toBe(1);
    expect(text).toContain('Another sentence.');
  });

  it('leaves out a history section with nothing judged, with one line saying why', () => {
    // Arrange: a first run: every verdict is "noise unknown".
    const verdict = {
      verdict: 'unknown',
      workload: 'rw',
      threads: 8,
      rate: 0,
      target: 'writer',
      variant: 'a',
      metric_label: 'TPS',
    };
    const data: RunData = {
      ...runData([stepResult({ variant: 'a', step_id: 'rw' })]),
      verdicts: [verdict, verdict] as unknown as VerdictsRow[],
    };

    // Act
    const section = verdictsSection(makeContext(data, prices));
    const report: Report = { title: 't', meta: [], notes: [], answer: null, sections: [section!] };
    const text = renderTerminal(report);

    // Assert
    expect(section!.tables).toEqual([]);
    expect(section!.leftOut).toMatch(/nothing to judge yet/);
    // It names no metric: the report it sits in need not show them (S4 shows no TPS or QPS).
    expect(section!.leftOut).toMatch(
      /no step of this run \(1 distinct step: a workload at one thread count and rate, on one variant\) has earlier/,
    );
    expect(section!.leftOut).not.toMatch(/TPS/);
    expect(text).not.toContain("== Verdicts against the experiment's history ==");
    expect(text).toMatch(/== Not shown ==\n {2}\* Verdicts against the experiment's history: nothing to judge yet/);
  });

  it('drops a server metric that read 0 everywhere, with one line why, and the section when nothing is left', () => {
    // Arrange: ReadIOPS 0 in every step; WriteIOPS is left out locally anyway.
    const steps = [stepResult({ variant: 'a', step_id: 'rw' }), stepResult({ variant: 'a', step_id: 'ro' })];
    const zeros = ['rw', 'ro'].map((s) => metric({ cell_id: 'a-r1', step_id: s, metric: 'ReadIOPS', avg_value: 0 }));
    const local = (d: RunData): RunData => ({ ...d, run: { ...d.run, backend: 'local' } });

    // Act
    const onlyZeros = serverMetricsSection(makeContext(local({ ...runData(steps), metrics: zeros }), prices));
    const withLatency = serverMetricsSection(
      makeContext(
        { ...runData(steps), metrics: [...zeros, metric({ cell_id: 'a-r1', metric: 'CommitLatency', avg_value: 2 })] },
        prices,
      ),
    );

    // Assert
    expect(onlyZeros!.tables).toEqual([]);
    expect(onlyZeros!.leftOut).toMatch(/^ReadIOPS read 0 in every datapoint of every step \(the data fits/);
    expect(withLatency!.tables[0]!.head).not.toContain('ReadIOPS /s');
    expect(withLatency!.tables[0]!.notes!.join(' ')).toMatch(/ReadIOPS read 0 in every datapoint/);
  });
});

describe('the co-tenant banner line', () => {
  it("states the run's own duration, start to end, not the one its host note counted while it ran", () => {
    // Arrange: the note was written 2 s after the run's recorded end
    const data = plantedRunData(experiment('network-throughput'), () => ({ tps: 100 }), {
      seed: 1,
      runId: 'cotenant',
    });
    const started = '2026-12-02T12:00:00.000Z';
    const note = {
      level: 'warning',
      path: 'host',
      message: "run cotenant shared host with another run: other (pid 1, a to b: 7 s of this run's 682 s)",
    };
    const run = {
      ...data.run,
      started_at: started,
      ended_at: '2026-12-02T12:11:20.600Z',
      notes: JSON.stringify([note]),
    };
    // Act
    const report = buildReport({ ...data, run }, loadPrices(resolve(__dirname, '../..')));
    // Assert
    expect(report.warnings).toContainEqual(expect.stringContaining("7 s of this run's 681 s"));
  });
});
