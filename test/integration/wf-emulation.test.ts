/**
 * The local write-forwarding emulation (client/workloads/wf_emulation.lua) on real MariaDB GTID
 * replication: steps that send writes to a reader of a write-forwarding variant, refused locally
 * before, run through the local workflow with their reads on the reader and their writes on a
 * second connection to the writer; SESSION waits for the session's last write GTID and GLOBAL for
 * the writer's position (MASTER_GTID_WAIT), so neither reads its own write stale. One run shares
 * the servers across the assertions.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBackend } from '../../core/backends/local/local-backend';
import { lakeKeys, type StepRow } from '../../core/lake/rows';
import type { SpecInput } from '../../core/experiment/schema';
import { executeLocally, type LocalExecutionResult } from '../../core/workflow/local-runner';
import { localJudge } from '../../core/regression/judge-local';

const REPO = join(__dirname, '..', '..');

describe('write forwarding emulated locally (wf_emulation.lua)', () => {
  let lakeDir: string;
  let runRoot: string;
  let backend: LocalBackend;
  let result: LocalExecutionResult;
  const rows = async (stepId: string): Promise<StepRow[]> => {
    const dt = new Date().toISOString().slice(0, 10);
    const text = (await backend.lake.get(lakeKeys.stepTable('steps', dt, result.runId!, 'fwd-r1', stepId))) ?? '';
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as StepRow);
  };
  const output = (stepId: string): string =>
    readFileSync(
      join(
        lakeDir,
        lakeKeys.raw(new Date().toISOString().slice(0, 10), result.runId!, 'fwd-r1', stepId, 'run', 'client-1'),
        'output.log',
      ),
      'utf8',
    );

  beforeAll(async () => {
    // Arrange: one cell, a writer and a reader with write forwarding on; the S3 shapes at 4 threads
    lakeDir = mkdtempSync(join(tmpdir(), 'ab-wfe-lake-'));
    runRoot = mkdtempSync(join(tmpdir(), 'ab-wfe-runs-'));
    backend = new LocalBackend({ lakeDir, runRoot, repoRoot: REPO });
    const body = readFileSync(join(REPO, 'experiments', 'workloads', 'rw_consistency.lua'), 'utf8');
    const spec: SpecInput = {
      name: 'wfe-test',
      engine: { version: '3.04.0' },
      variants: [
        {
          name: 'fwd',
          instanceClass: 'db.t3.medium',
          readers: 1,
          writeForwarding: { enabled: true, consistency: 'EVENTUAL' },
        },
      ],
      data: { tables: 2, tableSize: 500, prepareThreads: 1 },
      defaults: { durationS: 3, warmupS: 0, reportIntervalS: 1 },
      workloads: [
        { name: 'rw-reader', test: 'oltp_read_write', threads: [4], target: 'reader' },
        { name: 'wo-reader', test: 'oltp_write_only', threads: [4], target: 'reader' },
        ...(['EVENTUAL', 'SESSION', 'GLOBAL'] as const).map((level) => ({
          name: `consistency-${level.toLowerCase()}`,
          script: 'rw_consistency.lua',
          options: { consistency: level },
          threads: [4],
          target: 'reader' as const,
        })),
      ],
    };
    // Act
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
      input: { spec, scripts: { 'rw_consistency.lua': body } },
      pollMs: 100,
      retryMs: 10,
    });
  }, 300_000);

  afterAll(() => {
    rmSync(lakeDir, { recursive: true, force: true });
    rmSync(runRoot, { recursive: true, force: true });
  });

  it('runs every reader step (none refused), with its reads on the reader and its writes on the writer', async () => {
    // Assert
    expect({
      status: result.status,
      cause: result.status === 'SUCCEEDED' ? '' : JSON.stringify(result).slice(-3000),
    }).toEqual({ status: 'SUCCEEDED', cause: '' });
    const rw = (await rows('rw-reader-t4'))[0]!;
    const wo = (await rows('wo-reader-t4'))[0]!;
    expect([rw.status, rw.endpoint_instance, wo.status]).toEqual(['ok', expect.stringMatching(/^fwd-r1-r\d+$/), 'ok']);
    // write-only reads nothing but the emulation's few set-up queries per connection (@@port, the GTID catch-up)
    expect([rw.tps! > 0, rw.reads! > 0, rw.writes! > 0, wo.writes! > 0, wo.reads! < rw.reads! / 10]).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(output('rw-reader-t4')).toMatch(/"aurora_bench_gtid_waits":\{"level":"EVENTUAL","waits":0,/);
  });

  it('SESSION and GLOBAL wait for GTIDs on the replica, reading no own write stale; EVENTUAL does not', async () => {
    // Assert
    const levels = await Promise.all(
      ['eventual', 'session', 'global'].map(async (l) => (await rows(`consistency-${l}-t4`))[0]!),
    );
    for (const r of levels)
      expect({ step: r.step_id, status: r.status, checked: r.read_back_checks! > 0 }).toEqual({
        step: r.step_id,
        status: 'ok',
        checked: true,
      });
    expect(levels.slice(1).map((r) => r.stale_reads)).toEqual([0, 0]);
    const waits = (stepId: string): number[] =>
      [...output(stepId).matchAll(/"aurora_bench_gtid_waits":\{"level":"\w+","waits":(\d+),"timeouts":(\d+)\}/g)].map(
        (m) => Number(m[1]),
      );
    expect(waits('consistency-eventual-t4').every((w) => w === 0)).toBe(true);
    expect(waits('consistency-session-t4').every((w) => w > 0)).toBe(true);
    expect(waits('consistency-global-t4').every((w) => w > 0)).toBe(true);
  });
});
