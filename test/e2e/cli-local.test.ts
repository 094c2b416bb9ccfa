/**
 * The CLI as a user runs it (the built dist/bin/aurora-bench.js, as scripts/quickstart.sh does):
 * a small experiment against real MariaDB and sysbench, then the lake queried through DuckDB,
 * a sysbench output parsed, bad input refused, and Ctrl-C leaving nothing behind.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { serverProcessesUnder } from '../helpers/server-processes';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');

let work: string;
let runRoot: string;
let env: NodeJS.ProcessEnv;
/** CLI processes a test started in the background: killed (with what they started) if a test fails midway. */
const children: ChildProcess[] = [];

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'ab-cli-'));
  runRoot = mkdtempSync(join(tmpdir(), 'ab-cli-runs-'));
  env = { ...process.env, AURORA_BENCH_LAKE: join(work, 'lake'), AURORA_BENCH_RUN_ROOT: runRoot };
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  // What a killed CLI left is removed the way a user would: aurora-bench cleanup.
  spawnSync(process.execPath, [CLI, 'cleanup'], { env });
  rmSync(work, { recursive: true, force: true });
  rmSync(runRoot, { recursive: true, force: true });
});

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: work, env, encoding: 'utf8', timeout: 300_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function writeSpec(name: string, spec: object): string {
  const file = join(work, name);
  writeFileSync(file, JSON.stringify(spec, null, 2));
  return file;
}

const small = {
  name: 'cli-e2e',
  engine: { version: '3.04.0' },
  variants: [
    {
      name: 'one',
      instanceClass: 'db.r6g.large',
      readers: 1,
      clusterParameters: { aurora_binlog_replication_max_yield_seconds: 0 },
    },
  ],
  data: { tables: 2, tableSize: 500 },
  defaults: { durationS: 3, warmupS: 0, reportIntervalS: 1, percentile: 99 },
  workloads: [
    { name: 'rw', test: 'oltp_read_write', threads: [2] },
    { name: 'ro', test: 'oltp_read_only', threads: [2], target: 'reader', options: { skip_trx: true } },
  ],
};

const mariadbdUnder = (dir: string): string[] => serverProcessesUnder('mariadbd', dir);

/** Files named `name` under `dirs` (recursively); none where a folder is gone meanwhile. */
function filesNamed(dirs: readonly string[], name: string): string[] {
  return dirs.flatMap((dir) => {
    try {
      return readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => basename(f) === name)
        .map((f) => join(dir, f));
    } catch {
      return [];
    }
  });
}

/**
 * Resolves once a runner's output.log under `dirs` holds a report interval (client/lua/aurora_bench_hook.lua
 * prints one JSON line `{"aurora_bench":1,...}` per interval), or after `timeoutMs`.
 */
