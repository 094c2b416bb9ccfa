/**
 * Regression verdicts on real databases: twenty-two local runs (real MariaDB, real sysbench) of one
 * tiny write-only experiment, judged by `history` and `compare` as a user would. Runs 1-8 relax
 * durability on the writer (innodb_flush_log_at_trx_commit = 0 and sync_binlog = 0: a commit does
 * not wait for the redo log or the binlog to reach the disk), runs 9-14 make every commit durable
 * (1 and 1: an fsync of each per commit), runs 15-22 relax it again. The last durable run has three
 * repeats and the last two relaxed ones two, so that `compare` judges them from repeats.
 *
 * Why eight runs on each side of the six: a permutation test of a level that drops and comes back
 * (high, low, high) is weaker than of one step, because shuffles that put the low values together
 * at one end beat the observed split; with 8-6-8 the first split's p-value is far below the
 * history's significance for the TPS levels this machine measures.
 *
 * Aurora MySQL 3 lets a cluster parameter group set innodb_flush_log_at_trx_commit, after
 * innodb_trx_commit_allow_data_loss = 1 for a value other than 1, and only 0 stops a commit waiting
 * for its redo records (1 and 2 both wait on version 3): "Configuring how frequently the log
 * buffer is flushed", awsdocs/amazon-aurora-user-guide AuroraMySQL.BestPractices.FeatureRecommendations.
 * So those go in clusterParameters and pass the catalogue; sync_binlog is not modifiable on Aurora
 * (the parameter reference, in the catalogue), so it is a local-only what-if (localOnlyParameters),
 * applied by the local backend with SET GLOBAL.
 *
 * Prints what the history and compare say, and whether they say what the design expects (both
 * switches found at the right runs with the right sign, nothing inside the durable phase, the
 * identical latest runs within the noise, durable TPS well below relaxed); asserts nothing: the
 * levels of a shared two-core machine wander by 10-20% over minutes, so a gate on them fails on
 * good code. The statistical properties the verdicts rely on (false alarms, power, coverage) are
 * proved by seeded simulation instead (test/unit/regression-simulation.test.ts), with the noise
 * model fitted to the runs recorded here (bench/noise-model.ts).
 *
 * Run: `node dist/bench/regression-local.js [--record]` after `npm run build:dist`
 * (about 3 minutes alone on two cores). --record appends the figures to
 * bench/results/regression-local.json, beside the earlier recordings.
 */
import '../core/polyfills';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { LocalBackend } from '../core/backends/local/local-backend';
import { compareFromLake, historyFromLake } from '../core/cli/regression-command';
import { runLocal } from '../core/cli/run-local';
import { findRepoRoot } from '../core/cli/tool-info';
import { withLake } from '../core/lake/duckdb';
import type { Comparison } from '../core/regression/compare';
import type { History } from '../core/regression/history';
import { loadCompareSide } from '../core/regression/load';
import { fitNoiseModel, type RecordedRun } from './noise-model';

const REPO = findRepoRoot(__dirname);
const RESULTS = join(REPO, 'bench', 'results', 'regression-local.json');

const { values } = parseArgs({
  options: { record: { type: 'boolean', default: false }, 'within-run-s': { type: 'string', default: '60' } },
});
const WITHIN_RUN_S = Number(values['within-run-s']);

function experiment(durable: boolean, repeats: number, name = 'durability-history', durationS = 4): object {
  const relaxed = { innodb_trx_commit_allow_data_loss: 1, innodb_flush_log_at_trx_commit: 0 };
  return {
    name,
    engine: { version: '3.10.4' },
    variants: [
      {
        name: 'writer',
        instanceClass: 'db.t3.medium',
        readers: 0,
        clusterParameters: durable ? { innodb_flush_log_at_trx_commit: 1 } : relaxed,
        localOnlyParameters: { sync_binlog: durable ? 1 : 0 },
      },
    ],
    data: { tables: 1, tableSize: 1000 },
    defaults: { durationS, warmupS: 1, reportIntervalS: 1 },
    workloads: [{ name: 'write', test: 'oltp_write_only', threads: [4] }],
    repeats,
  };
}

/** The history's options as the former gate used them: see the printed notes for why. */
const HISTORY_OPTIONS = { permutations: 4999, significance: 0.05, predictionLevel: 0.999 };

