/**
 * A PostgreSQL engine end to end on this machine: the real workflow (state-machines/benchmark.asl.json
 * through the local runner) against the local backend's PostgreSQL primary and streaming replica
 * (the installed PostgreSQL server, real sysbench 1.0.20 through its pgsql driver), one small run
 * shared by every assertion (2 s steps, one 200-row table).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBackend } from '../../core/backends/local/local-backend';
import type { RunRow, ServerConfigRow, ServerMetricRow, StepRow } from '../../core/lake/rows';
import type { SpecInput } from '../../core/experiment/schema';
import { executeLocally, type LocalExecutionResult } from '../../core/workflow/local-runner';
import { localJudge } from '../../core/regression/judge-local';
import { serverProcessesUnder } from '../helpers/server-processes';

const REPO = join(__dirname, '..', '..');

const SPEC: SpecInput = {
  name: 'pg-local',
  engine: { kind: 'aurora-postgresql', version: '16.4' },
  variants: [
    {
      name: 'apg',
      instanceClass: 'db.r6g.large',
      readers: 1,
      // synchronous_commit and work_mem exist in PostgreSQL;
      // apg_ccm_enabled is Aurora-only; no_such_setting exists nowhere.
      clusterParameters: { synchronous_commit: 'off', apg_ccm_enabled: 1 },
      instanceParameters: { work_mem: '8MB', no_such_setting: 1 },
    },
  ],
  data: { tables: 1, tableSize: 200, prepareThreads: 1 },
  defaults: { durationS: 3, warmupS: 0, reportIntervalS: 1 },
  workloads: [
    { name: 'rw', test: 'oltp_read_write', threads: [2] },
    { name: 'ro', test: 'oltp_read_only', threads: [2], target: 'reader' },
  ],
};

function jsonLines<T>(dir: string): T[] {
  const out: T[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.jsonl'))
        out.push(
          ...readFileSync(p, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as T),
        );
    }
  };
  walk(dir);
  return out;
}

const postgresLeft = (runRoot: string): string[] => serverProcessesUnder('postgres', runRoot);

let lakeDir: string;
let runRoot: string;
let result: LocalExecutionResult;

beforeAll(async () => {
  lakeDir = mkdtempSync(join(tmpdir(), 'ab-pg-lake-'));
  runRoot = mkdtempSync(join(tmpdir(), 'ab-pg-runs-'));
  const backend = new LocalBackend({ lakeDir, runRoot, repoRoot: REPO });
  result = await executeLocally({
    deps: {
      backend,
      now: () => new Date(),
      toolVersion: 'test',
      gitSha: null,
      serverVersion: 'test',
      readyTimeoutS: 60,
      judgeRun: localJudge(lakeDir),
    },
    input: { spec: SPEC },
    pollMs: 100,
    retryMs: 10,
  });
}, 240_000);

afterAll(() => {
  rmSync(lakeDir, { recursive: true, force: true });
  rmSync(runRoot, { recursive: true, force: true });
});

describe('a PostgreSQL experiment through the local workflow', () => {
  it('succeeds with both steps measured through the pgsql driver, on the primary and on the replica', () => {
    expect(result.status).toBe('SUCCEEDED');
    const steps = jsonLines<StepRow>(join(lakeDir, 'tables', 'steps'));
    const byStep = new Map(steps.map((s) => [s.step_id, s]));
    expect([...byStep.keys()].sort()).toEqual(['ro-t2', 'rw-t2']);
    for (const s of byStep.values()) {
      expect(s.status).toBe('ok');
      expect(s.tps).toBeGreaterThan(0);
    }
    expect(byStep.get('ro-t2')!.target).toBe('reader');
    // The runner's result.json records the command it ran (the password masked).
    const commands = execFileSync('grep', ['-rhoE', '--include=result.json', '"command": "[^"]*', lakeDir], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n');
    expect(commands).toHaveLength(3); // one prepare, two runs
    for (const c of commands)
      expect(c).toMatch(
        /--db-driver=pgsql --pgsql-host=127\.0\.0\.1 --pgsql-port=\d+ --pgsql-user=sbtest --pgsql-password=\*\*\*\*\*/,
      );
  });

  it('maps pg_stat_* to the CloudWatch names Aurora PostgreSQL has, with replica lag on the reader', () => {
    const metrics = jsonLines<ServerMetricRow>(join(lakeDir, 'tables', 'server_metrics'));
    const rw = metrics.filter((m) => m.step_id === 'rw-t2');
    const writerCommits = rw.filter((m) => m.role === 'writer' && m.metric === 'CommitThroughput').map((m) => m.value);
    expect(Math.max(...writerCommits)).toBeGreaterThan(0);
    expect(rw.some((m) => m.role === 'writer' && m.metric === 'CPUUtilization' && m.value > 0)).toBe(true);
    expect(rw.some((m) => m.role === 'reader' && m.metric === 'AuroraReplicaLag' && m.value >= 0)).toBe(true);
    expect(rw.some((m) => m.metric === 'DatabaseConnections' && m.value >= 2)).toBe(true);
    // Aurora publishes DMLThroughput and SelectThroughput for Aurora MySQL only: not made up for PostgreSQL.
    expect(metrics.some((m) => m.metric === 'DMLThroughput' || m.metric === 'SelectThroughput')).toBe(false);
  });

  it("applies the spec's parameters, reads them back, and names those PostgreSQL does not have", () => {
    const runs = jsonLines<RunRow>(join(lakeDir, 'tables', 'runs'));
    const notes = runs
      .flatMap((r) => JSON.parse(r.notes) as { message: string }[])
      .map((n) => n.message)
      .join('\n');
    expect(notes).toMatch(/synchronous_commit=off/);
    expect(notes).toMatch(/work_mem=8192 kB/);
    expect(notes).toMatch(/apg_ccm_enabled is an Aurora\/RDS-only parameter/);
    expect(notes).toMatch(/PostgreSQL 15\.\d+ has no setting "no_such_setting"/);
  });

  it(
    'records at prepare what the primary runs with in server_config: server_version, the requested values ' +
      'compared in their units, the performance list',
    () => {
      const config = jsonLines<ServerConfigRow>(join(lakeDir, 'tables', 'server_config'));
      const byName = new Map(config.map((r) => [r.name, r]));
      expect(byName.get('server_version')).toMatchObject({ kind: 'version', value: expect.stringMatching(/^15\.\d+/) });
      // work_mem 8MB is 8192 in pg_settings' unit (kB); both requested values are in effect.
      expect(byName.get('work_mem')).toMatchObject({
        kind: 'requested',
        value: '8192',
        requested: '8MB',
        in_effect: true,
      });
      expect(byName.get('synchronous_commit')).toMatchObject({ kind: 'requested', value: 'off', in_effect: true });
      // A setting PostgreSQL does not have is recorded as unread, not as a mismatch.
      expect(byName.get('apg_ccm_enabled')).toMatchObject({ value: null, in_effect: null });
      expect(byName.get('shared_buffers')).toMatchObject({
        kind: 'performance',
        value: expect.stringMatching(/^\d+$/),
      });
      const runs = jsonLines<RunRow>(join(lakeDir, 'tables', 'runs'));
      expect(JSON.parse(runs[0]!.server_config ?? '{}')).toMatchObject({
        'apg-r1': { version: expect.stringMatching(/^15\./) },
      });
    },
  );

  it('leaves no postgres process of the run behind', () => {
    expect(postgresLeft(runRoot)).toEqual([]);
  });
});
