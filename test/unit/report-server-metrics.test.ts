/**
 * The report's server-metrics section (core/report/server-metrics-section.ts) and the client-bound
 * flag in the A/B and sweep sections (core/report/sections.ts), from rows built in memory.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { RunData } from '../../core/report/load';
import { buildSections, makeContext } from '../../core/report/sections';
import { serverMetricsSection } from '../../core/report/server-metrics-section';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

type Metric = RunData['metrics'][number];
const metric = (over: Partial<Metric> & Pick<Metric, 'cell_id' | 'metric' | 'avg_value'>): Metric => ({
  step_id: 'rw',
  role: 'writer',
  instance_id: `${over.cell_id}-writer`,
  max_value: over.avg_value,
  samples: 5,
  source: 'cloudwatch',
  partial: false,
  ...over,
});

describe('serverMetricsSection', () => {
  it(
    'shows each latency, I/O and memory metric per step and role as the mean over repeats with its max, and ' +
      'names the highest latency',
    () => {
      // Arrange: two repeats of variant a, one of b; b's reader has a forwarding wait; CPU is not this section's.
      const steps = [
        stepResult({ variant: 'a', step_id: 'rw', repeat: 1 }),
        stepResult({ variant: 'a', step_id: 'rw', repeat: 2 }),
        stepResult({ variant: 'b', step_id: 'rw' }),
      ];
      const data: RunData = {
        ...runData(steps),
        metrics: [
          metric({ cell_id: 'a-r1', metric: 'CommitLatency', avg_value: 2, max_value: 3 }),
          metric({ cell_id: 'a-r2', metric: 'CommitLatency', avg_value: 4, max_value: 9 }),
          metric({ cell_id: 'b-r1', metric: 'CommitLatency', avg_value: 1.5, partial: true }),
          metric({ cell_id: 'a-r1', metric: 'FreeableMemory', avg_value: 2 * 2 ** 30 }),
          metric({
            cell_id: 'b-r1',
            metric: 'ForwardingReplicaReadWaitLatency',
            avg_value: 0.75,
            role: 'reader',
            instance_id: 'b-r1-reader-1',
          }),
          metric({ cell_id: 'a-r1', metric: 'CPUUtilization', avg_value: 50 }),
          metric({
            cell_id: 'a-r1',
            metric: 'VolumeWriteIOPs',
            avg_value: 4200,
            role: 'cluster',
            instance_id: 'a-r1-cluster',
          }),
        ],
      };
      // Act
      const section = serverMetricsSection(makeContext(data, prices))!;
      // Assert
      const table = section.tables[0]!;
      expect(table.head).toEqual([
        'variant',
        'step',
        'role',
        'CommitLatency ms',
        'ForwardingReplicaReadWaitLatency ms',
        'VolumeWriteIOPs /5 min',
        'FreeableMemory GiB',
      ]);
      expect(table.rows).toEqual([
        ['a', 'rw t8', 'cluster', '-', '-', '4,200 (max 4,200)', '-'],
        ['a', 'rw t8', 'writer', '3.00 (max 9.00)', '-', '-', '2.00 (max 2.00)'],
        ['b', 'rw t8', 'reader', '-', '0.75 (max 0.75)', '-', '-'],
        ['b', 'rw t8', 'writer', '1.50 (max 1.50) partial', '-', '-', '-'],
      ]);
      expect(section.findings).toEqual([
        'CommitLatency: highest at a rw t8 (writer), 3.00 ms on average over the step.',
        'ForwardingReplicaReadWaitLatency: highest at b rw t8 (reader), 0.75 ms on average over the step.',
      ]);
      expect(table.notes!.some((n) => n.startsWith('Not in this run: DMLLatency, SelectLatency'))).toBe(true);
    },
  );

  it('says what a local run could not measure, and is absent when no step has these metrics', () => {
    // Arrange
    const steps = [stepResult({ variant: 'a', step_id: 'rw' })];
    const local: RunData = {
      ...runData(steps),
      run: { ...runData(steps).run, backend: 'local' },
      metrics: [metric({ cell_id: 'a-r1', metric: 'ReadIOPS', avg_value: 120.4 })],
    };
    // Act
    const section = serverMetricsSection(makeContext(local, prices))!;
    const none = serverMetricsSection(makeContext(runData(steps), prices));
    // Assert
    expect(section.tables[0]!.rows).toEqual([['a', 'rw t8', 'writer', '120 (max 120)']]);
    expect(section.tables[0]!.notes!.find((n) => n.startsWith('Not measured locally'))).toMatch(
      /CommitLatency \(MariaDB keeps no statement durations/,
    );
    expect(none).toBeNull();
  });
});

describe('the server-metrics section’s throughput and locks', () => {
  const steps = [
    stepResult({ variant: 'a', step_id: 'rw', repeat: 1 }),
    stepResult({ variant: 'a', step_id: 'rw', repeat: 2 }),
    stepResult({ variant: 'b', step_id: 'rw' }),
  ];

  it('shows Select/DML/Commit throughput, deadlocks and the buffer cache hit ratio per variant, with units', () => {
    // Arrange: a has both repeats' counters and a latency; b has commits and deadlocks only.
    const data: RunData = {
      ...runData(steps),
      metrics: [
        metric({ cell_id: 'a-r1', metric: 'CommitLatency', avg_value: 2 }),
        metric({ cell_id: 'a-r1', metric: 'SelectThroughput', avg_value: 1000, max_value: 1200 }),
        metric({ cell_id: 'a-r2', metric: 'SelectThroughput', avg_value: 2000, max_value: 2500 }),
        metric({ cell_id: 'a-r1', metric: 'DMLThroughput', avg_value: 300 }),
        metric({ cell_id: 'a-r1', metric: 'CommitThroughput', avg_value: 100 }),
        metric({ cell_id: 'a-r1', metric: 'BufferCacheHitRatio', avg_value: 99.5, max_value: 100 }),
        metric({ cell_id: 'b-r1', metric: 'CommitThroughput', avg_value: 80, partial: true }),
        metric({ cell_id: 'b-r1', metric: 'Deadlocks', avg_value: 0.05, max_value: 1 }),
      ],
    };
    // Act
    const section = serverMetricsSection(makeContext(data, prices))!;
    // Assert: the latency table first, unchanged; the counters in a table of their own.
    expect(section.tables.map((t) => t.title)).toEqual([
      'Server metrics per step and instance role',
      'Server statement and commit rates, deadlocks and buffer cache hits per step and instance role',
    ]);
    const table = section.tables[1]!;
    expect(table.head).toEqual([
      'variant',
      'step',
      'role',
      'SelectThroughput /s',
      'DMLThroughput /s',
      'CommitThroughput /s',
      'Deadlocks /s',
      'BufferCacheHitRatio %',
    ]);
    expect(table.rows).toEqual([
      ['a', 'rw t8', 'writer', '1,500 (max 2,500)', '300 (max 300)', '100 (max 100)', '-', '99.50 (max 100.00)'],
      ['b', 'rw t8', 'writer', '-', '-', '80 (max 80) partial', '0.05 (max 1.00)', '-'],
    ]);
  });

  it('is the whole section when the lake has only these, and absent when it has none of them', () => {
    // Arrange
    const onlyCounters: RunData = {
      ...runData(steps),
      metrics: [metric({ cell_id: 'a-r1', metric: 'CommitThroughput', avg_value: 100 })],
    };
    const onlyLatency: RunData = {
      ...runData(steps),
      metrics: [metric({ cell_id: 'a-r1', metric: 'CommitLatency', avg_value: 2 })],
    };
    // Act
    const counters = serverMetricsSection(makeContext(onlyCounters, prices))!;
    const latency = serverMetricsSection(makeContext(onlyLatency, prices))!;
    // Assert
    expect(counters.tables).toHaveLength(1);
    expect(counters.tables[0]!.head).toEqual(['variant', 'step', 'role', 'CommitThroughput /s']);
    expect(counters.tables[0]!.rows).toEqual([['a', 'rw t8', 'writer', '100 (max 100)']]);
    expect(latency.tables.map((t) => t.title)).toEqual(['Server metrics per step and instance role']);
  });

  it('keeps what the latency table leaves out under the counters’ table, so the section stays evidence', () => {
    // Arrange: ReadIOPS read 0 throughout, so it gets a line rather than a column.
    const data: RunData = {
      ...runData(steps),
      metrics: [
        metric({ cell_id: 'a-r1', metric: 'ReadIOPS', avg_value: 0 }),
        metric({ cell_id: 'a-r1', metric: 'CommitThroughput', avg_value: 100 }),
      ],
    };
    // Act
    const section = serverMetricsSection(makeContext(data, prices))!;
    // Assert
    expect(section.leftOut).toBeUndefined();
    expect(section.tables).toHaveLength(1);
    expect(section.tables[0]!.notes).toContain(
      'ReadIOPS read 0 in every datapoint of every step (the data fits in the buffer pool: no read reached ' +
        'storage), so no column for it.',
    );
  });
});

describe('the server section of a local run says what it shows', () => {
  // A read-only step (reads, no writes, no BEGIN/COMMIT) and an autocommit insert step (writes, no BEGIN/COMMIT).
  const steps = [
    stepResult({ variant: 'a', step_id: 'ro', workload: 'ro', reads: 60_000, writes: 0, other: 0, total_time_s: 60 }),
    stepResult({ variant: 'a', step_id: 'ins', workload: 'ins', reads: 0, writes: 30_000, other: 0, total_time_s: 60 }),
  ];
  const local = (metrics: RunData['metrics']): RunData => ({
    ...runData(steps),
    run: { ...runData(steps).run, backend: 'local' },
    metrics,
  });
  const m = (step_id: string, name: Metric['metric'], avg_value: number, max_value = avg_value): Metric =>
    metric({ cell_id: 'a-r1', step_id, metric: name, avg_value, max_value, source: 'local' });
  const metrics = [
    m('ro', 'SelectThroughput', 950, 1100),
    m('ro', 'DMLThroughput', 2, 16),
    m('ro', 'CommitThroughput', 0),
    m('ro', 'Deadlocks', 0),
    m('ro', 'BufferCacheHitRatio', 100),
    m('ins', 'SelectThroughput', 0),
    m('ins', 'DMLThroughput', 480, 520),
    m('ins', 'CommitThroughput', 0),
    m('ins', 'Deadlocks', 0.5, 2),
    m('ins', 'BufferCacheHitRatio', 100),
  ];

  it('titles it by the counters shown, not by latencies and memory it did not measure', () => {
    // Act
    const section = serverMetricsSection(makeContext(local(metrics), prices))!;
    // Assert
    // The deadlocks column is shown here; a title never promises "locks" it only notes.
    expect(section.title).toBe('Server statement rates and deadlocks');
    expect(section.question).toBe('What did the server itself see: statement and commit rates and deadlocks?');
  });

  it('marks counters of statements the step never sent n/a and drops a column with nothing else to say', () => {
    // Act
    const table = serverMetricsSection(makeContext(local(metrics), prices))!.tables[0]!;
    // Assert: CommitThroughput is n/a everywhere (no BEGIN/COMMIT), BufferCacheHitRatio 100 everywhere.
    expect(table.head).toEqual(['variant', 'step', 'role', 'SelectThroughput /s', 'DMLThroughput /s', 'Deadlocks /s']);
    expect(table.rows).toEqual([
      ['a', 'ro t8', 'writer', '950 (max 1,100)', 'n/a', 'n/a'],
      ['a', 'ins t8', 'writer', 'n/a', '480 (max 520)', '0.50 (max 2.00)'],
    ]);
    const notes = table.notes!.join('\n');
    expect(notes).toContain('MariaDB counts only COMMIT statements, not autocommits');
    expect(notes).toContain('no step sent the statements CommitThroughput counts');
    expect(notes).toContain('BufferCacheHitRatio read 100.00% (max 100.00%) at every step');
  });

  it('says a Deadlocks column with nothing to show had no writes that could deadlock, not "statements"', () => {
    // Arrange: the insert step's deadlock counter missing, the read-only step's n/a (no writes).
    const noDeadlocks = metrics.filter((x) => !(x.step_id === 'ins' && x.metric === 'Deadlocks'));
    // Act
    const table = serverMetricsSection(makeContext(local(noDeadlocks), prices))!.tables[0]!;
    // Assert
    const notes = table.notes!.join('\n');
    expect(notes).toContain('no step ran the writes that could deadlock');
    expect(notes).not.toContain('statements Deadlocks counts');
  });

  it('keeps an autocommit step’s CommitThroughput on AWS, where every commit is counted', () => {
    // Act
    const counted = metrics.map((x) =>
      x.step_id === 'ins' && x.metric === 'CommitThroughput' ? { ...x, avg_value: 480, max_value: 520 } : x,
    );
    const aws: RunData = { ...runData(steps), metrics: counted };
    const table = serverMetricsSection(makeContext(aws, prices))!.tables[0]!;
    // Assert
    expect(table.head).toContain('CommitThroughput /s');
    expect(table.notes!.join(' ')).not.toContain('sampling window');
  });
});

describe('client-bound steps in every section', () => {
  /** Variants a and b at the thread counts given, two repeats each; b's 4-thread repeat 2 saturated its client. */
  const run = (threadCounts: number[]) =>
    runData(
      ['a', 'b'].flatMap((variant) =>
        threadCounts.flatMap((threads) =>
          [1, 2].map((repeat) =>
            stepResult({
              variant,
              step_id: `rw-t${threads}`,
              workload: 'rw',
              threads,
              repeat,
              tps: 100 * threads + repeat,
              saturated_clients: variant === 'b' && threads === 4 && repeat === 2 ? 1 : 0,
            }),
          ),
        ),
      ),
    );

  it('are flagged in the A/B table and named in its findings, left out by default or kept when asked', () => {
    // Act
    const ab = buildSections(makeContext(run([4]), prices)).find((s) => s.id === 'ab')!;
    const kept = buildSections(makeContext(run([4]), prices, { includeSaturated: true })).find((s) => s.id === 'ab')!;
    // Assert
    const rows = ab.tables.flatMap((t) => t.rows).filter((r) => r[1] === 'b');
    expect(rows.map((r) => r[0])).toEqual(['rw t4 [client-bound 1/2, left out]']);
    expect(ab.findings).toContain(
      'Client-bound: b rw t4 (1 of 2 repeats): the client saturated its CPU, so those repeats measure the ' +
        'client, not the server; they are left out of the estimates and ratios here (aurora-bench report ' +
        '--include-saturated keeps them).',
    );
    expect(kept.findings.some((f) => f.endsWith('they are kept in the estimates here (--include-saturated).'))).toBe(
      true,
    );
  });

  it('are flagged at their point of a thread sweep and named in its findings', () => {
    // Act: a sweep needs at least 4 thread counts.
    const sweep = buildSections(makeContext(run([1, 2, 4, 8]), prices)).find((s) => s.id === 'sweep')!;
    // Assert
    expect(sweep.findings.some((f) => f.startsWith('Client-bound: b rw t4 (1 of 2 repeats)'))).toBe(true);
    const cells = sweep.tables.flatMap((t) => t.rows).flat();
    expect(cells.filter((c) => c.endsWith('[client-bound 1/2, left out]'))).toHaveLength(1);
  });
});

describe('the server throughput table with two readers', () => {
  it('gives each reader its own row, so an idle second reader does not halve the active one', () => {
    // Arrange: a single-reader step: reader-1 serves 16,000 selects/s, reader-2 only replicates.
    const data: RunData = {
      ...runData([stepResult({ variant: 'a', step_id: 'rw' })]),
      metrics: [
        metric({ cell_id: 'a-r1', metric: 'SelectThroughput', avg_value: 500 }),
        ...[16000, 0].map((v, i) =>
          metric({
            cell_id: 'a-r1',
            role: 'reader',
            instance_id: `a-r1-reader-${i + 1}`,
            metric: 'SelectThroughput',
            avg_value: v,
          }),
        ),
      ],
    };
    // Act
    const table = serverMetricsSection(makeContext(data, prices))!.tables.find((t) =>
      t.title.startsWith('Server statement'),
    )!;
    // Assert: 16,000 on its own row, never the 8,000 mean of the two readers.
    expect(table.rows).toEqual([
      ['a', 'rw t8', 'reader-1', '16,000 (max 16,000)'],
      ['a', 'rw t8', 'reader-2', '0 (max 0)'],
      ['a', 'rw t8', 'writer', '500 (max 500)'],
    ]);
  });
});
