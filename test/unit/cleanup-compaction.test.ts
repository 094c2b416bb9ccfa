/**
 * `cleanup` settles a run whose aurora-bench is gone (kill -9, a forced exit): the run has ended, so
 * its step files are compacted to Parquet as a finished run's are (core/lake/compact.ts). A run
 * whose owner is gone is made here from a real claim whose owner pid is a process that has exited.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { claimRunDir, cleanupAllRuns } from '../../core/backends/local/registry';
import { withLake } from '../../core/lake/duckdb';
import { lakeKeys, toJsonLines } from '../../core/lake/rows';

const DT = '2026-11-21';
const RUN = 'killed-1';
let root: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ab-cleanup-compaction-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function put(lake: string, key: string, rows: object[]): void {
  mkdirSync(dirname(join(lake, key)), { recursive: true });
  writeFileSync(join(lake, key), toJsonLines(rows));
}

it('cleanup settles a run whose owner is gone and compacts its step rows to Parquet, counted once', async () => {
  // Arrange: the run row still says running, one step's rows in JSON Lines, the claim's owner exited.
  const lake = join(root, 'lake');
  const runRoot = join(root, 'runs');
  put(lake, lakeKeys.run(DT, RUN), [{ run_id: RUN, status: 'running', spec_name: 'x' }]);
  put(lake, lakeKeys.stepTable('steps', DT, RUN, 'c1', 's1'), [
    { run_id: RUN, cell_id: 'c1', step_id: 's1', status: 'failed', client_id: 'client-0', tps: 12.5 },
  ]);
  put(
    lake,
    lakeKeys.stepTable('intervals', DT, RUN, 'c1', 's1'),
    [1, 2, 3].map((t) => ({ run_id: RUN, cell_id: 'c1', step_id: 's1', client_id: 'client-0', t, tps: 10 * t })),
  );
  await claimRunDir(runRoot, RUN, { lakeRoot: lake, runKey: lakeKeys.run(DT, RUN) });
  const claimFile = join(runRoot, RUN, 'run.json');
  const gone = spawnSync('true').pid;
  writeFileSync(
    claimFile,
    JSON.stringify({ ...JSON.parse(readFileSync(claimFile, 'utf8')), ownerPid: gone, ownerStartTime: null }),
  );

  // Act
  const result = await cleanupAllRuns(runRoot);

  // Assert
  expect(result.settled).toEqual([RUN]);
  expect(result.compacted).toEqual([RUN]);
  expect(readdirSync(join(lake, 'tables', 'steps', `dt=${DT}`))).toEqual([`${RUN}.parquet`]);
  expect(readdirSync(join(lake, 'tables', 'intervals', `dt=${DT}`))).toEqual([`${RUN}.parquet`]);
  expect(existsSync(join(lake, lakeKeys.run(DT, RUN)))).toBe(true);
  const counted = await withLake(lake, async (l) => ({
    runs: await l.query('SELECT run_id, status FROM runs'),
    steps: await l.query('SELECT step_id, status, tps FROM steps'),
    intervals: await l.query('SELECT count(*) AS n, sum(tps) AS tps FROM intervals'),
  }));
  expect(counted).toEqual({
    runs: [{ run_id: RUN, status: 'aborted' }],
    steps: [{ step_id: 's1', status: 'failed', tps: 12.5 }],
    intervals: [{ n: 3, tps: 60 }],
  });
});
