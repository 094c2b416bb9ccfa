/**
 * The local CloudWatch stand-in on a server no client uses (real mariadbd): every sample carries
 * every metric that CloudWatch publishes each period, as the window completeness of a step expects.
 * The seconds between a step's last query and the end of its window are such seconds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopServer, type ServerInfo } from '../../core/backends/local/mariadb-server';
import { ServerMetricsSampler } from '../../core/backends/local/metrics';
import { startTemplateWriter } from '../helpers/template-server';

let root: string;
let server: ServerInfo;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ab-idle-metrics-'));
  server = await startTemplateWriter(root, 'idle-w');
}, 300_000);

afterAll(async () => {
  await stopServer(server, { graceMs: 5_000 });
  rmSync(root, { recursive: true, force: true });
});

describe('metrics of an idle server', () => {
  it('every sample has a BufferCacheHitRatio, from the lifetime counters when the second read nothing', async () => {
    // Arrange: a writer without readers, so the sampler sends no heartbeat that would read pages.
    const sampler = new ServerMetricsSampler({ writer: server, readers: [], intervalMs: 200 });
    await sampler.start();
    // Act
    await new Promise((r) => setTimeout(r, 1_500));
    const samples = await sampler.stop();
    // Assert
    const times = (metric: string) => samples.filter((s) => s.metric === metric).map((s) => s.ts);
    expect(times('CPUUtilization').length).toBeGreaterThanOrEqual(3);
    expect(times('BufferCacheHitRatio')).toEqual(times('CPUUtilization'));
    const ratios = samples.filter((s) => s.metric === 'BufferCacheHitRatio').map((s) => s.value);
    expect(ratios.every((v) => v >= 0 && v <= 100)).toBe(true);
  });
});
