/**
 * S3's run order, co-tenant steps, the scale-out against one reader, the average latency's interval and the
 * study table: each a property the report states from its own figures.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { RunData } from '../../core/report/load';
import type { StepResult } from '../../core/lake/results';
import { makeContext } from '../../core/report/sections';
import { analyzeForwarding, forwardingSection } from '../../core/report/studies/forwarding';
import { buildReport, renderHtml } from '../../core/report/report';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));
const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();

const spec = {
  name: 'fwd',
  variants: [],
  workloads: [
    { name: 'ps4-writer', test: 'oltp_read_write', threads: [64], target: 'writer', options: { point_selects: 4 } },
    { name: 'ps4-reader', test: 'oltp_read_write', threads: [64], target: 'reader', options: { point_selects: 4 } },
    {
      name: 'ps4-2readers',
      test: 'oltp_read_write',
      threads: [32],
      target: 'all-readers',
      clients: 2,
      options: { point_selects: 4 },
    },
    ...['EVENTUAL', 'SESSION', 'GLOBAL'].map((level) => ({
      name: `c-${level}`,
      script: 'rw_consistency.lua',
      threads: [32],
      target: 'reader',
      options: { consistency: level },
    })),
  ],
} as never;

interface Planned {
  readonly workload: string;
  readonly target: string;
  readonly threads: number;
  readonly tps: number;
  readonly avgMs?: number;
  readonly clients?: number;
}

/** One repeat each, 10 s apart in the order given, with per-interval TPS that wobble a little. */
function run(planned: readonly Planned[], notes = '[]'): RunData {
  const steps: StepResult[] = planned.map((p, i) =>
    stepResult({
      variant: 'wf',
      step_id: `${p.workload}-t${p.threads}`,
      workload: p.workload,
      target: p.target,
      threads: p.threads,
      tps: p.tps,
      lat_avg_ms: p.avgMs ?? (p.threads * 1000) / p.tps,
      started_at: at(i * 10),
      ended_at: at(i * 10 + 8),
      ...(p.clients ? { clients: p.clients, ok_clients: p.clients } : {}),
    }),
  );
  const intervals = new Map(
    steps.map((s) => [
      `${s.cell_id}/${s.step_id}`,
      Array.from({ length: 40 }, (_, t) => ({
        cell_id: s.cell_id,
        step_id: s.step_id,
        t: t + 1,
        tps: s.tps! * (1 + 0.05 * Math.sin(t)),
        qps: 0,
        lat_pct_ms: 10 * (1 + 0.05 * Math.cos(t)),
        errors_per_s: 0,
      })),
    ]),
  );
  const d = runData(steps, spec);
  return { ...d, intervals, run: { ...d.run, backend: 'local' as const, notes } };
}

const base: Planned[] = [
  { workload: 'ps4-writer', target: 'writer', threads: 64, tps: 300 },
  { workload: 'ps4-reader', target: 'reader', threads: 64, tps: 360 },
  { workload: 'ps4-2readers', target: 'all-readers', threads: 32, tps: 450, clients: 2 },
  { workload: 'c-EVENTUAL', target: 'reader', threads: 32, tps: 200 },
  { workload: 'c-SESSION', target: 'reader', threads: 32, tps: 190 },
  { workload: 'c-GLOBAL', target: 'reader', threads: 32, tps: 100 },
];

const hostNote = (from: number, to: number): string =>
  JSON.stringify([
    {
      level: 'warning',
      path: 'host',
      message: `run r shared vm with another run: other (pid 7, ${at(from)} to ${at(to)}: 5 s of this run's 60 s); x`,
    },
  ]);

function analyzed(data: RunData) {
  const f = analyzeForwarding(makeContext(data, prices))!;
  return { f, section: forwardingSection(f) };
}

/** Reader and writer at 32 and 64 threads for two read shares; ps36's reader the lower one at both. */
function sharesRun(): RunData {
  const shareSpec = {
    name: 'fwd',
    variants: [],
    workloads: [4, 36].flatMap((ps) =>
      (['writer', 'reader'] as const).map((target) => ({
        name: `ps${ps}-${target}`,
        test: 'oltp_read_write',
        threads: [32, 64],
        target,
        options: { range_selects: false, point_selects: ps },
      })),
    ),
  } as never;
  const tps: Record<string, number> = { 'ps4-reader': 105, 'ps36-reader': 80, 'ps4-writer': 100, 'ps36-writer': 100 };
  const steps = [32, 64].flatMap((threads) =>
    Object.entries(tps).map(([workload, v]) =>
      stepResult({
        variant: 'wf',
        step_id: `${workload}-t${threads}`,
        workload,
        target: workload.endsWith('reader') ? 'reader' : 'writer',
        threads,
        tps: v,
      }),
    ),
  );
  const intervals = new Map(
    steps.map((s) => [
      `${s.cell_id}/${s.step_id}`,
      Array.from({ length: 40 }, (_, t) => ({
        cell_id: s.cell_id,
        step_id: s.step_id,
        t: t + 1,
        tps: s.tps! * (1 + 0.5 * (t % 8 < 4 ? -1 : 1)),
        qps: 0,
        lat_pct_ms: 10,
        errors_per_s: 0,
      })),
    ]),
  );
  const d = runData(steps, shareSpec);
  return { ...d, intervals, run: { ...d.run, backend: 'local' as const } };
}

