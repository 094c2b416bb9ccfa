/**
 * JudgeRound on step rows planted in a lake with a known truth: the Task reads the round's rows, judges
 * each question and answers continue or stop, with what it decided written back for FinishRun and the
 * report.
 */
import type { RunContext } from '../../core/backend';
import { lakeKeys, type StepRow } from '../../core/lake/rows';
import { judgeRounds } from '../../core/rounds/judge';
import {
  judgeRoundTask,
  questionsResolvedText,
  type RoundsConfig,
  type RoundsJudged,
} from '../../core/workflow/tasks/judge-round';
import type { TaskDeps } from '../../core/workflow/tasks/types';
import { InProcessBenchBackend } from '../../bench/in-process-backend';
import { stepRow } from '../helpers/lake-fixtures';

const run: RunContext = {
  runId: 'run-judge',
  specName: 'judge-unit',
  backend: 'local',
  region: 'us-east-1',
  engineVersion: '3.10.4',
  dt: '2024-05-01',
  ttlHours: 1,
};

const config = (over: Partial<RoundsConfig> = {}): RoundsConfig => ({
  questions: [{ id: 'b-vs-a-tps', baseline: 'a', candidate: 'b', metric: 'tps', horizons: [5] }],
  minRounds: 2,
  maxRounds: 6,
  confidence: 0.95,
  roundUsd: [3, 3, 3, 3, 3, 3],
  items: [
    [0, 1],
    [2, 3],
    [4, 5],
    [6, 7],
    [8, 9],
    [10, 11],
  ],
  hourlyUsd: { a: 1, b: 1 },
  ...over,
});

/** Rounds 1..n of two steps per variant; b's TPS is `ratio` of a's, with a small planted per-round wobble. */
function plantedRows(rounds: number, ratio: number): StepRow[] {
  const wobble = [1, 1.004, 0.997, 1.002, 0.999, 1.003];
  return Array.from({ length: rounds }, (_, i) => i + 1).flatMap((repeat) =>
    ['ro-t4', 'rw-t4'].flatMap((step) => [
      stepRow({ run_id: run.runId, variant: 'a', step_id: step, repeat, tps: 1000 }),
      stepRow({ run_id: run.runId, variant: 'b', step_id: step, repeat, tps: 1000 * ratio * wobble[repeat - 1]! }),
    ]),
  );
}

async function judged(rows: readonly StepRow[], round: number, over: Partial<RoundsConfig> = {}) {
  const backend = new InProcessBenchBackend();
  await backend.lake.put(lakeKeys.workflow.rounds(run.runId), JSON.stringify(config(over)));
  const prefix = lakeKeys.runTablePrefix('steps', run.dt, run.runId);
  await backend.lake.put(`${prefix}part-0.jsonl`, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const deps = { backend, judgeRounds } as unknown as TaskDeps;
  const output = await judgeRoundTask(deps, { run, round, maxConcurrency: 1 });
  const record = JSON.parse((await backend.lake.get(lakeKeys.workflow.roundsJudged(run.runId)))!) as RoundsJudged;
  return { output, record };
}

describe('JudgeRound on planted lake rows', () => {
  it('stops once a clear 80% difference is resolved, at the minimum rounds, and says so', async () => {
    // Act
    const { output, record } = await judged(plantedRows(2, 0.8), 2);

    // Assert
    expect(output.decision).toBe('stop');
    expect(output.items).toEqual([]);
    expect(record).toMatchObject({ rounds: 2, decision: 'stop', reason: 'resolved', spentUsd: 6 });
    expect(record.questions[0]!.ratio).toBeCloseTo(0.8, 2);
    expect(record.questions[0]!.upper).toBeLessThan(0.95);
    const summary = /^round 2 of 2-6: b-vs-a-tps 80\.\d% .* resolved; stopped: every question resolved$/;
    expect(output.summary).toMatch(summary);
  });

  it('runs another round, with the next round items and price, while the minimum is not reached', async () => {
    // Act
    const { output, record } = await judged(plantedRows(1, 0.8), 1);

    // Assert
    expect(output).toMatchObject({ decision: 'continue', round: 2, items: [2, 3] });
    expect(record).toMatchObject({ rounds: 1, decision: 'continue', nextRoundUsd: 3 });
    expect(output.summary).toContain('next round $3.00');
  });

  it('keeps going when the truth sits on a horizon, and stops at the maximum without calling a side', async () => {
    // Act
    const middle = await judged(plantedRows(3, 0.95), 3);
    const last = await judged(plantedRows(6, 0.95), 6);

    // Assert
    expect(middle.output.decision).toBe('continue');
    expect(middle.record.questions[0]!.resolved).toBe(false);
    expect(last.output.decision).toBe('stop');
    expect(last.record).toMatchObject({ reason: 'max-rounds', rounds: 6 });
    expect(last.record.questions[0]!.lower).toBeLessThan(0.95);
    expect(last.record.questions[0]!.upper).toBeGreaterThan(0.95);
  });

  it("names each question in the manifest's count, with the bounds it asks about", async () => {
    // Act: the truth sits on the 95% bound, so after 3 rounds the question is open
    const { record } = await judged(plantedRows(3, 0.95), 3);
    const text = questionsResolvedText(record.questions);

    // Assert: a reader learns which question and what "resolved" asks, not only "0 of 1"
    expect(text).toBe("0 of 1 question resolved (b-vs-a-tps: is the ratio's interval clear of 95% and of 105%?)");
  });

  it('stops before a round that would pass the budget', async () => {
    // Act
    const { output, record } = await judged(plantedRows(2, 0.95), 2, { budgetUsd: 8 });

    // Assert
    expect(output.decision).toBe('stop');
    expect(record.reason).toBe('budget');
  });

  it('reads only the rows of rounds run so far and of ok steps', async () => {
    // Arrange: a failed step of b in round 2 with an absurd TPS, and a planted round 3 not yet judged.
    const rows = [
      ...plantedRows(2, 0.8),
      stepRow({ run_id: run.runId, variant: 'b', step_id: 'ro-t8', repeat: 2, tps: 9e6, status: 'failed' }),
      ...plantedRows(3, 0.5).filter((r) => r.repeat === 3),
    ];

    // Act
    const { record } = await judged(rows, 2);

    // Assert
    expect(record.questions[0]!.ratio).toBeCloseTo(0.8, 2);
  });
});
