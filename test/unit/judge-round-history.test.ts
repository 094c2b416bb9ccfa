/**
 * JudgeRound with a question against history: tonight's step rows planted in the run's lake, the
 * experiment's earlier runs planted in a local results lake (read by the local backend's
 * TaskDeps.historyLevels, core/regression/history-levels.ts, as `history` reads it). The Task stops
 * after one round when every series is quiet or moved, runs another while one is unclear, and runs
 * the maximum when there is no stable history yet, saying why in its round line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunContext } from '../../core/backend';
import { lakeKeys, type StepRow, type VerdictsRow } from '../../core/lake/rows';
import { localHistoryLevels, localJudge } from '../../core/regression/judge-local';
import { computeVerdictsTask } from '../../core/workflow/tasks/compute-verdicts';
import { historyBounds } from '../../core/rounds/history-test';
import { judgeRoundTask, type RoundsConfig, type RoundsJudged } from '../../core/workflow/tasks/judge-round';
import type { SeriesLevel } from '../../core/workflow/tasks/round-types';
import type { TaskDeps } from '../../core/workflow/tasks/types';
import { InProcessBenchBackend } from '../../bench/in-process-backend';
import { stepRow } from '../helpers/lake-fixtures';
import { nightlySpec, writeLakeRun } from '../helpers/regression-fixtures';

const run: RunContext = {
  runId: 'nightly-tonight',
  specName: 'nightly',
  backend: 'local',
  region: 'us-east-1',
  engineVersion: '3.10.4',
  dt: '2026-02-01',
  ttlHours: 1,
};

const config: RoundsConfig = {
  questions: [{ id: 'tps-vs-history', against: 'history', metric: 'tps' }],
  minRounds: 1,
  maxRounds: 3,
  confidence: 0.95,
  roundUsd: [1, 1, 1],
  items: [[0], [1], [2]],
  hourlyUsd: { r6g: 1 },
};

let lakeDir: string;
beforeEach(() => {
  lakeDir = mkdtempSync(join(tmpdir(), 'ab-judge-history-'));
});
afterEach(() => rmSync(lakeDir, { recursive: true, force: true }));

/** Twelve earlier nights around 1000 TPS (a fixed wobble of about 1.4%), one repeat each. */
function plantHistory(): void {
  for (let i = 0; i < 12; i++) {
    const startedAt = new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString();
    writeLakeRun(lakeDir, `nightly-${String(i).padStart(3, '0')}`, startedAt, [
      { tps: 1000 * (1 + 0.02 * Math.sin(i)) },
    ]);
  }
}

/** Tonight's rounds, one TPS each, of the same step as the history's. */
const tonight = (tps: readonly number[]): StepRow[] =>
  tps.map((v, k) =>
    stepRow({
      run_id: run.runId,
      variant: 'r6g',
      repeat: k + 1,
      cell_id: `r6g-r${k + 1}`,
      step_id: 'rw-t8-max',
      workload: 'rw',
      threads: 8,
      tps: v,
      dt: run.dt,
    }),
  );

