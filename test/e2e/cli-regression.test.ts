/**
 * `aurora-bench compare` and `aurora-bench history` as a user runs them (the built CLI) over a lake
 * directory written in the workflow's layout: tables, JSON, the HTML page with its trend charts,
 * the exit code CI reads from --fail-on regression, and clear errors for what is not there.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nightlySpec, writeLakeRun } from '../helpers/regression-fixtures';
import { lakeCli } from '../helpers/lake-cli';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');
const S1 = join(REPO, 'experiments', 'graviton-vs-intel.json');

let work: string;
let lake: string;

const cli = (args: string[]) => lakeCli(work, lake, args);

const day = (i: number): string => new Date(Date.UTC(2026, 2, 1) + i * 86_400_000).toISOString();

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
  work = mkdtempSync(join(tmpdir(), 'ab-cli-regression-'));
  lake = join(work, 'lake');
  // Ten nights at 1000 TPS, then five at 700 (latency up accordingly); two repeats each.
  for (let i = 1; i <= 15; i++) {
    const tps = i <= 10 ? 1000 : 700;
    const wobble = 1 + 0.01 * Math.sin(i * 2.1);
    writeLakeRun(lake, `night-${String(i).padStart(2, '0')}`, day(i), [
      { tps: tps * wobble, latencyMs: 10_000 / (tps * wobble) },
      { tps: tps * wobble * 1.01, latencyMs: 10_000 / (tps * wobble * 1.01) },
    ]);
  }
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('aurora-bench compare', () => {
  it('prints B/A per metric and exits 0 for two runs within the noise, even with --fail-on regression', () => {
    // Act
    const r = cli(['compare', 'night-01', 'night-02', '--fail-on', 'regression']);
    // Assert
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/aurora-bench compare: night-01 → night-02/);
    expect(r.stdout).toMatch(/rw t8 \[r6g\] .*within the noise.*repeats/);
    expect(r.stdout).toMatch(/0 regressed, 0 improved, 4 within the noise/);
    expect(r.stdout).toMatch(
      new RegExp(
        /4 metrics judged at 95%: if nothing had changed, about 0\.2 of them would still be called/.source +
          / improved or regressed by chance \(1 in 20 each\)/.source,
      ),
    );
    expect(r.stdout).not.toMatch(/compared with itself/);
  });

  it('warns when a run is compared with itself', () => {
    // Act
    const r = cli(['compare', 'night-03', 'night-03']);
    // Assert
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/WARNING: run night-03 is compared with itself: nothing can differ\./);
  });

  it('exits 2 with --fail-on regression when B regressed, and prints the regressions', () => {
    // Act
    const r = cli(['compare', 'night-10', 'night-11', '--fail-on', 'regression']);
    const json = JSON.parse(cli(['compare', 'night-10', 'night-11', '--json']).stdout) as {
      regressions: number;
      steps: { metrics: { metric: string; verdict: string }[] }[];
    };
    // Assert
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/REGRESSED: rw t8 \[r6g\] TPS 6\d\.\d% \(6\d\.\d%–7\d\.\d%\) \(B\/A\)/);
    expect(r.stderr).toMatch(/aurora-bench: 3 regressions from night-10 to night-11/);
    expect(json.regressions).toBe(3);
    expect(json.steps[0]!.metrics.map((m) => [m.metric, m.verdict])).toEqual([
      ['tps', 'regressed'],
      ['qps', 'regressed'],
      ['latency', 'regressed'],
      ['errors', 'within-noise'],
    ]);
  });

  it('--level 0.999 widens the intervals and says so; a percentage is refused with how to write it', () => {
    // Act
    const at95 = JSON.parse(cli(['compare', 'night-10', 'night-11', '--json']).stdout) as {
      level: number;
      steps: { metrics: { ratio: { low: number; high: number } | null }[] }[];
    };
    const at999 = JSON.parse(
      cli(['compare', 'night-10', 'night-11', '--level', '0.999', '--json']).stdout,
    ) as typeof at95;
    const text = cli(['compare', 'night-10', 'night-11', '--level', '0.999']);
    const bad = cli(['compare', 'night-10', 'night-11', '--level', '95']);
    // Assert
    expect([at95.level, at999.level]).toEqual([0.95, 0.999]);
    expect(at999.steps[0]!.metrics[0]!.ratio!.low).toBeLessThan(at95.steps[0]!.metrics[0]!.ratio!.low);
    expect(at999.steps[0]!.metrics[0]!.ratio!.high).toBeGreaterThan(at95.steps[0]!.metrics[0]!.ratio!.high);
    expect(text.stdout).toContain('B/A per step (99.9% interval)');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'aurora-bench: --level 95: give a confidence level from 0.5 to 0.9999 as a fraction (e.g. --level 0.99)\n',
    );
  });

  it('names a run that is not in the lake', () => {
    // Act
    const r = cli(['compare', 'night-01', 'nope']);
    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^aurora-bench: run "nope" is not in the results lake at .* \(latest runs: night-15/);
  });
});

describe('aurora-bench history', () => {
  it("prints the latest run's verdicts and the change point with its runs, size and p-value", () => {
    // Act
    const r = cli(['history', 'nightly']);
    // Assert
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/aurora-bench history: nightly/);
    expect(r.stdout).toMatch(/runs: 15 on local/);
    expect(r.stdout).toMatch(
      new RegExp(
        /rw t8 \[r6g\] +│ TPS +│ night-11 \(2026-03-12 00:00\) +│ 10 runs, 1,00\d\.\d\d +│ 5 runs,/.source +
          / 70\d\.\d\d +│ 69\.\d% \(6\d\.\d%–7\d\.\d%\) +│ p < 0\.005 +│ REGRESSED/.source,
      ),
    );
    expect(r.stdout).toMatch(/Latest run night-15 against the last stable segment/);
  });

  it('--json gives the series and --html writes a page with one trend chart per step, the change point marked', () => {
    // Arrange
    const page = join(work, 'history.html');
    // Act
    const json = JSON.parse(cli(['history', 'nightly', '--json']).stdout) as {
      latestRunId: string;
      steps: {
        points: unknown[];
        metrics: { metric: string; changePoints: { runId: string; direction: string }[] }[];
      }[];
    };
    const r = cli(['history', 'nightly', '--html', page]);
    const html = readFileSync(page, 'utf8');
    // Assert
    expect(json.latestRunId).toBe('night-15');
    expect(json.steps[0]!.points).toHaveLength(15);
    expect(json.steps[0]!.metrics.find((m) => m.metric === 'tps')!.changePoints).toEqual([
      expect.objectContaining({ runId: 'night-11', direction: 'regressed' }),
    ]);
    expect(r.stdout).toMatch(/HTML history written to .*history\.html/);
    expect(html.match(/<figure class="chart"/g)).toHaveLength(1);
    expect(html).toMatch(/<svg[^>]*>/);
    expect(html).toMatch(/TPS -30\.\d%/);
    expect(html).toMatch(/p95 latency \+4\d\.\d%/);
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
  });

  it('searches a shorter window when asked, and refuses a window that is not a number of runs', () => {
    // Act
    const short = JSON.parse(cli(['history', 'nightly', '--json', '--window', '4']).stdout) as {
      options: { window: number };
      steps: { metrics: { searchedFrom: string | null; changePoints: unknown[] }[] }[];
    };
    const bad = cli(['history', 'nightly', '--window', 'forever']);
    // Assert
    expect(short.options.window).toBe(4);
    expect(short.steps[0]!.metrics[0]!.searchedFrom).toBe('night-12');
    expect(short.steps[0]!.metrics[0]!.changePoints).toEqual([]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'aurora-bench: --window forever: give a number of runs (2 or more, e.g. --window 100) or "all"\n',
    );
  });

  it('names the experiments the lake has when the one asked for has no run', () => {
    // Act
    const r = cli(['history', 'weekly']);
    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        /^aurora-bench: no run of experiment "weekly" in the results lake at .* \(experiments with/.source +
          / runs: nightly \(15\)\)/.source,
      ),
    );
  });

  it(
    'takes --significance, --permutations, --magnitude and --seed, lists a change smaller than --magnitude as ' +
      'a near miss, and refuses a bad value',
    () => {
      // Act
      const json = JSON.parse(
        cli([
          'history',
          'nightly',
          '--json',
          '--magnitude',
          '0.5',
          '--permutations',
          '99',
          '--seed',
          '7',
          '--significance',
          '0.02',
        ]).stdout,
      ) as {
        options: { magnitude: number; permutations: number; seed: number; significance: number; nearMissUpTo: number };
        steps: {
          metrics: { metric: string; changePoints: unknown[]; nearMisses: { runId: string; why: string }[] }[];
        }[];
      };
      const text = cli(['history', 'nightly', '--magnitude', '0.5']);
      const bad = cli(['history', 'nightly', '--significance', '5']);
      // Assert
      expect(json.options).toMatchObject({
        magnitude: 0.5,
        permutations: 99,
        seed: 7,
        significance: 0.02,
        nearMissUpTo: 0.05,
      });
      const tps = json.steps[0]!.metrics.find((m) => m.metric === 'tps')!;
      expect(tps.changePoints).toEqual([]);
      expect(tps.nearMisses).toEqual([expect.objectContaining({ runId: 'night-11', why: 'magnitude' })]);
      expect(text.stdout).toMatch(/Near misses/);
      expect(text.stdout).toMatch(/TPS +│ night-11 .*│ 30\.\d% +│ smaller than --magnitude 50\.0%/);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toBe(
        'aurora-bench: --significance 5: give a fraction above 0 and below 1 (e.g. --significance 0.01)\n',
      );
    },
  );

  it(
    'finds the --scale small runs of an experiment file and says so; says that nothing could be judged yet ' +
      'with three runs',
    () => {
      // Arrange: three runs of graviton-vs-intel.json made with --scale small, in a lake of their own
      const own = join(work, 'small-lake');
      for (let i = 1; i <= 3; i++)
        writeLakeRun(
          own,
          `small-${i}`,
          day(i),
          [{ tps: 600 }, { tps: 601 }],
          nightlySpec({ name: 'graviton-vs-intel-small' }),
        );
      // Act
      const r = spawnSync(process.execPath, [CLI, 'history', S1, '--lake', own], {
        cwd: work,
        encoding: 'utf8',
        timeout: 120_000,
      });
      // Assert
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/aurora-bench history: graviton-vs-intel-small/);
      expect(r.stdout).toMatch(
        new RegExp(
          /graviton-vs-intel\.json has no run as written \("graviton-vs-intel"\): these are its/.source +
            / --scale small runs, stored as "graviton-vs-intel-small"/.source,
        ),
      );
      expect(r.stdout).toMatch(/Nothing could be judged in the latest run yet: 4 step metrics with the noise unknown/);
      expect(r.stdout).not.toMatch(/No regression/);
    },
  );
});

describe('rehearsal runs in a lake (run --aws-rehearsal --lake)', () => {
  let mixed: string;
  beforeAll(() => {
    // Four nights on AWS at 1000 TPS, and a rehearsal of the same experiment (MariaDB stand-ins) at 300.
    mixed = join(work, 'mixed-lake');
    for (let i = 1; i <= 4; i++)
      writeLakeRun(mixed, `aws-${i}`, day(i), [{ tps: 1000 + i }, { tps: 1001 + i }], undefined, 20, 'aws');
    writeLakeRun(mixed, 'rehearsal-1', day(5), [{ tps: 300 }, { tps: 301 }], undefined, 20, 'aws-rehearsal');
  });

  it('history of an AWS experiment leaves the rehearsal out, saying so; compare refuses rehearsal vs AWS', () => {
    // Act
    const history = spawnSync(process.execPath, [CLI, 'history', 'nightly', '--lake', mixed], {
      cwd: work,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const compare = spawnSync(process.execPath, [CLI, 'compare', 'aws-4', 'rehearsal-1', '--lake', mixed], {
      cwd: work,
      encoding: 'utf8',
      timeout: 120_000,
    });
    // Assert
    expect(history.status).toBe(0);
    expect(history.stdout).toMatch(/runs: 4 on aws/);
    expect(history.stdout).toMatch(/Latest run aws-4 /);
    expect(history.stdout).toMatch(/1 rehearsal run\(s\) left out \(run --aws-rehearsal: .*\): rehearsal-1/);
    expect(compare.status).not.toBe(0);
    expect(compare.stderr).toMatch(
      /run rehearsal-1 is a rehearsal \(run --aws-rehearsal: .*\), so it is not compared with a run on AWS/,
    );
  });
});