describe("S3's run order and what it ties to each step", () => {
  it('does not single out a lowest cell the grid calls within the noise', () => {
    // Act: ps36's reader is the lowest cell at 32 and 64 threads, within this run's noise at each.
    const { section } = analyzed(sharesRun());
    // Assert
    const line = section.answer!.lines.find((l) => l.startsWith('Read share'))!;
    expect(line).not.toMatch(/lowest cell|nothing in this run's tables explains/);
  });

  it('names the one step another run overlapped, from the host note’s window', () => {
    // Arrange: another run from 12 s to 17 s: inside the second step (10-18 s) only
    const { section } = analyzed(run(base, hostNote(12, 17)));
    // Act
    const line = section.answer!.lines.find((l) => l.startsWith('The other run on this machine'))!;
    const table = section.tables.find((t) => t.title.startsWith('Run order'))!;
    // Assert
    expect(line).toMatch(/overlapped one step: #2 ps4-reader t64 \(5 of its 8 s\); every other step ran before/);
    const col = table.head.indexOf('co-tenant s');
    expect(table.rows.map((r) => r[col])).toEqual(['0', '5', '0', '0', '0', '0']);
    // Without a host note: no sentence and no column.
    const plain = analyzed(run(base)).section;
    expect(plain.answer!.lines.some((l) => l.startsWith('The other run'))).toBe(false);
    expect(plain.tables.find((t) => t.title.startsWith('Run order'))!.head).not.toContain('co-tenant s');
    // The title names only the columns the table has.
    expect(table.title).toContain('and any other run on the machine');
    expect(plain.tables.find((t) => t.title.startsWith('Run order'))!.title).toBe(
      'Run order: every step as it ran, with the reader lag',
    );
  });

  it('lists every step, throughput steps too, in the order it ran with its reader lag', () => {
    // Arrange: the reader 2 s behind when the ps4-reader step starts
    const d = run(base);
    const data: RunData = {
      ...d,
      replicaLag: [{ cell_id: 'wf-r1', step_id: 'ps4-reader-t64', instance_id: 'r1', ts: at(11), lag_ms: 2000 }],
    };
    // Act
    const table = analyzed(data).section.tables.find((t) => t.title.startsWith('Run order'))!;
    // Assert
    expect(table.rows.map((r) => r[1])).toEqual([
      'ps4-writer t64',
      'ps4-reader t64',
      'ps4-2readers t32',
      'c-EVENTUAL t32',
      'c-SESSION t32',
      'c-GLOBAL t32',
    ]);
    expect(table.rows[1]![table.head.indexOf('reader lag at start s')]).toBe('2.00');
    expect(table.rows[0]![table.head.indexOf('reader lag at start s')]).toBe('not measured');
  });

  it('puts the readers summed against one reader at the same total threads', () => {
    // Act
    const { f, section } = analyzed(run(base));
    // Assert
    expect(f.scaleOut[0]!.vsSingle!.estimate).toBeCloseTo(450 / 360, 6);
    const table = section.tables.find((t) => t.title.startsWith('Scale-out: readers summed vs one reader'))!;
    expect(table.rows[0]![table.head.indexOf('readers/1 reader')]).toMatch(/^125% /);
    expect(section.findings.join(' ')).toMatch(
      /Against one reader at 64 threads \(its ps\*-reader step\): ps4-2readers 125%/,
    );
  });

  it('gives the average latency TPS’s interval where avg = threads / TPS, and no interval where it is not', () => {
    // Act
    const { f, section } = analyzed(run(base));
    // Assert: an interval on every average, its ratio the inverse of TPS's with the flipped verdict
    for (const c of f.consistency) expect(c.avgMs.interval).not.toBeNull();
    const global = f.consistency.find((c) => c.level === 'GLOBAL')!;
    expect(global.tpsCost!.direction).toBe('lower');
    expect(global.avgCost!.direction).toBe('higher');
    expect(global.avgCost!.estimate).toBeCloseTo(2, 6);
    const chart = section.charts.find((c) => c.id === 'fwd-consistency')!;
    expect(chart.title).toBe('Latency by consistency level, with 95% intervals');
    // An average that is not threads / TPS gets no borrowed interval, and the chart title says so.
    const off = run(base.map((p) => (p.workload === 'c-GLOBAL' ? { ...p, avgMs: 900 } : p)));
    const g2 = analyzed(off);
    expect(g2.f.consistency.find((c) => c.level === 'GLOBAL')!.avgMs.interval).toBeNull();
    expect(g2.section.charts.find((c) => c.id === 'fwd-consistency')!.title).toMatch(/where the table shows one/);
  });

  it('opens the answer tables with the study’s findings against this run, open on the page', () => {
    // Act
    const report = buildReport(run(base), prices);
    const html = renderHtml(report);
    // Assert
    const t = report.answer!.tables[0]!;
    expect(t.title).toBe('What the study found, and this run');
    // Open by default: a reader who does not click still sees how the run relates to the study.
    expect(t.folded).not.toBe(true);
    expect(html).not.toContain('<details class="more"><summary>What the study found, and this run</summary>');
    expect(t.head).toEqual(['the study found', 'this run', 'verdict']);
    const cells = t.rows.map((r) => r[1]!).join(' | ');
    expect(cells).toMatch(/summed over the writer 150%/);
    expect(cells).toMatch(/MariaDB has no write forwarding/);
    // Its figures are the other tables' at their rounding.
    const others = [...report.answer!.tables.slice(1), ...report.sections.flatMap((s) => s.tables)]
      .flatMap((x) => x.rows.flat())
      .join(' ');
    for (const n of cells.match(/\d+(\.\d+)?%/g) ?? []) expect(others).toContain(n);
  });
});