async function judged(rows: readonly StepRow[], round: number, withReader = true, over: Partial<RoundsConfig> = {}) {
  const backend = new InProcessBenchBackend();
  await backend.lake.put(lakeKeys.workflow.rounds(run.runId), JSON.stringify({ ...config, ...over }));
  const prefix = lakeKeys.runTablePrefix('steps', run.dt, run.runId);
  await backend.lake.put(`${prefix}part-0.jsonl`, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const deps = {
    backend,
    ...(withReader ? { historyLevels: localHistoryLevels(lakeDir) } : {}),
  } as unknown as TaskDeps;
  const output = await judgeRoundTask(deps, { run, round, maxConcurrency: 1 });
  const record = JSON.parse((await backend.lake.get(lakeKeys.workflow.roundsJudged(run.runId)))!) as RoundsJudged;
  return { output, record };
}

/** The planted history's TPS level, as the reader gives it. */
async function tpsLevel(): Promise<NonNullable<SeriesLevel['level']>> {
  const levels = await localHistoryLevels(lakeDir)(run);
  return levels.find((l) => l.metric === 'tps')!.level!;
}

/** The TPS of one round whose z against the level is `z`. */
const tpsAtZ = (level: NonNullable<SeriesLevel['level']>, z: number): number =>
  Math.exp(level.logMean + z * level.logSd * Math.sqrt(1 + 1 / level.runs));

describe('historyLevels over a planted local lake', () => {
  it("gives each metric of the run's series its stable level, mean, sd and runs", async () => {
    // Arrange
    plantHistory();
    // Act
    const levels = await localHistoryLevels(lakeDir)(run);
    // Assert
    expect(levels.map((l) => l.metric).sort()).toEqual(['latency', 'qps', 'tps']);
    const tps = levels.find((l) => l.metric === 'tps')!;
    expect(tps).toMatchObject({ variant: 'r6g', workload: 'rw', threads: 8, rate: 0, target: 'writer' });
    expect(tps.level).toMatchObject({ runs: 12, df: 11 });
    expect(Math.exp(tps.level!.logMean)).toBeCloseTo(1000, -1);
    expect(tps.level!.logSd).toBeGreaterThan(0.01);
    expect(tps.level!.logSd).toBeLessThan(0.02);
  });

  it("counts the within-night spread of a history of two-repeat runs in one round's sd", async () => {
    // Arrange: every run's two repeats 3% either side of 1000, so the run means do not move at all.
    for (let i = 0; i < 12; i++) {
      const startedAt = new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString();
      writeLakeRun(lakeDir, `nightly-${String(i).padStart(3, '0')}`, startedAt, [{ tps: 1030 }, { tps: 970 }]);
    }
    // Act
    const level = await tpsLevel();
    // Assert: one repeat's log sd about its night's mean is 3%; the run means' sd alone is about 0.
    expect(level.logSd).toBeGreaterThan(0.028);
    expect(level.logSd).toBeLessThan(0.032);
  });

  it('leaves out the run being judged, and has nothing for an experiment without runs', async () => {
    // Arrange
    plantHistory();
    const before = await tpsLevel();
    writeLakeRun(lakeDir, run.runId, '2026-02-01T00:00:00.000Z', [{ tps: 500 }]);
    // Act / Assert
    expect(await tpsLevel()).toEqual(before);
    expect(await localHistoryLevels(join(lakeDir, 'empty'))(run)).toEqual([]);
  });
});

describe('JudgeRound against history on planted lake rows', () => {
  it('stops after one round when the series is quiet, and says why', async () => {
    // Arrange
    plantHistory();
    // Act
    const { output, record } = await judged(tonight([1003]), 1);
    // Assert
    expect(output).toMatchObject({ decision: 'stop', items: [] });
    expect(record).toMatchObject({ rounds: 1, reason: 'resolved', history: [{ call: 'quiet', rounds: 1 }] });
    expect(output.summary).toBe(
      'round 1 of 1-3: tps-vs-history: 1 series, 1 quiet; stopped: every series quiet or moved against its history',
    );
  });

  it('stops after one round when the series clearly moved, naming it', async () => {
    // Arrange
    plantHistory();
    // Act
    const { output, record } = await judged(tonight([800]), 1);
    // Assert
    expect(output.decision).toBe('stop');
    expect(record.history![0]).toMatchObject({ call: 'moved', series: 'rw t8 [r6g]' });
    expect(record.history![0]!.ratio).toBeCloseTo(0.8, 1);
    expect(output.summary).toMatch(/^round 1 of 1-3: tps-vs-history: 1 series, 1 MOVED \(rw t8 \[r6g\] 80\.\d%, z -/);
  });

  it('runs another round while the series is unclear, then the last look decides', async () => {
    // Arrange
    plantHistory();
    const level = await tpsLevel();
    const { futility, alarm } = historyBounds(1, level.df, { maxRounds: 3 });
    const grey = tpsAtZ(level, (futility + alarm) / 2);
    // Act
    const first = await judged(tonight([grey]), 1);
    const last = await judged(tonight([grey, grey, grey]), 3);
    // Assert
    expect(first.output).toMatchObject({ decision: 'continue', round: 2, items: [1] });
    expect(first.record.history![0]!.call).toBe('continue');
    expect(first.output.summary).toMatch(/1 unclear .*; next round \$1\.00$/);
    expect(last.output.decision).toBe('stop');
    expect(['quiet', 'moved']).toContain(last.record.history![0]!.call);
  });

  it('waits for the minimum rounds, and starts no round that would pass the budget', async () => {
    // Arrange
    plantHistory();
    const level = await tpsLevel();
    const { futility, alarm } = historyBounds(1, level.df, { maxRounds: 3 });
    // Act
    const quiet = await judged(tonight([1003]), 1, true, { minRounds: 2 });
    const grey = await judged(tonight([tpsAtZ(level, (futility + alarm) / 2)]), 1, true, { budgetUsd: 1.5 });
    // Assert
    expect(quiet.output.decision).toBe('continue');
    expect(quiet.record.history![0]!.call).toBe('quiet');
    expect(grey.record).toMatchObject({ decision: 'stop', reason: 'budget' });
    expect(grey.output.summary).toMatch(/stopped: the next round would pass budget\.maxUsd$/);
  });

  it('runs the maximum without a stable history yet, and says so', async () => {
    // Arrange: two earlier runs, fewer than the three a stable level needs.
    for (let i = 0; i < 2; i++)
      writeLakeRun(lakeDir, `nightly-00${i}`, `2026-01-0${i + 1}T00:00:00.000Z`, [{ tps: 1000 }], nightlySpec());
    // Act
    const first = await judged(tonight([1000]), 1);
    const last = await judged(tonight([1000, 1000, 1000]), 3);
    // Assert
    expect(first.output.decision).toBe('continue');
    expect(first.record.history![0]).toMatchObject({ call: 'no-history', why: expect.stringMatching(/2 stable/) });
    expect(last.output.decision).toBe('stop');
    expect(last.record.reason).toBe('max-rounds');
    expect(last.output.summary).toMatch(/stopped: at the maximum rounds: 1 series without a stable history yet/);
  });

  it('runs the maximum when the function reads no history, and says so', async () => {
    // Act
    const { output, record } = await judged(tonight([1000]), 1, false);
    // Assert
    expect(output.decision).toBe('continue');
    expect(record.history![0]).toMatchObject({ call: 'no-history', why: 'this function reads no history' });
  });
});

describe('ComputeVerdicts after rounds judged against history', () => {
  it("gives a series the rounds' call as its verdict, not the history's second opinion", async () => {
    // Arrange: tonight's one round in the grey zone, and a budget that allows no second round.
    plantHistory();
    const level = await tpsLevel();
    const { futility, alarm } = historyBounds(1, level.df, { maxRounds: 3 });
    const grey = tpsAtZ(level, (futility + alarm) / 2);
    writeLakeRun(lakeDir, run.runId, '2026-02-01T00:00:00.000Z', [{ tps: grey }]);
    const { record } = await judged(tonight([grey]), 1, true, { budgetUsd: 1.5 });
    const judgeRun = localJudge(lakeDir, () => new Date('2026-02-02T00:00:00.000Z'));
    const own = (await judgeRun(run)).find((v) => v.metric === 'tps')!;
    const backend = new InProcessBenchBackend();
    await backend.lake.put(lakeKeys.workflow.roundsJudged(run.runId), JSON.stringify(record));
    const deps = { backend, judgeRun } as unknown as TaskDeps;
    // Act
    const out = await computeVerdictsTask(deps, { run });
    // Assert: the history's own method calls it, the rounds did not; the table says what the run line said.
    expect(record.history![0]!.call).toBe('continue');
    expect(own.verdict).not.toBe('unknown');
    const rows = (await backend.lake.get(out.lakeKey))!
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as VerdictsRow);
    const tps = rows.find((v) => v.metric === 'tps')!;
    expect(tps).toMatchObject({ verdict: 'unknown', interval_low: null, interval_high: null });
    expect(tps.reason).toMatch(/^judged after 1 round against its stable history: \d+\.\d% of its level, z /);
    expect(tps.reason).toMatch(/still unclear at the last round/);
    expect(rows.find((v) => v.metric === 'qps')!.reason).not.toMatch(/judged after/);
  });
});