async function waitForReportInterval(dirs: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const printed = filesNamed(dirs, 'output.log').some((f) => {
      try {
        return readFileSync(f, 'utf8').includes('{"aurora_bench":1,');
      } catch {
        return false;
      }
    });
    if (printed) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('aurora-bench CLI, locally', () => {
  it('runs an experiment end to end and the lake answers through DuckDB', () => {
    // Arrange
    const spec = writeSpec('small.json', small);
    // Act
    const run = cli(['run', spec]);
    // Assert: the run
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // The plan's notes are one line before the run; `plan` lists them.
    expect(run.stdout).toMatch(/^1 plan note \(1 info\): `aurora-bench plan \S+small\.json` lists them$/m);
    expect(run.stdout).not.toMatch(/^\[(info|warning)\]/m);
    expect(run.stdout).toMatch(/^run \S+: 1 cell, results in/m);
    expect(cli(['plan', spec]).stdout).toMatch(
      /^ {2}\[info\] variants\[0\]\.performanceInsights: Performance Insights is AWS only/m,
    );
    // The cell's notes are said when it is provisioned, once per variant
    expect(run.stdout).toMatch(
      new RegExp(
        /\[1\/1 one-r1\] \[warning\]/.source +
          / variants\[name=one\]\.clusterParameters\.aurora_binlog_replication_max_yield_seconds: not/.source +
          / applicable locally/.source,
      ),
    );
    expect(run.stdout).toMatch(/step 1\/2 rw-t2/);
    expect(run.stdout).toMatch(/p99 ms/);
    expect(run.stdout).toMatch(/succeeded: 2 steps/);
    // Assert: the query hint printed at the end works as printed, from another directory, and gives this run's steps
    const hint = /Query with: (aurora-bench .*)$/m.exec(run.stdout)![1]!;
    const elsewhere = mkdtempSync(join(tmpdir(), 'ab-cli-elsewhere-'));
    const followed = spawnSync(
      'sh',
      ['-c', hint.replace(/^aurora-bench /, `"${process.execPath}" "${CLI}" `) + ' --json'],
      {
        cwd: elsewhere,
        env: { ...env, AURORA_BENCH_LAKE: join(elsewhere, 'no-lake') },
        encoding: 'utf8',
      },
    );
    rmSync(elsewhere, { recursive: true, force: true });
    expect(followed.stderr).toBe('');
    expect(followed.status).toBe(0);
    const runId = /run (\S+) succeeded/.exec(run.stdout)![1]!;
    const hinted = JSON.parse(followed.stdout) as { run_id: string; step_id: string }[];
    expect(hinted.map((r) => r.step_id).sort()).toEqual(['ro-t2', 'rw-t2']);
    expect(new Set(hinted.map((r) => r.run_id))).toEqual(new Set([runId]));
    // Assert: --run beside --sql is refused (it would be ignored), saying how to put the run in the query
    const both = cli(['results', '--run', runId, '--sql', 'select * from step_summary']);
    expect(both.code).toBe(1);
    expect(both.stdout).toBe('');
    expect(both.stderr).toMatch(/--sql queries the whole lake and does not take it: put the run in the query/);
    // Assert: results --json gives step rows with tps, qps and latency
    const json = cli(['results', '--json']);
    expect(json.code).toBe(0);
    const steps = JSON.parse(json.stdout) as {
      step_id: string;
      tps: number;
      qps: number;
      lat_pct: number;
      lat_pct_ms: number;
      status: string;
      saturated_clients: number;
      client_cpu_avg_pct: number;
    }[];
    expect(steps.map((s) => s.step_id)).toEqual(['rw-t2', 'ro-t2']);
    for (const s of steps) {
      expect(s.status).toBe('ok');
      expect(s.tps).toBeGreaterThan(0);
      expect(s.qps).toBeGreaterThan(s.tps);
      expect(s.lat_pct).toBe(99);
      expect(s.lat_pct_ms).toBeGreaterThan(0);
      // The servers share this machine with the client: its host CPU is busy, but sysbench's own
      // two threads are not the limit, and the step must not be marked client-bound.
      expect(s.client_cpu_avg_pct).toBeGreaterThan(0);
      expect(s.client_cpu_avg_pct).toBeLessThan(90);
      expect(s.saturated_clients).toBe(0);
    }
    // Assert: SQL over the lake, intervals and server metrics with CloudWatch names
    const sql = cli([
      'results',
      '--json',
      '--sql',
      "select metric, count(*) as n from server_metrics where source = 'local' group by metric order by metric",
    ]);
    expect(sql.code).toBe(0);
    const metrics = (JSON.parse(sql.stdout) as { metric: string }[]).map((m) => m.metric);
    expect(metrics).toEqual(
      expect.arrayContaining([
        'CPUUtilization',
        'SelectThroughput',
        'DMLThroughput',
        'NetworkTransmitThroughput',
        'AuroraReplicaLag',
      ]),
    );
    const intervals = cli([
      'results',
      '--json',
      '--sql',
      'select step_id, count(*) as n from intervals group by step_id order by step_id',
    ]);
    for (const row of JSON.parse(intervals.stdout) as { n: number }[]) expect(row.n).toBeGreaterThanOrEqual(2);
    // Assert: parse reads a runner output directory the run left in the lake
    const rawRoot = join(work, 'lake', 'raw');
    const dt = readdirSync(rawRoot)[0]!;
    const runDir = join(rawRoot, dt, readdirSync(join(rawRoot, dt))[0]!, 'one-r1', 'rw-t2', 'run', 'client-1');
    const parsed = cli(['parse', runDir]);
    expect(parsed.code).toBe(0);
    const out = JSON.parse(parsed.stdout) as {
      status: string;
      error: string | null;
      summary: { tps: number; latencyMs: { percentile: number } };
      intervals: unknown[];
    };
    expect(out.status).toBe('ok');
    expect(out.error).toBeNull();
    expect(out.summary.latencyMs.percentile).toBe(99);
    expect(out.intervals.length).toBeGreaterThanOrEqual(2);
    expect(mariadbdUnder(runRoot)).toEqual([]);
  });

  it('refuses an invalid spec naming the file and the JSON path, starting nothing', () => {
    const spec = writeSpec('bad.json', { ...small, workloads: [{ name: 'x', test: 'oltp_nope' }] });
    const r = cli(['run', spec]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('bad.json: invalid experiment spec');
    expect(r.stderr).toMatch(/workloads\[0\]\.test: expected one of .*got "oltp_nope"/);
    expect(existsSync(join(work, 'lake'))).toBe(false);
  });

  it('validates every shipped experiment, skipping the JSON Schema itself', () => {
    const experiments = join(REPO, 'experiments');
    const files = readdirSync(experiments)
      .filter((f) => f.endsWith('.json'))
      .map((f) => join(experiments, f));
    const r = cli(['validate', ...files]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/skip: .*schema\.json \(the experiment JSON Schema/);
    expect(r.stdout.match(/^ok: /gm)).toHaveLength(files.length - 1);
  });

  it('plans a study scaled down for a local rehearsal, naming what was scaled and what only AWS can do', () => {
    const r = cli(['plan', join(REPO, 'experiments', 'write-forwarding.json'), '--scale', 'small']);
    // Writes sent to a reader run locally as the labelled client-side emulation: a warning, no refusal.
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\[info\] data: scaled for a local rehearsal: 8 x 10,000,000 rows -> 4 x 10,000/);
    expect(r.stdout).toMatch(/\[warning\] workloads\[1\]: .*client-side EMULATION of Aurora write forwarding/);
    expect(r.stdout).not.toMatch(/\[refused\]/);
    expect(r.stdout).toMatch(/On AWS the same experiment would cost about \$/);
    const bad = cli(['plan', join(REPO, 'experiments', 'write-forwarding.json'), '--scale', 'tiny']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--scale.*tiny.*Allowed choices are full, small/s);
  });

  it('refuses, before anything starts, sysbench options sysbench rejects and classes with no local mapping', () => {
    const spec = writeSpec('refused.json', {
      ...small,
      variants: [{ name: 'one', instanceClass: 'db.x2g.large', readers: 1 }],
      workloads: [{ name: 'rw', test: 'oltp_read_write', options: { rnage_size: 5 } }],
    });
    const validate = cli(['validate', spec]);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(
      new RegExp(
        /refused\.json: the experiment cannot run as specified:\n {2}- workloads\[0\]\.options:/.source +
          / sysbench option "rnage_size"/.source,
      ),
    );
    const fixed = writeSpec('class.json', {
      ...small,
      variants: [{ name: 'one', instanceClass: 'db.x2g.large', readers: 1 }],
    });
    const plan = cli(['plan', fixed]);
    expect(plan.stdout).toMatch(
      /\[refused\] variants\[0\]\.instanceClass: instance class "db\.x2g\.large" has no local mapping/,
    );
    const run = cli(['run', fixed]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/variants\[0\]\.instanceClass: instance class "db\.x2g\.large" has no local mapping/);
    expect(existsSync(join(work, 'lake'))).toBe(false);
  });

  it('plans locally, refusing write forwarding as needing AWS where the emulation does not cover it', () => {
    // oltp_update_index writes, and the client-side emulation covers
    // only oltp_read_write, oltp_write_only and rw_consistency.lua.
    const spec = writeSpec('wf.json', {
      ...small,
      variants: [
        {
          name: 'wf',
          instanceClass: 'db.r5.xlarge',
          readers: 1,
          writeForwarding: { enabled: true, consistency: 'GLOBAL' },
        },
      ],
      workloads: [
        { name: 'fwd', test: 'oltp_update_index', target: 'reader' },
        { name: 'rw', test: 'oltp_read_write' },
      ],
    });
    const r = cli(['plan', spec]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/1 refusal in the plan \(workloads\[0\]\)/);
    expect(r.stdout).toMatch(/\[refused\] workloads\[0\]: .*needs AWS/);
    expect(r.stdout).toMatch(/Estimated wall time/);
    expect(r.stdout).not.toMatch(/fwd-t1/);
  });

  it('Ctrl-C during a step tears everything down and records the run as aborted', async () => {
    // Arrange
    const spec = writeSpec('long.json', { ...small, defaults: { durationS: 60, warmupS: 0, reportIntervalS: 1 } });
    const child = spawn(process.execPath, [CLI, 'run', spec], { cwd: work, env });
    children.push(child);
    let stdout = '';
    // Act: interrupt once the first step's sysbench has printed a report interval (the hook's JSON line in the
    // runner's output.log): what a loaded machine takes to get there is no part of what is tested.
    let interrupted = false;
    const code = await new Promise<number | null>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (!interrupted && /step 1\/2 rw-t2/.test(stdout)) {
          interrupted = true;
          void waitForReportInterval([runRoot, work], 60_000).then(() => child.kill('SIGINT'));
        }
      });
      child.on('exit', (c) => resolve(c));
    });
    // Assert
    expect(code).toBe(130);
    expect(stdout).toMatch(
      /aborted \(interrupted by the user \(Ctrl-C, SIGINT\) during \w+ \(cell one-r1\)\); everything was torn down/,
    );
    expect(mariadbdUnder(runRoot)).toEqual([]);
    expect(readdirSync(runRoot)).toEqual([]);
    const runs = JSON.parse(cli(['results', '--json', '--sql', 'select status from runs']).stdout) as {
      status: string;
    }[];
    expect(runs).toEqual([{ status: 'aborted' }]);
    // The interrupted step is recorded, failed with the reason, with the intervals printed before the stop.
    const steps = JSON.parse(
      cli(['results', '--json', '--sql', 'select step_id, status, error, interval_count from steps']).stdout,
    ) as {
      step_id: string;
      status: string;
      error: string;
      interval_count: number;
    }[];
    expect(steps).toEqual([
      {
        step_id: 'rw-t2',
        status: 'failed',
        error: 'interrupted by the user (Ctrl-C, SIGINT) while the step ran',
        interval_count: expect.any(Number),
      },
    ]);
    expect(steps[0]!.interval_count).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('after a kill -9 mid-step, `aurora-bench cleanup` stops the servers and removes the run directory', async () => {
    // Arrange: a run killed without any chance to tear down
    const spec = writeSpec('killed.json', { ...small, defaults: { durationS: 60, warmupS: 0, reportIntervalS: 1 } });
    const child = spawn(process.execPath, [CLI, 'run', spec], { cwd: work, env });
    children.push(child);
    let stdout = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (/step 1\/2 rw-t2/.test(stdout) && !child.killed) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    await new Promise((r) => child.on('exit', r));
    expect(mariadbdUnder(runRoot).length).toBeGreaterThan(0);
    // Act
    const r = cli(['cleanup']);
    // Assert
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/cleaned up: /);
    expect(r.stdout).toMatch(/recorded as aborted in the lake \(they were still marked running\): cli-e2e-/);
    expect(mariadbdUnder(runRoot)).toEqual([]);
    expect(readdirSync(runRoot)).toEqual([]);
    const runs = JSON.parse(cli(['results', '--json', '--sql', 'select status, error from runs']).stdout) as {
      status: string;
      error: string;
    }[];
    expect(runs).toEqual([
      {
        status: 'aborted',
        error: expect.stringMatching(/ended without finishing the run .*settled by `aurora-bench cleanup`/) as string,
      },
    ]);
  }, 120_000);
});
