/**
 * What else differs between S3's writer and reader steps on a local run, from planted rows: the emulation's
 * split transaction (the writer's deadlocks), the reader lag each step started at, the fixed step order,
 * and the one explanation of EVENTUAL's figures.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { RunData } from '../../core/report/load';
import type { StepResult } from '../../core/lake/results';
import { makeContext } from '../../core/report/sections';
import { analyzeForwarding, forwardingSection } from '../../core/report/studies/forwarding';
import { buildReport } from '../../core/report/report';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));
const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();

interface Planned {
  readonly workload: string;
  readonly target: string;
  readonly threads: number;
  readonly tps: number;
  readonly test?: string;
  readonly options?: Record<string, unknown>;
  /** The writer instance's Deadlocks/s over the step. */
  readonly deadlocks?: number;
  /** The reader lag when the step started, ms. */
  readonly lagMs?: number;
  /** The writer's CommitThroughput/s: its plain mean and its mean over the seconds the load filled. */
  readonly commits?: { readonly avg: number; readonly steady: number };
  readonly extra?: Partial<StepResult>;
}

const psOptions = (n: number) => ({ range_selects: false, point_selects: n });
const spec = {
  name: 'fwd-local',
  variants: [],
  workloads: [
    { name: 'rw-writer', test: 'oltp_read_write', threads: [32, 128], target: 'writer' },
    { name: 'rw-reader', test: 'oltp_read_write', threads: [32, 128], target: 'reader' },
    { name: 'wo-writer', test: 'oltp_write_only', threads: [32], target: 'writer' },
    { name: 'wo-reader', test: 'oltp_write_only', threads: [32], target: 'reader' },
    ...[4, 36].flatMap((n) => [
      { name: `ps${n}-writer`, test: 'oltp_read_write', threads: [64], target: 'writer', options: psOptions(n) },
      {
        name: `ps${n}-2readers`,
        test: 'oltp_read_write',
        threads: [32],
        target: 'all-readers',
        clients: 2,
        options: psOptions(n),
      },
    ]),
    ...['EVENTUAL', 'SESSION', 'GLOBAL'].map((level) => ({
      name: `c-${level}`,
      script: 'rw_consistency.lua',
      threads: [32],
      target: 'reader',
      options: { consistency: level },
    })),
  ],
} as never;

/** One repeat each, 10 s apart in the order given, per-interval TPS that wobble a little; a local run. */
function run(planned: readonly Planned[]): RunData {
  const steps: StepResult[] = planned.map((p, i) =>
    stepResult({
      variant: 'wf',
      step_id: `${p.workload}-t${p.threads}`,
      workload: p.workload,
      target: p.target,
      threads: p.threads,
      tps: p.tps,
      lat_avg_ms: (p.threads * 1000) / p.tps,
      lat_pct: 95,
      started_at: at(i * 10),
      ended_at: at(i * 10 + 8),
      ...(p.test ? { test: p.test } : {}),
      ...(p.options ? { options: p.options } : {}),
      ...p.extra,
    }),
  );
  const intervals = new Map(
    steps.map((s) => [
      `${s.cell_id}/${s.step_id}`,
      Array.from({ length: 40 }, (_, t) => ({
        cell_id: s.cell_id,
        step_id: s.step_id,
        t: t + 1,
        tps: s.tps! * (1 + 0.03 * Math.sin(t)),
        qps: 0,
        lat_pct_ms: (s.lat_pct_ms ?? 10) * (1 + 0.03 * Math.cos(t)),
        errors_per_s: 0,
      })),
    ]),
  );
  const d = runData(steps, spec);
  return {
    ...d,
    intervals,
    run: { ...d.run, backend: 'local' as const },
    metrics: planned.flatMap((p, i) => [
      ...(p.commits === undefined
        ? []
        : [
            {
              cell_id: steps[i]!.cell_id,
              step_id: steps[i]!.step_id,
              role: 'writer',
              instance_id: `${steps[i]!.cell_id}-writer`,
              metric: 'CommitThroughput',
              avg_value: p.commits.avg,
              steady_value: p.commits.steady,
              max_value: p.commits.steady * 1.1,
              samples: 9,
              source: 'local',
              partial: false,
            },
          ]),
      ...(p.deadlocks === undefined
        ? []
        : [
            {
              cell_id: steps[i]!.cell_id,
              step_id: steps[i]!.step_id,
              role: 'writer',
              instance_id: `${steps[i]!.cell_id}-writer`,
              metric: 'Deadlocks',
              avg_value: p.deadlocks,
              max_value: p.deadlocks * 2,
              samples: 8,
              source: 'local',
              partial: false,
            },
          ]),
    ]),
    replicaLag: planned.flatMap((p, i) =>
      p.lagMs === undefined
        ? []
        : [
            {
              cell_id: steps[i]!.cell_id,
              step_id: steps[i]!.step_id,
              instance_id: 'r1',
              ts: at(i * 10 + 1),
              lag_ms: p.lagMs,
            },
          ],
    ),
  };
}

