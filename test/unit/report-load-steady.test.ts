/**
 * The report's server-metric means over the seconds the load filled (core/report/load.ts steady_value), from a
 * planted local lake: a reader step's writer commits as the lake of a local S3 rehearsal holds them, its load
 * starting late in the window (a datapoint at 0, then one at half the rate) and a last one after the load ended.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withLake } from '../../core/lake/duckdb';
import { loadRun } from '../../core/report/load';
import { metricRow, runRow, stepRow, writeRun, writeStepTable } from '../helpers/lake-fixtures';

describe('the server metrics over the seconds the load filled', () => {
  let lakeDir = '';
  beforeAll(() => {
    lakeDir = mkdtempSync(join(tmpdir(), 'steady-'));
  });
  afterAll(() => rmSync(lakeDir, { recursive: true, force: true }));

  it('leaves out the window edges and a datapoint below half the others, not the steady seconds', async () => {
    // Arrange: rw-reader t128's writer CommitThroughput: 0 and 400 (load starting), seven near 1,192/s, 157 (ended).
    const values = [0, 400, 1140, 1178, 1168, 1174, 1207, 1235, 1245, 157];
    writeRun(lakeDir, runRow({ run_id: 'r' }));
    writeStepTable(lakeDir, 'steps', [stepRow({ run_id: 'r', variant: 'a', step_id: 'rw-reader-t128', tps: 1177 })]);
    writeStepTable(
      lakeDir,
      'server_metrics',
      values.map((value, i) =>
        metricRow({
          run_id: 'r',
          variant: 'a',
          step_id: 'rw-reader-t128',
          metric: 'CommitThroughput',
          value,
          ts: `2024-05-01T10:00:${String(10 + i).padStart(2, '0')}.000Z`,
        }),
      ),
    );
    // Act
    const data = await withLake(lakeDir, (lake) => loadRun(lake, 'r'));
    // Assert: the plain mean reads 86% of sysbench's 1,177; the steady one the seven full seconds' 1,192.
    const m = data.metrics.find((x) => x.metric === 'CommitThroughput')!;
    expect(m.avg_value).toBeCloseTo(values.reduce((a, b) => a + b, 0) / values.length, 6);
    expect(m.steady_value).toBeCloseTo((1140 + 1178 + 1168 + 1174 + 1207 + 1235 + 1245) / 7, 6);
  });
});