interface Phase {
  readonly phase: 'relaxed' | 'durable';
  readonly specFile: string;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'ab-regression-'));
  const lakeDir = join(work, 'lake');
  const backend = new LocalBackend({ lakeDir, runRoot: join(work, 'runs'), repoRoot: REPO });
  try {
    const file = (name: string, durable: boolean, repeats: number): string => {
      const path = join(work, `${name}.json`);
      writeFileSync(path, JSON.stringify(experiment(durable, repeats)));
      return path;
    };
    const relaxed: Phase = { phase: 'relaxed', specFile: file('relaxed', false, 1) };
    const durable: Phase = { phase: 'durable', specFile: file('durable', true, 1) };
    const durableThrice: Phase = { phase: 'durable', specFile: file('durable-3-repeats', true, 3) };
    const relaxedTwice: Phase = { phase: 'relaxed', specFile: file('relaxed-2-repeats', false, 2) };
    const schedule: Phase[] = [
      ...Array<Phase>(8).fill(relaxed),
      ...Array<Phase>(5).fill(durable),
      durableThrice,
      ...Array<Phase>(6).fill(relaxed),
      ...Array<Phase>(2).fill(relaxedTwice),
    ];
    const started = Date.now();
    const runIds: string[] = [];
    for (const [i, p] of schedule.entries()) {
      const runId = `durability-${String(i + 1).padStart(2, '0')}`;
      const result = await runLocal({
        specFile: p.specFile,
        repoRoot: REPO,
        lakeDir,
        backend,
        serverVersion: null,
        runId,
      });
      if (result.status !== 'SUCCEEDED') throw new Error(`run ${runId} ended ${result.status}: ${result.cause ?? ''}`);
      runIds.push(runId);
      process.stdout.write(`${runId} ${p.phase} done (${Math.round((Date.now() - started) / 1000)} s)\n`);
    }
    // One longer relaxed step of another experiment (so the history above does not see it): its
    // per-interval values are what the within-run noise model is fitted to; a 4-second step's four
    // intervals are too few to estimate an autocorrelation from.
    const withinSpec = join(work, 'within-run.json');
    writeFileSync(withinSpec, JSON.stringify(experiment(false, 1, 'durability-within-run', WITHIN_RUN_S)));
    const within = await runLocal({
      specFile: withinSpec,
      repoRoot: REPO,
      lakeDir,
      backend,
      serverVersion: null,
      runId: 'within-run',
    });
    if (within.status !== 'SUCCEEDED') throw new Error(`run within-run ended ${within.status}: ${within.cause ?? ''}`);
    process.stdout.write(`within-run (${WITHIN_RUN_S} s step) done (${Math.round((Date.now() - started) / 1000)} s)\n`);
    const { history, same, worse, runs, withinRun } = await withLake(lakeDir, async (lake) => {
      const recorded: RecordedRun[] = [];
      for (const [i, runId] of runIds.entries()) {
        const side = await loadCompareSide(lake, runId);
        recorded.push({
          runId,
          phase: schedule[i]!.phase,
          repeats: side.steps.map((s) => ({
            tps: s.tps!,
            latencyMs: s.lat_pct_ms!,
            intervalTps: (side.intervals.get(`${s.cell_id}/${s.step_id}`) ?? []).map((x) => x.tps),
          })),
        });
      }
      const withinSide = await loadCompareSide(lake, 'within-run');
      const step = withinSide.steps[0]!;
      return {
        withinRun: (withinSide.intervals.get(`${step.cell_id}/${step.step_id}`) ?? []).map((x) => x.tps),
        runs: recorded,
        history: await historyFromLake(lake, 'durability-history', HISTORY_OPTIONS),
        same: await compareFromLake(lake, 'durability-21', 'durability-22', { level: 0.999 }),
        worse: await compareFromLake(lake, 'durability-21', 'durability-14'),
      };
    });
    const figures = summarise(runIds, runs, withinRun, history, same, worse);
    printFigures(figures);
    if (values.record)
      record({
        recordedAt: new Date().toISOString(),
        host: host(),
        wallS: Math.round((Date.now() - started) / 1000),
        ...figures,
      });
  } finally {
    await backend.cleanupAll({ includeLive: true });
    rmSync(work, { recursive: true, force: true });
  }
}

function host(): object {
  return { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version };
}