const wo = { test: 'oltp_write_only' };
/** The study's fixed order: every writer step before its reader step; wo-writer started behind, wo-reader not. */
const planted: Planned[] = [
  { workload: 'rw-writer', target: 'writer', threads: 32, tps: 1237, deadlocks: 0.25, lagMs: 0 },
  { workload: 'rw-writer', target: 'writer', threads: 128, tps: 994, deadlocks: 9.65, lagMs: 10 },
  { workload: 'rw-reader', target: 'reader', threads: 32, tps: 1180, deadlocks: 0, lagMs: 280 },
  { workload: 'rw-reader', target: 'reader', threads: 128, tps: 1177, deadlocks: 0.06, lagMs: 820 },
  { workload: 'wo-writer', target: 'writer', threads: 32, tps: 3690, deadlocks: 33.9, lagMs: 2680, ...wo },
  { workload: 'wo-reader', target: 'reader', threads: 32, tps: 3604, deadlocks: 23.28, lagMs: 20, ...wo },
];

function analyzed(data: RunData) {
  const f = analyzeForwarding(makeContext(data, prices))!;
  const section = forwardingSection(f);
  return { f, section, answer: section.answer!.lines.join('\n') };
}

describe("S3's confounds on a local run", () => {
  it("puts the writer's own commit ratio (seconds the load filled) beside each TPS ratio, in the tables", () => {
    // Arrange: the plain means read the reader steps low (their load starts late in the window); the steady
    // means agree with sysbench: 1,184 / 1,247 = 95% at t32, 1,192 / 989 = 121% at t128.
    const counted = planted.map((p, i) => ({
      ...p,
      commits: [
        { avg: 1218, steady: 1247 },
        { avg: 966, steady: 989 },
        { avg: 1063, steady: 1184 },
        { avg: 1008, steady: 1192 },
        { avg: 3334, steady: 3707 },
        { avg: 2726, steady: 3606 },
      ][i]!,
    }));
    // Act
    const { answer, section } = analyzed(run(counted));
    // Assert
    // The Answer's sentences quote sysbench's ratios once; the server's stand in the two tables.
    const rw = answer.split('\n').find((l) => l.startsWith('Reader over'))!;
    expect(rw).toMatch(/rw 95%, 118%: /);
    expect(answer).not.toMatch(/commits\/s give/);
    const control = answer.split('\n').find((l) => l.startsWith('Write-only'))!;
    expect(control).toMatch(/wo 98%, -: /);
    const study = section.answer!.tables.find((t) => t.title.startsWith('What the study found'))!;
    const rwRow = study.rows.find((r) => r[0]!.startsWith('read-write'))!;
    expect(rwRow[1]).toMatch(/t128 118% higher in this run\* \(server 121%\)/);
    const byThreads = section.answer!.tables.find((t) => t.title.endsWith('TPS by threads'))!;
    expect(byThreads.head).toContain("writer's own commits/s, reader/writer (reader step / writer step)");
    // Each ratio with the two steady counts it divides, so the column can be checked.
    expect(byThreads.rows.map((r) => r[5])).toEqual([
      '95% (1,184 / 1,247)',
      '121% (1,192 / 989)',
      '97% (3,606 / 3,707)',
    ]);
  });

  it('says the emulation splits the transaction and cites the writer deadlocks by the rw verdict', () => {
    // Act
    const { answer } = analyzed(run(planted));
    // Assert
    const rw = answer.split('\n').find((l) => l.startsWith('Reader over'))!;
    expect(rw).toMatch(/rw t128 higher \(interval clear of 100%\)/);
    expect(rw).toMatch(
      /The emulation splits each transaction: its reads run on the reader, its writes in a transaction/,
    );
    expect(rw).toMatch(/writer deadlocks\/s, writer step vs reader step: t32 0\.25 vs 0\.00, t128 9\.65 vs 0\.06\)/);
    expect(rw).toMatch(/not forwarding, can explain a reader ahead/);
  });

  it('does not call the control pure noise when its steps started at different lags', () => {
    // Act
    const { answer } = analyzed(run(planted));
    // Assert
    const control = answer.split('\n').find((l) => l.startsWith('Write-only'))!;
    expect(control).not.toMatch(/noise alone/);
    expect(control).toMatch(
      /the reader was 2\.68 s behind when the writer steps started, 0\.02 s for the reader steps/,
    );
    expect(control).toMatch(/writer deadlocks\/s: t32 33\.90 vs 23\.28/);
    expect(control).toMatch(/carries the step order as well as the noise/);
  });

  it('names the fixed writer-then-reader order as a confound, in the Answer and under the run order', () => {
    // Act
    const { answer, section } = analyzed(run(planted));
    const interleaved = analyzed(run([planted[0]!, planted[2]!, planted[3]!, planted[1]!])).answer;
    // Assert
    expect(answer).toMatch(/Every writer step ran before its reader step \(the order was fixed, not interleaved\)/);
    expect(interleaved).not.toMatch(/Every writer step ran before its reader step/);
    const note = section.tables.find((t) => t.title.startsWith('Run order'))!.notes!.join(' ');
    expect(note).not.toMatch(/A writer step reads no replica/);
    expect(note).toMatch(/takes CPU from the writer, so it can slow a writer step too/);
  });

  it('gives EVENTUAL started behind one explanation: the order may slow it, its stale share is the emulation', () => {
    // Arrange: EVENTUAL 0.83 s behind at its start, every read-back stale; SESSION and GLOBAL drained, none stale.
    const levels: Planned[] = ['EVENTUAL', 'SESSION', 'GLOBAL'].map((level, i) => ({
      workload: `c-${level}`,
      target: 'reader',
      threads: 32,
      tps: [1078, 947, 906][i]!,
      options: { consistency: level },
      lagMs: [830, 10, 10][i]!,
      extra: { stale_reads: i === 0 ? 99 : 0, read_back_checks: 100 },
    }));
    // Act
    const { answer } = analyzed(run(levels));
    // Assert
    const line = answer.split('\n').find((l) => l.includes('Reader lag'))!;
    const lag = line.slice(line.indexOf('Reader lag'));
    expect(lag).not.toMatch(/not its latency/);
    expect(lag).not.toMatch(/its stale reads.* may come from the order/);
    expect(lag).toMatch(/EVENTUAL started with the replica still behind .*: its latency, and each level's difference/);
    expect(lag).toMatch(/EVENTUAL's stale share \(99\.00%\) is how the emulation serves EVENTUAL/);
    // Its lag stayed up through the step (its one datapoint 0.83 s): it may be the level's own, not the order's.
    expect(lag).toMatch(/and stayed behind through its step \(0\.83 s mean; with no wait nothing throttles its writes/);
    expect(lag).toMatch(/from the order the steps ran in or from the level, which this run cannot tell apart/);
    // The average is threads / TPS here: it restates the TPS ratio, so the Answer leaves it to the table.
    expect(answer).not.toMatch(/ms average/);
  });

  it("answers in one line first: where the reader was ahead and behind, from the tables' directions", () => {
    // Act
    const { answer } = analyzed(run(planted));
    // Assert: rw t128 clear of 100% above (1,177 vs 994), rw t32 below (1,180 vs 1,237); one repeat.
    const first = answer.split('\n')[0]!;
    expect(first).toMatch(/^In this run the reader was ahead of the writer only for rw at 128 threads; behind for rw/);
    expect(first).toMatch(
      /; behind for rw at 32 threads: one repeat, so none of it is resolved beyond run-to-run noise/,
    );
  });

  it('names the scale-out where its readers summed were ahead of the writer in the one-line answer', () => {
    // Arrange: the planted rw pairs, and 2 readers x 32 at 50:50 clear of the writer at 64 (1,300 vs 1,000).
    const ps = { range_selects: false, point_selects: 4 };
    const steps: Planned[] = [
      ...planted,
      { workload: 'ps4-writer', target: 'writer', threads: 64, tps: 1000, options: ps },
      {
        workload: 'ps4-2readers',
        target: 'all-readers',
        threads: 32,
        tps: 1300,
        options: ps,
        extra: { clients: 2, ok_clients: 2 },
      },
    ];
    // Act
    const first = analyzed(run(steps)).answer.split('\n')[0]!;
    // Assert
    expect(first).toMatch(/^In this run the reader was ahead of the writer only for rw at 128 threads, and 2 readers/);
    expect(first).toContain('2 readers summed (scale-out) at 50:50');
  });

  it("names the rw pairs' start lags as the step order, as for the control", () => {
    // Act
    const { answer } = analyzed(run(planted));
    // Assert: rw-writer steps started at 0.00 / 0.01 s, rw-reader steps at 0.28 / 0.82 s.
    const rw = answer.split('\n').find((l) => l.startsWith('Reader over'))!;
    expect(rw).toMatch(
      /Also its steps \(rw\) did not start alike: the reader was 0\.00 \/ 0\.01 s behind when the writer steps/,
    );
    expect(rw).toMatch(
      /0\.28 \/ 0\.82 s for the reader steps, so the ratio carries the step order as well as the noise/,
    );
  });
});

describe("S3's study table and scale-out against the study's claims", () => {
  const study = (data: RunData) => analyzed(data).section.answer!.tables.find((t) => t.title.startsWith('What the'))!;
  const row = (data: RunData, start: string) => study(data).rows.find((r) => r[0]!.startsWith(start))!;

  it("says under the table that the emulation splits each transaction, with the writer's deadlocks", () => {
    // Act
    const notes = study(run(planted)).notes!.join(' ');
    // Assert: rw t128's writer step deadlocked most (9.65/s against 0.06/s in its reader step).
    expect(notes).toContain('the emulation splits each reader transaction in two');
    expect(notes).toContain('(Aurora keeps one transaction)');
    expect(notes).toContain("(the writer's deadlocks/s at rw t128: 9.65 in the writer step, 0.06 in the reader step)");
  });

  it("answers the study's write-only latency claim with the control's p95s, as its table prints them", () => {
    // Arrange: the control's writer step at 18.28 ms p95, its reader step at 19.65 ms.
    const steps = planted.map((p) =>
      p.workload.startsWith('wo-')
        ? { ...p, extra: { lat_pct: 95, lat_pct_ms: p.target === 'writer' ? 18.28 : 19.65 } }
        : p,
    );
    // Act
    const latency = row(run(steps), 'write-only: the reader’s latency');
    // Assert
    expect(latency[1]).toBe('p95 ms writer vs reader: t32 18.28 vs 19.65');
    expect(latency[2]).toBe('not comparable (both steps send every write to the writer)');
  });

  it('gives each row a verdict: rw t128 ahead contradicts "behind above 32 threads"', () => {
    // Act
    const rw = row(run(planted), 'read-write');
    // Assert
    // t32 lower in this run contradicts "a little ahead at 32 threads or fewer"; t128 higher, "behind above".
    expect(rw[2]).toMatch(/^contradicts in this run at t32, t128 \(the emulation’s split transaction/);
    expect(row(run(planted), 'write-only')[2]).toBe('not comparable');
    // The verdict says it once; the cell says why.
    expect(row(run(planted), 'write-only')[1]).toMatch(/^locally both steps send every write to the writer/);
  });

  /** The three levels, EVENTUAL's wider tail (p99/p50 4) than GLOBAL's (2), EVENTUAL and GLOBAL at these lags. */
  const levels = (eventualLagMs: number, globalLagMs = 400): Planned[] =>
    ['EVENTUAL', 'SESSION', 'GLOBAL'].map((level, i) => ({
      workload: `c-${level}`,
      target: 'reader',
      threads: 32,
      tps: [1078, 947, 906][i]!,
      options: { consistency: level },
      lagMs: [eventualLagMs, 10, globalLagMs][i]!,
      extra: {
        lat_pct_ms: [69.29, 55.82, 54.83][i]!,
        lat_p50_ms: [27, 33, 36][i]!,
        lat_p99_ms: [108, 69, 72][i]!,
        stale_reads: i === 0 ? 99 : 0,
        read_back_checks: 100,
      },
    }));

  it('states the GLOBAL claim as the study made it, with average, tail and spread, and a verdict', () => {
    // Act
    const behind = row(run(levels(830)), 'consistency: GLOBAL');
    const drained = row(run(levels(10)), 'consistency: GLOBAL');
    // Assert: the study's claim is about variability, not GLOBAL being slower.
    expect(behind[0]).toBe(
      'consistency: GLOBAL’s query times vary with the replica’s lag; EVENTUAL’s, read locally, are stable',
    );
    // Each ratio as a share of EVENTUAL's figure, its verdict apart: never "79% lower", which reads as -79%.
    expect(behind[1]).toMatch(
      /^GLOBAL’s avg \d+% of EVENTUAL’s \([^)]+\), p95 79% of EVENTUAL’s \(lower in this run\*\);/,
    );
    expect(behind[1]).toMatch(/; p99\/p50 GLOBAL 2\.0×, EVENTUAL 4\.0×$/);
    expect(behind[1]).not.toMatch(/\d+% (higher|lower)/);
    expect(behind[2]).toBe('not comparable: EVENTUAL’s step started 0.83 s behind');
    expect(drained[2]).toBe('contradicts in this run (1 repeat)');
    // GLOBAL at a drained replica (0.01 s) had no lag for its times to vary with: the claim was not tested.
    expect(row(run(levels(830, 10)), 'consistency: GLOBAL')[2]).toBe(
      'not tested: GLOBAL’s step ran at 0.01 s lag at most',
    );
    // The spread is the consistency table's, at its rounding.
    const table = analyzed(run(levels(830))).section.answer!.tables.find((t) =>
      t.title.startsWith('Read consistency'),
    )!;
    expect(table.rows.map((r) => r[table.head.indexOf('p99/p50')])).toEqual(['4.0×', '2.1×', '2.0×']);
  });

  it('resolves no scale-out pattern when the readers were higher only at low shares, level above 70:30', () => {
    // Arrange: 2 readers x 32 against the writer at 64: ahead at 50:50, level at 90:10.
    const ps = (n: number) => ({ range_selects: false, point_selects: n });
    const steps: Planned[] = [4, 36].flatMap((n, i) => [
      { workload: `ps${n}-writer`, target: 'writer', threads: 64, tps: 1000, options: ps(n) },
      {
        workload: `ps${n}-2readers`,
        target: 'all-readers',
        threads: 32,
        tps: [1300, 1010][i]!,
        options: ps(n),
        extra: { clients: 2, ok_clients: 2 },
      },
    ]);
    // Act
    const { section } = analyzed(run(steps));
    // Assert
    const findings = section.findings.join(' ');
    expect(findings).toMatch(/The readers were higher in this run only at 50:50; the shares above 70:30 \(where/);
    expect(findings).toMatch(/are within this run's noise: no pattern over the read shares is resolved\./);
    expect(section.findings.join(' ')).not.toMatch(/opposite/);
    // Every share with its figure, grouped by its verdict: none left out of the list.
    expect(row(run(steps), 'scale-out')[1]).toMatch(
      /^summed over the writer: 50:50 130% higher in this run\*; 90:10 101% within this run's noise: no pattern/,
    );
    expect(row(run(steps), 'scale-out')[1]).not.toMatch(/opposite/);
  });
});

describe("S3's answer on a local run says each caveat once", () => {
  it('says once that 1 repeat cannot resolve the ratios, and keeps the emulation out of every heading', () => {
    // Arrange: rw and the control, then the three levels: three verdict lists from one repeat.
    const levels: Planned[] = ['EVENTUAL', 'SESSION', 'GLOBAL'].map((level, i) => ({
      workload: `c-${level}`,
      target: 'reader',
      threads: 32,
      tps: [1078, 947, 906][i]!,
      options: { consistency: level },
      extra: { lat_pct_ms: [69, 56, 55][i]! },
    }));
    // Act
    const { answer, section } = analyzed(run([...planted, ...levels]));
    // Assert
    expect(answer.match(/1 repeat cannot resolve/g)).toHaveLength(1);
    expect(answer).toMatch(/rw 95%, 118%: 1 repeat cannot resolve these or any difference below \(run 2\+ repeats/);
    expect(answer).toMatch(/wo 98%, -: in this run/);
    const titles = [...section.tables, ...section.answer!.tables, ...section.answer!.charts].map((t) => t.title);
    expect(titles.filter((t) => /by the emulation/.test(t))).toEqual([]);
    expect(answer).toMatch(/^In this run the reader was .*\. Locally no write is forwarded: .*\("reader" below means/);
  });

  it('keeps every finding in the Answer the page shows open, the lag with the levels it explains', () => {
    // Arrange: rw, the control and the three levels, EVENTUAL started behind.
    const levels: Planned[] = ['EVENTUAL', 'SESSION', 'GLOBAL'].map((level, i) => ({
      workload: `c-${level}`,
      target: 'reader',
      threads: 32,
      tps: [1078, 947, 906][i]!,
      options: { consistency: level },
      lagMs: [830, 10, 10][i]!,
    }));
    // Act
    const report = buildReport(run([...planted, ...levels]), prices);
    // Assert: nothing folded under "1 more finding"; the lag in the consistency bullet.
    expect(report.answer!.more).toBeUndefined();
    expect(report.answer!.lines.find((l) => l.startsWith('Consistency levels'))).toMatch(/ Reader lag at the start/);
  });
});

describe('the appendix of a one-repeat run', () => {
  it('says one repeat, without an order between repeats there are none of', () => {
    // Act
    const report = buildReport(run(planted), prices);
    // Assert
    const steps = report.meta.find(([k]) => k === 'steps')![1];
    expect(steps).toMatch(/, one repeat$/);
    expect(steps).not.toMatch(/order between repeats/);
  });
});
