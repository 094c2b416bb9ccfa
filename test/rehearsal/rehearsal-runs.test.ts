/**
 * Whole rehearsals (runRehearsal, as `aurora-bench run --aws-rehearsal` runs them) of a one-cell
 * experiment, on one moto server shared by the file, with a variant of the backend's AWS calls: a
 * cluster created without a benchmark database, a parameter group change RDS refuses. Every test
 * also checks that nothing was left; and a run judged after every round by the JudgeRound function.
 * Other runs that succeed: studies-*.test.ts and test/e2e/cli-rehearsal.test.ts (also Ctrl-C).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RehearsalOptions, RehearsalResult } from '../../core/rehearsal/run-rehearsal';
import { interceptClient } from '../../core/rehearsal/sdk-intercept';
import type { RunRow } from '../../core/lake/rows';
import type { ActualCellCost, ResourceLifetime } from '../../core/plan/bill';
import { LocalLakeStore } from '../../core/backends/local/local-lake';
import { rehearsalFile, rehearse as rehearseFile } from '../helpers/rehearsal-file';

const file = rehearsalFile('abr-runs-');

function specFile(
  name: string,
  clusterParameters: Record<string, string | number> = {},
  extra: Record<string, unknown> = {},
): string {
  const spec = join(file.work, `${name}.json`);
  writeFileSync(
    spec,
    JSON.stringify({
      name,
      engine: { version: '3.04.0' },
      region: 'us-east-1',
      variants: [
        {
          name: 'one',
          instanceClass: 'db.r6g.large',
          az: 'a',
          readers: 1,
          clusterParameters,
          clients: { count: 1, instanceType: 'c6g.large' },
        },
      ],
      data: { tables: 1, tableSize: 500 },
      defaults: { durationS: 3, warmupS: 0, reportIntervalS: 1 },
      workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [2], target: 'writer' }],
      ttlHours: 1,
      ...extra,
    }),
  );
  return spec;
}

async function rehearse(
  name: string,
  extra: Partial<RehearsalOptions> = {},
  clusterParameters: Record<string, string | number> = {},
  spec: Record<string, unknown> = {},
): Promise<{ r: RehearsalResult; lines: string[]; lake: LocalLakeStore }> {
  const lakeDir = join(file.work, `${name}-lake`);
  // Seconds since the start on every line: a failed expectation on the lines shows where time went.
  // Aborted (with its lines printed) at 150 s, before the tests' 180-s Jest timeout.
  const path = specFile(name, clusterParameters, spec);
  const { r, timed } = await rehearseFile(file, path, { lakeDir, ...extra }, 150_000);
  return { r, lines: timed, lake: new LocalLakeStore(lakeDir) };
}

async function runRow(lake: LocalLakeStore, r: RehearsalResult): Promise<RunRow> {
  const text = await lake.get(`tables/runs/dt=${r.plan.dt}/${r.plan.runId}.jsonl`);
  if (text === undefined) throw new Error('no run row in the lake');
  return JSON.parse(text.trim()) as RunRow;
}

describe('the AWS rehearsal', () => {
  it('refuses a group change RDS would refuse: ProvisionCell fails InvalidParameterValue, cell torn down', async () => {
    // Arrange: the backend sending, with the spec's parameters, one Aurora MySQL 3 keeps at the instance level.
    const withThreadHandling: RehearsalOptions['adjustClients'] = (clients) =>
      interceptClient(clients.rds, 'withThreadHandling', async (command, input, forward) => {
        if (command !== 'ModifyDBClusterParameterGroup') return forward();
        const params = (input['Parameters'] as object[] | undefined) ?? [];
        return forward({
          ...input,
          Parameters: [
            ...params,
            { ParameterName: 'thread_handling', ParameterValue: 'pool-of-threads', ApplyMethod: 'pending-reboot' },
          ],
        });
      });

    // Act
    const { r } = await rehearse('refused-parameter', { adjustClients: withThreadHandling }, { binlog_format: 'ROW' });

    // Assert
    expect(r.status).toBe('FAILED');
    expect(r.cause).toContain('InvalidParameterValue');
    expect(r.cause).toContain('thread_handling');
    expect(r.events.filter((e) => e.type === 'StateEntered' && e.state?.name === 'StartClients')).toHaveLength(0);
    expect(r.events.filter((e) => e.type === 'StateEntered' && e.state?.name === 'TeardownCellOnError')).toHaveLength(
      1,
    );
    expect(r.leftBehind).toEqual([]);
    expect(r.notCleaned).toEqual([]);
  }, 180_000);

  it('without a DatabaseName, the prepare fails with "Unknown database \'sbtest\'", leaving nothing', async () => {
    // Arrange: the backend's CreateDBCluster without DatabaseName (the code before the fix); a
    // password without characters the runner's sysbench config file could trip over, so the
    // database is the only thing missing.
    const withoutDatabaseName: RehearsalOptions['adjustClients'] = (clients) =>
      interceptClient(clients.rds, 'withoutDatabaseName', async (command, input, forward) => {
        if (command !== 'CreateDBCluster') return forward();
        const rest = { ...input };
        delete rest['DatabaseName'];
        return forward(rest);
      });

    // Act
    const { r, lines, lake } = await rehearse('no-database', {
      adjustClients: withoutDatabaseName,
      masterPassword: () => 'Rehearsal-pw-0123456789',
    });

    // Assert
    expect(r.status).toBe('FAILED');
    expect(r.error).toBe('BenchmarkFailed');
    expect(r.cause).toContain('DataPrepareFailedError: sysbench prepare for cell one-r1 failed');
    expect(r.cause).toContain("error 1049: Unknown database 'sbtest'");
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /cluster ab-\S+-one-r1: master user benchadmin, no database \(CreateDBCluster named none\)/,
        ),
      ]),
    );
    expect(r.events.filter((e) => e.type === 'StateEntered' && e.state?.name === 'TeardownCellOnError')).toHaveLength(
      1,
    );
    const row = await runRow(lake, r);
    expect(row).toMatchObject({ status: 'failed', backend: 'aws-rehearsal' });
    // What really ran is in the manifest: every resource with the creation time moto's Describe*
    // calls give (ClusterCreateTime, InstanceCreateTime, LaunchTime) and the teardown's deletion
    // time, priced beside the plan's estimate; the run's output closes with it.
    const [cell] = JSON.parse(row.cells) as { resources: ResourceLifetime[]; cost: ActualCellCost }[];
    expect(cell!.resources.map((x) => x.kind).sort()).toEqual([
      'db-cluster',
      'db-instance',
      'db-instance',
      'ec2-instance',
    ]);
    for (const x of cell!.resources) {
      expect(Date.parse(x.createdAt!)).toBeLessThanOrEqual(Date.parse(x.deletedAt!));
      expect(Date.parse(x.createdAt!)).toBeGreaterThanOrEqual(Date.parse(row.started_at) - 1000);
    }
    expect(cell!.resources.find((x) => x.kind === 'ec2-instance')!.type).toBe('c6g.large');
    expect(cell!.cost.total).toBeGreaterThan(0);
    expect(cell!.cost.estimate).toBeGreaterThan(0);
    expect(r.results).toMatch(
      new RegExp(
        /What the run cost, from what really ran: \$[0-9.,]+ \(DB compute .*EC2 .*\); the plan/.source +
          / estimated \$[0-9.,]+ for the same 1 cell/.source,
      ),
    );
    expect(r.safetyNetDeleted).toEqual([]);
    expect(r.leftBehind).toEqual([]);
    expect(r.notCleaned).toEqual([]);
  }, 180_000);

  it('judges after every round with the JudgeRound function and loops until the maximum', async () => {
    // Arrange: two identical one-instance variants and a 0.1% horizon, which no real interval clears:
    // round 1 gives no interval (the first look is after round 2), round 2 is the maximum.
    const variant = (name: string) => ({
      name,
      instanceClass: 'db.r6g.large',
      az: 'a',
      readers: 0,
      clients: { count: 1, instanceType: 'c6g.large' },
    });
    const spec = {
      variants: [variant('a'), variant('b')],
      workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1], target: 'writer' }],
      defaults: { durationS: 2, warmupS: 0, reportIntervalS: 1 },
      repeats: { min: 1, max: 2 },
      // A round's two cells at once, as the Distributed Map runs them.
      maxConcurrency: 2,
      questions: [{ baseline: 'a', candidate: 'b', metric: 'tps', horizons: [0.1] }],
    };

    // Act
    const { r, lake } = await rehearse('judged-rounds', {}, {}, spec);

    // Assert
    expect({ status: r.status, cause: r.cause }).toEqual({ status: 'SUCCEEDED', cause: undefined });
    const judged = r.events.filter((e) => e.type === 'StateEntered' && e.state?.name === 'JudgeRound');
    expect(judged).toHaveLength(2);
    expect(r.plan.cells.map((c) => c.cellId).sort()).toEqual(['a-r1', 'a-r2', 'b-r1', 'b-r2']);
    const row = await runRow(lake, r);
    expect(row.status).toBe('succeeded');
    const notes = JSON.parse(row.notes) as { path: string; message: string }[];
    expect(notes.find((n) => n.path === 'rounds')?.message).toMatch(/^2 rounds of 1-2 ran, stopped: at the maximum/);
    expect(r.leftBehind).toEqual([]);
    expect(r.notCleaned).toEqual([]);
  }, 180_000);
});
