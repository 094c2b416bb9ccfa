/**
 * A run with a question, through the built CLI on real MariaDB and sysbench: the workflow judges
 * after each round and stops once the question is resolved, or at the maximum when it cannot be.
 * Two identical variants: whether a 90% horizon clears by eight rounds depends on the machine's load
 * (even identical variants differ by their order in a round), so either stop is checked. A series with
 * no history to be judged against can never stop early, so that run reaches its maximum every time.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');

let work: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'ab-rounds-'));
  env = { ...process.env, AURORA_BENCH_LAKE: join(work, 'lake'), AURORA_BENCH_RUN_ROOT: join(work, 'runs') };
});
afterEach(() => {
  spawnSync(process.execPath, [CLI, 'cleanup'], { env });
  rmSync(work, { recursive: true, force: true });
});

function spec(max: number, questions: object[], min = 2): object {
  const variant = (name: string) => ({ name, instanceClass: 'db.r6g.large', clients: { count: 1 } });
  return {
    name: 'rounds-e2e',
    engine: { version: '3.10.4' },
    variants: [variant('a'), variant('b')],
    data: { tables: 1, tableSize: 1000 },
    defaults: { durationS: 2, warmupS: 0, reportIntervalS: 1, percentile: 95 },
    workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1] }],
    repeats: { min, max },
    questions,
  };
}

/** Runs it; returns the progress's round lines and the manifest's rounds note. */
function run(doc: object): { rounds: string[]; note: string; code: number | null } {
  const file = join(work, 'spec.json');
  writeFileSync(file, JSON.stringify(doc));
  const r = spawnSync(process.execPath, [CLI, 'run', file], { cwd: work, env, encoding: 'utf8', timeout: 400_000 });
  const runs = join(work, 'lake', 'tables', 'runs');
  const [dt] = readdirSync(runs);
  const [key] = readdirSync(join(runs, dt!));
  const row = JSON.parse(readFileSync(join(runs, dt!, key!), 'utf8').trim()) as { notes: string };
  const note = (JSON.parse(row.notes) as { path: string; message: string }[]).find((n) => n.path === 'rounds');
  const rounds = (r.stdout + r.stderr).split('\n').filter((l) => l.startsWith('rounds: '));
  return { rounds, note: note?.message ?? '', code: r.status };
}

describe('rounds until the question is resolved', () => {
  it('judges every round and stops with the reason its last round line and the manifest both give', () => {
    // Whether a real interval clears 90% by round 8 depends on this machine's load (the steps are capped
    // beside the other test layers): the stop rule itself is proven by seeded simulation (rounds-judge).
    const { rounds, note, code } = run(spec(8, [{ baseline: 'a', candidate: 'b', metric: 'tps', horizons: [90] }]));
    expect(code).toBe(0);
    expect(rounds.length).toBeGreaterThanOrEqual(2);
    expect(rounds.length).toBeLessThanOrEqual(8);
    const reason = /stopped: (every question resolved|at the maximum rounds)/.exec(rounds.at(-1) ?? '')?.[1];
    expect(reason).toBeDefined();
    if (reason === 'at the maximum rounds') expect(rounds).toHaveLength(8);
    expect(note).toMatch(new RegExp(`^${rounds.length} rounds of 2-8 ran, stopped: ${reason!}`));
  }, 600_000);

  it('runs every round up to the maximum when no series has a history to be judged against', () => {
    // The lake is new, so neither variant's series has the stable runs a history question needs.
    const { rounds, note, code } = run(spec(3, [{ id: 'tps-vs-history', against: 'history', metric: 'tps' }], 1));
    expect(code).toBe(0);
    expect(rounds).toHaveLength(3);
    expect(rounds[0]).toMatch(/^rounds: round 1 of 1-3: .*; next round/);
    expect(note).toMatch(/^3 rounds of 1-3 ran, stopped: at the maximum rounds: 2 series without a stable history yet/);
  }, 600_000);
});