function summarise(
  runIds: readonly string[],
  runs: readonly RecordedRun[],
  withinRun: readonly number[],
  history: History,
  same: Comparison,
  worse: Comparison,
) {
  const metric = (name: string) => history.steps[0]!.metrics.find((m) => m.metric === name)!;
  const at = (runId: string): number => runIds.indexOf(runId);
  const points = (name: string) =>
    metric(name).changePoints.map((c) => ({
      run: at(c.runId) + 1,
      direction: c.direction,
      pValue: c.pValue,
      ratio: { estimate: c.change.estimate, low: c.change.low, high: c.change.high },
    }));
  const tps = metric('tps');
  const found = (direction: string, run: number): boolean =>
    points('tps').some((c) => c.direction === direction && Math.abs(c.run - run) <= 1);
  const latencyFound = (direction: string, run: number): boolean =>
    points('latency').some((c) => c.direction === direction && Math.abs(c.run - run) <= 1);
  const verdicts = (c: Comparison) =>
    Object.fromEntries(
      c.steps[0]!.metrics.map((m) => [
        m.metric,
        {
          verdict: m.verdict,
          source: m.source,
          ratio: m.ratio?.estimate ?? null,
          low: m.ratio?.low ?? null,
          high: m.ratio?.high ?? null,
        },
      ]),
    );
  const meanOf = (phase: string, from: number, to: number): number => {
    const xs = runs
      .slice(from, to)
      .filter((r) => r.phase === phase)
      .flatMap((r) => r.repeats.map((x) => x.tps));
    return xs.reduce((s, x) => s + x, 0) / xs.length;
  };
  const relaxedBefore = meanOf('relaxed', 0, 8);
  const durableMean = meanOf('durable', 8, 14);
  const relaxedAfter = meanOf('relaxed', 14, 22);
  const worseTps = worse.steps[0]!.metrics.find((m) => m.metric === 'tps')!;
  const dropRun = points('tps').find((c) => c.direction === 'regressed' && Math.abs(c.run - 9) <= 1)?.run ?? null;
  const recoveryRun = points('tps').find((c) => c.direction === 'improved' && Math.abs(c.run - 15) <= 1)?.run ?? null;
  return {
    options: {
      durationS: 4,
      warmupS: 1,
      threads: 4,
      withinRunS: WITHIN_RUN_S,
      history: HISTORY_OPTIONS,
      sameLevel: 0.999,
    },
    runs,
    ratios: {
      durableOverRelaxedBefore: durableMean / relaxedBefore,
      relaxedAfterOverBefore: relaxedAfter / relaxedBefore,
      compareDurableOverRelaxedTps: worseTps.ratio,
      compareSameRunsTps: same.steps[0]!.metrics.find((m) => m.metric === 'tps')!.ratio,
    },
    history: { tps: points('tps'), latency: points('latency'), latest: tps.latest },
    compare: { sameRuns: verdicts(same), durableVsRelaxed: verdicts(worse) },
    withinRun: { intervalTps: withinRun },
    noiseModel: fitNoiseModel(runs, withinRun),
    expectations: {
      tpsDropFoundAtRun9: found('regressed', 9),
      tpsRecoveryFoundAtRun15: found('improved', 15),
      nothingInsideDurablePhase:
        dropRun !== null &&
        recoveryRun !== null &&
        points('tps').every((c) => c.run <= dropRun || c.run >= recoveryRun),
      latencyRiseAndFallFound: latencyFound('regressed', 9) && latencyFound('improved', 15),
      latestWithinNoise: tps.latest?.verdict === 'within-noise',
      sameRunsWithinNoise: same.regressions === 0 && same.improvements === 0,
      durableTpsBelow80PercentOfRelaxed: (worseTps.ratio?.estimate ?? 1) < 0.8,
    },
  };
}

type Figures = ReturnType<typeof summarise>;

function printFigures(f: Figures): void {
  const pct = (x: number | null | undefined): string =>
    x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : `${(x * 100).toFixed(1)}%`;
  const lines = [
    '',
    'TPS per run (repeats separated by /):',
    ...f.runs.map((r) => `  ${r.runId} ${r.phase.padEnd(7)} ${r.repeats.map((x) => Math.round(x.tps)).join(' / ')}`),
    '',
    `durable / relaxed before: ${pct(f.ratios.durableOverRelaxedBefore)}`,
    `relaxed after / before: ${pct(f.ratios.relaxedAfterOverBefore)}`,
    'history change points (TPS):',
    ...f.history.tps.map(
      (c) =>
        `  run ${c.run} ${c.direction} p=${c.pValue.toFixed(4)} ` +
        `${pct(c.ratio.estimate)} (${pct(c.ratio.low)}-${pct(c.ratio.high)})`,
    ),
    'history change points (latency):',
    ...f.history.latency.map((c) => `  run ${c.run} ${c.direction} p=${c.pValue.toFixed(4)}`),
    `latest run: ${f.history.latest?.verdict ?? 'n/a'} (${f.history.latest?.reason ?? ''})`,
    `compare 21 vs 22 at 99.9%: ${JSON.stringify(f.compare.sameRuns)}`,
    `compare 21 vs 14 (durable/relaxed) TPS: ${pct(f.ratios.compareDurableOverRelaxedTps?.estimate)}`,
    `noise model: ${JSON.stringify(f.noiseModel)}`,
    'as designed:',
    ...Object.entries(f.expectations).map(([k, v]) => `  ${v ? 'yes' : 'NO '} ${k}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

function record(entry: object): void {
  const existing = existsSync(RESULTS)
    ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as { recordings: object[] })
    : { recordings: [] };
  const out = {
    benchmark: 'regression-local',
    about:
      'bench/regression-local.ts: 22 local runs, durable commits switched off, on, off; history and compare over them',
    recordings: [...existing.recordings, entry],
  };
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(out, null, 1)}\n`);
  process.stdout.write(`recorded in ${RESULTS}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
