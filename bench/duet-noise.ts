/**
 * Duet against interleaved under injected background load (issue 11, part 3): the same small A/B
 * experiment (two variants, one read-only step, several rounds) run once with order "interleaved"
 * (the variants one after another) and once with order "duet" (both at the same time, each step
 * started on both together), while CPU hog processes switch on and off at random moments. Prints,
 * per mode, the QPS ratio b/a the A/B report computes and the width of its 95% interval, and the
 * ratio of the widths. Duet benchmarking (Bulej et al., "Duet Benchmarking: Improving Measurement
 * Accuracy in the Cloud", ICPE 2020) expects the time-paired ratios to come out narrower: the
 * load reaches both variants in the same seconds and cancels out of their ratio.
 *
 * Run: `node dist/bench/duet-noise.js [--rounds 5] [--duration 10] [--hogs 2] [--max-phase 6] [--seed 1] [--no-load]`
 * after `npm run build`. Servers, runners and the hogs are this process's children and are stopped
 * at the end. Prints figures; asserts nothing.
 */
import '../core/polyfills';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LocalBackend } from '../core/backends/local/local-backend';
import type { SpecInput } from '../core/experiment/schema';
import { withLake } from '../core/lake/duckdb';
import { loadPrices } from '../core/plan/cost';
import { loadRun, stepKey, type RunData } from '../core/report/load';
import { pairByTime } from '../core/report/duet-pairs';
import { buildReport } from '../core/report/report';
import { sampleStddev } from '../core/report/stats';
import { localJudge } from '../core/regression/judge-local';
import { SeededRandom } from '../core/random';
import { findRepoRoot } from '../core/cli/tool-info';
import { executeLocally } from '../core/workflow/local-runner';

const REPO = findRepoRoot(__dirname);

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '10' },
    threads: { type: 'string', default: '2' },
    hogs: { type: 'string', default: '2' },
    'max-phase': { type: 'string', default: '6' },
    seed: { type: 'string', default: '1' },
    'no-load': { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const threads = Number(values.threads);
const hogCount = Number(values.hogs);
const maxPhaseS = Number(values['max-phase']);
const seed = Number(values.seed);

function spec(order: 'interleaved' | 'duet'): SpecInput {
  return {
    // short: the servers' socket paths under the run root must stay within 107 bytes
    name: order === 'duet' ? 'bd-d' : 'bd-i',
    engine: { version: '3.04.0' },
    // Two equal variants: an A/A comparison, whose true ratio is 100%, so the width is all noise.
    variants: [
      { name: 'a', instanceClass: 'db.r6g.large' },
      { name: 'b', instanceClass: 'db.r6g.large' },
    ],
    data: { tables: 1, tableSize: 10000, prepareThreads: 1 },
    defaults: { durationS, warmupS: 0, reportIntervalS: 1 },
    workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [threads] }],
    repeats: rounds,
    order,
  };
}

/**
 * Busy-loop processes, stopped and continued (SIGSTOP / SIGCONT) at random moments: on or off for
 * 1..maxPhaseS seconds at a time, from a seeded generator, so each mode meets load of the same kind.
 */
class CpuHog {
  private readonly procs: ChildProcess[] = [];
  private timer: NodeJS.Timeout | undefined;
  private on = false;
  onSeconds = 0;
  offSeconds = 0;
  private since = Date.now();

  constructor(
    private readonly count: number,
    private readonly rng: SeededRandom,
  ) {}

  start(): void {
    for (let i = 0; i < this.count; i++) {
      const p = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
      p.kill('SIGSTOP');
      this.procs.push(p);
    }
    this.since = Date.now();
    this.flip();
  }

  private flip(): void {
    const elapsed = (Date.now() - this.since) / 1000;
    if (this.on) this.onSeconds += elapsed;
    else this.offSeconds += elapsed;
    this.since = Date.now();
    this.on = !this.on;
    for (const p of this.procs) p.kill(this.on ? 'SIGCONT' : 'SIGSTOP');
    const phaseMs = 1000 + this.rng.below((maxPhaseS - 1) * 1000 + 1);
    this.timer = setTimeout(() => this.flip(), phaseMs);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    const elapsed = (Date.now() - this.since) / 1000;
    if (this.on) this.onSeconds += elapsed;
    else this.offSeconds += elapsed;
    for (const p of this.procs) {
      p.kill('SIGCONT');
      p.kill('SIGKILL');
    }
  }
}

/**
 * Each round's QPS ratio b/a: for a duet over its time-paired intervals, otherwise of the two cells'
 * step results (the round's a and b ran one after the other).
 */
