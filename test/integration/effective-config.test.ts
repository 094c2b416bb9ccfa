/**
 * The configuration that really ran (core/workflow/effective-config.ts), on real MariaDB servers and
 * the real runner: one local run of two cells. In "asked" every requested value is in effect: the
 * server's version, the requested value and the fixed performance list land in the server_config
 * table and the manifest, and the steps are measured. In "clash" MariaDB does not run what was
 * asked (innodb_io_capacity above innodb_io_capacity_max: MariaDB lowers innodb_io_capacity to the
 * maximum, "Setting innodb_io_capacity to ..."): the cell fails before measuring, naming the
 * parameter and both values, and has no step rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBackend } from '../../core/backends/local/local-backend';
import { lakeKeys, type RunRow, type ServerConfigRow } from '../../core/lake/rows';
import { withLake } from '../../core/lake/duckdb';
import { loadCompareSide } from '../../core/regression/load';
import { localJudge } from '../../core/regression/judge-local';
import { executeLocally, type LocalExecutionResult } from '../../core/workflow/local-runner';

const REPO = join(__dirname, '..', '..');
let lakeDir: string;
let runRoot: string;
let backend: LocalBackend;
let result: LocalExecutionResult;
const dt = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  lakeDir = mkdtempSync(join(tmpdir(), 'ab-config-lake-'));
  runRoot = mkdtempSync(join(tmpdir(), 'ab-config-runs-'));
  backend = new LocalBackend({ lakeDir, runRoot, repoRoot: REPO });
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
    input: {
      spec: {
        name: 'config-test',
        engine: { version: '3.04.0' },
        variants: [
          {
            name: 'asked',
            instanceClass: 'db.t3.medium',
            readers: 0,
            instanceParameters: { max_prepared_stmt_count: 23456 },
          },
          {
            name: 'clash',
            instanceClass: 'db.t3.medium',
            readers: 0,
            localOnlyParameters: { innodb_io_capacity: 400, innodb_io_capacity_max: 300 },
          },
        ],
        data: { tables: 1, tableSize: 200, prepareThreads: 1 },
        defaults: { durationS: 2, warmupS: 0, reportIntervalS: 1 },
        workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1] }],
      },
    },
    pollMs: 100,
    retryMs: 10,
  });
}, 180_000);
afterAll(() => {
  rmSync(lakeDir, { recursive: true, force: true });
  rmSync(runRoot, { recursive: true, force: true });
});

async function configRows(cellId: string): Promise<ServerConfigRow[]> {
  const text =
    (await backend.lake.get(lakeKeys.stepTable('server_config', dt(), result.runId!, cellId, 'ro-t1'))) ?? '';
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as ServerConfigRow);
}

describe('the configuration that really ran', () => {
  it('records what the writer runs with: version, the requested value in effect, the performance list', async () => {
    const rows = await configRows('asked-r1');

    expect(rows.find((r) => r.kind === 'version' && r.name === 'version')?.value).toMatch(/MariaDB/);
    expect(rows.find((r) => r.kind === 'requested' && r.name === 'max_prepared_stmt_count')).toMatchObject({
      value: '23456',
      requested: '23456',
      in_effect: true,
    });
    expect(rows.filter((r) => r.kind === 'performance').map((r) => r.name)).toEqual(
      expect.arrayContaining([
        'innodb_flush_log_at_trx_commit',
        'innodb_flush_method',
        'thread_handling',
        'sync_binlog',
      ]),
    );
    // The buffer pool the local backend sized from the instance class is a requested value too.
    expect(rows.find((r) => r.name === 'innodb_buffer_pool_size')).toMatchObject({
      kind: 'requested',
      in_effect: true,
    });
    expect(await backend.lake.get(lakeKeys.stepTable('steps', dt(), result.runId!, 'asked-r1', 'ro-t1'))).toBeDefined();
  });

  it('fails a cell whose requested value is not in effect before measuring, naming it with both values', async () => {
    const rows = await configRows('clash-r1');

    expect(result.status).toBe('FAILED');
    expect(result.cause).toMatch(
      /cell clash-r1 .*ConfigurationNotInEffectError|does not run with the configuration asked for/,
    );
    expect(result.cause).toMatch(/innodb_io_capacity: asked 400, clash-r1-w runs with 300/);
    expect(result.cause).not.toMatch(/asked-r1/);
    expect(rows.find((r) => r.name === 'innodb_io_capacity')).toMatchObject({
      requested: '400',
      value: '300',
      in_effect: false,
    });
    expect(
      await backend.lake.get(lakeKeys.stepTable('steps', dt(), result.runId!, 'clash-r1', 'ro-t1')),
    ).toBeUndefined();
  });

  it('the manifest carries each cell version and values, and the lake serves them to compare', async () => {
    const manifest = JSON.parse((await backend.lake.get(lakeKeys.run(dt(), result.runId!)))!.trim()) as RunRow;
    const summary = JSON.parse(manifest.server_config!) as Record<
      string,
      { version: string; values: Record<string, string>; notInEffect: string[] }
    >;

    expect(summary['asked-r1']!.version).toMatch(/MariaDB/);
    expect(summary['asked-r1']!.values['max_prepared_stmt_count']).toBe('23456');
    expect(summary['clash-r1']!.notInEffect).toEqual(['innodb_io_capacity']);
    const side = await withLake(lakeDir, (lake) => loadCompareSide(lake, result.runId!));
    expect(side.config).toEqual(
      expect.arrayContaining([{ variant: 'asked', name: 'max_prepared_stmt_count', value: '23456' }]),
    );
  });
});