function roundRatios(data: RunData, order: 'interleaved' | 'duet'): number[] {
  const ratios: number[] = [];
  for (let repeat = 1; repeat <= rounds; repeat++) {
    const a = data.steps.find((s) => s.variant === 'a' && s.repeat === repeat && s.status === 'ok');
    const b = data.steps.find((s) => s.variant === 'b' && s.repeat === repeat && s.status === 'ok');
    if (!a || !b || a.qps === null || b.qps === null) continue;
    if (order === 'interleaved') {
      ratios.push(b.qps / a.qps);
      continue;
    }
    const series = (r: typeof a) => ({
      startedAt: r.started_at,
      points: (data.intervals.get(stepKey(r.cell_id, r.step_id)) ?? []).map((i) => ({ t: i.t, value: i.qps })),
    });
    const pairs = pairByTime(series(b), series(a), 1);
    if (pairs.length > 0) ratios.push(pairs.reduce((x, [v]) => x + v, 0) / pairs.reduce((x, [, v]) => x + v, 0));
  }
  return ratios;
}

interface ModeResult {
  readonly order: string;
  readonly roundRatios: readonly number[];
  readonly wallS: number;
  readonly ratio: string;
  readonly widthPts: number;
  readonly from: string;
  readonly loadOnShare: number | null;
}

async function runMode(order: 'interleaved' | 'duet', scratch: string): Promise<ModeResult> {
  const lakeDir = join(scratch, `${order[0]}-lake`);
  const backend = new LocalBackend({ lakeDir, runRoot: join(scratch, order[0]!), repoRoot: REPO });
  const hog = values['no-load'] ? null : new CpuHog(hogCount, new SeededRandom(seed));
  hog?.start();
  const started = Date.now();
  let result;
  try {
    result = await executeLocally({
      deps: {
        backend,
        now: () => new Date(),
        toolVersion: 'bench',
        gitSha: null,
        serverVersion: null,
        readyTimeoutS: 120,
        judgeRun: localJudge(lakeDir),
      },
      input: { spec: spec(order) },
    });
  } finally {
    hog?.stop();
  }
  const wallS = (Date.now() - started) / 1000;
  if (result.status !== 'SUCCEEDED' || result.runId === undefined)
    throw new Error(`${order} run ${result.status}: ${result.error ?? ''} ${result.cause ?? ''}`);
  const runId = result.runId;
  const { row, perRound } = await withLake(lakeDir, async (lake) => {
    const data = await loadRun(lake, runId);
    const ab = buildReport(data, loadPrices(REPO)).sections.find((s) => s.id === 'ab');
    return { row: ab?.tables[0]?.rows.find((r) => r[1] === 'b/a'), perRound: roundRatios(data, order) };
  });
  if (row === undefined) throw new Error(`${order}: the report has no b/a ratio row`);
  const width = /width ([\d.]+) pts/.exec(row[6] ?? '');
  return {
    order,
    roundRatios: perRound,
    wallS,
    ratio: row[4] ?? '-',
    widthPts: width ? Number(width[1]) : Number.NaN,
    from: row[7] ?? '',
    loadOnShare: hog ? hog.onSeconds / (hog.onSeconds + hog.offSeconds) : null,
  };
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'bd-'));
  try {
    console.log(
      `duet vs interleaved: 2 equal variants, oltp_read_only t${threads}, ${rounds} rounds x ${durationS} ` +
        `s, ` +
        (values['no-load']
          ? 'no injected load'
          : `${hogCount} CPU hog(s) switching on/off every 1-${maxPhaseS} s (seed ${seed})`),
    );
    const results: ModeResult[] = [];
    for (const order of ['interleaved', 'duet'] as const) {
      const r = await runMode(order, scratch);
      results.push(r);
      console.log(
        `  ${order.padEnd(11)} QPS b/a ${r.ratio}; 95% CI width ${r.widthPts.toFixed(1)} pts (${r.from}); ` +
          `wall ${r.wallS.toFixed(0)} ` +
          `s${r.loadOnShare !== null ? `, load on ${(r.loadOnShare * 100).toFixed(0)}% of the time` : ''}`,
      );
      const logs = r.roundRatios.map((x) => Math.log(x));
      console.log(
        `  ${''.padEnd(11)} per round b/a: ${r.roundRatios.map((x) => `${(x * 100).toFixed(1)}%`).join(' ')} ` +
          `(sd of log ratio ${sampleStddev(logs).toFixed(3)})`,
      );
    }
    const [interleaved, duet] = results as [ModeResult, ModeResult];
    console.log(`  width interleaved / duet: ${(interleaved.widthPts / duet.widthPts).toFixed(2)}x`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
