import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { planRun } from '../../core/plan/plan';
import { maxRepeats } from '../../core/experiment/rounds';
import { preparePlan } from '../../core/plan/prepare';
import { checkBudget, estimatePlanCost, loadPrices } from '../../core/plan/cost';
import { SpecSchema } from '../../core/experiment/schema';
import { dataOverBufferPool, scaleSpec, thinSweep } from '../../core/experiment/scale';
import { LOCAL_MEMORY_DIVISOR, localShape } from '../../core/backends/local/instance-classes';
import { loadSpecFile, parseSpecText } from '../../core/experiment/validate';
import { readFileSync } from 'node:fs';

const repoRoot = resolve(__dirname, '../..');
const experimentsDir = join(repoRoot, 'experiments');
const builtinWorkloads = join(repoRoot, 'client', 'workloads');
const STUDY_FILES = [
  'graviton-vs-intel.json',
  'thread-sweep.json',
  'write-forwarding.json',
  'network-throughput.json',
  'rate-sweep.json',
];

describe('the study experiments (experiments/*.json)', () => {
  it('ships one file per study', () => {
    // Act
    const files = readdirSync(experimentsDir).filter((f) => f.endsWith('.json'));
    // Assert
    expect(files).toEqual(expect.arrayContaining(STUDY_FILES));
  });

  it.each(STUDY_FILES.map((f) => [f]))('%s validates, plans on both backends, and fits its budget on AWS', (file) => {
    // Arrange
    const path = join(experimentsDir, file);
    const raw = parseSpecText(readFileSync(path, 'utf8'), path);
    // Act
    const parsed = SpecSchema.safeParse(raw);
    const { spec, scripts } = loadSpecFile(path, builtinWorkloads);
    const aws = planRun(spec, { backend: 'aws', scripts });
    const local = planRun(spec, { backend: 'local', scripts });
    const cost = checkBudget(aws, spec.budget, loadPrices(repoRoot));
    // Assert
    expect(parsed.success).toBe(true);
    // Every variant runs on AWS except a local-only what-if (localOnlyParameters), which the AWS plan refuses.
    const onAurora = spec.variants.filter(
      (v) =>
        v.localOnlyParameters === undefined &&
        spec.parameterTemplates[v.parameterTemplate ?? '']?.localOnlyParameters === undefined,
    );
    expect(aws.cells.length).toBe(onAurora.length * maxRepeats(spec));
    expect(aws.cells.length).toBeGreaterThan(0);
    expect(local.cells.length).toBeGreaterThan(0);
    expect(cost.total).not.toBeNull();
    expect(cost.total!).toBeLessThanOrEqual(spec.budget!.maxUsd);
  });

  it('keeps the exact S1 parameters', () => {
    // Act
    const { spec } = loadSpecFile(join(experimentsDir, 'graviton-vs-intel.json'), builtinWorkloads);
    // Assert
    // The study's 2.10.0 is retired: a current Aurora MySQL 3 release (the description says so).
    expect(spec.engine.version).toBe('3.10.4');
    expect(spec.variants.map((v) => `${v.instanceClass}@${v.az}`).sort()).toEqual([
      'db.r5.2xlarge@a',
      'db.r5.2xlarge@b',
      'db.r6g.2xlarge@a',
      'db.r6g.2xlarge@b',
    ]);
    expect(
      spec.variants.every(
        (v) =>
          v.instanceParameters['max_prepared_stmt_count'] === 1048576 &&
          v.performanceInsights &&
          v.clients.instanceType === 'c5.2xlarge',
      ),
    ).toBe(true);
    expect(spec.data).toMatchObject({ tables: 250, tableSize: 25000 });
    expect(spec.defaults).toMatchObject({ durationS: 600, percentile: 95, reportIntervalS: 20 });
    expect(spec.workloads.map((w) => [w.test, w.threads, w.options])).toEqual([
      ['oltp_read_only', [32], { range_selects: false, skip_trx: true }],
      ['oltp_write_only', [64], {}],
      ['oltp_read_write', [64], {}],
    ]);
    expect(spec.order).toBe('interleaved');
  });

  it('keeps the exact S3 read/write ratio sweep, scale-out and consistency levels', () => {
    // Act
    const { spec, scripts } = loadSpecFile(join(experimentsDir, 'write-forwarding.json'), builtinWorkloads);
    // Assert
    const ps = spec.workloads.filter((w) => /^ps\d+-writer$/.test(w.name)).map((w) => w.options.point_selects);
    expect(ps).toEqual([4, 6, 10, 16, 36]);
    expect(spec.workloads.find((w) => w.name === 'ps10-2readers')).toMatchObject({
      target: 'all-readers',
      threads: [32],
      clients: 2,
    });
    expect(
      spec.workloads.filter((w) => w.script).map((w) => (w.options as Record<string, unknown>)['consistency']),
    ).toEqual(['EVENTUAL', 'SESSION', 'GLOBAL']);
    expect(spec.variants[0]).toMatchObject({
      instanceClass: 'db.r5.xlarge',
      writeForwarding: { enabled: true, consistency: 'EVENTUAL', maxConnectionsPct: 90, idleTimeoutS: 60 },
    });
    expect(Object.keys(scripts)).toEqual(['rw_consistency.lua']);
  });

  it.each(STUDY_FILES.map((f) => [f]))(
    '%s scales down to a local rehearsal that plans and names what only AWS can do',
    (file) => {
      // Arrange
      const { spec, scripts } = loadSpecFile(join(experimentsDir, file), builtinWorkloads);
      // Act
      const { spec: small, notes } = scaleSpec(spec, 'small');
      const plan = planRun(small, { backend: 'local', scripts });
      // Assert
      expect(small.name).toBe(`${spec.name}-small`);
      // Data larger than the study's buffer pool stays larger (S2, its own test below); the rest is cut.
      if (dataOverBufferPool(spec) === undefined)
        expect(small.data.tables * small.data.tableSize).toBeLessThanOrEqual(40_000);
      const stepSeconds = plan.cells.reduce(
        (acc, c) => acc + c.steps.reduce((a, s) => a + s.durationS + s.warmupS, 0),
        0,
      );
      expect(stepSeconds).toBeLessThanOrEqual(15 * 60);
      expect(notes.some((n) => n.message.startsWith('scaled for a local rehearsal'))).toBe(true);
      expect(notes.every((n) => n.path !== '' && n.message !== '')).toBe(true);
    },
  );

  it('names the AWS-only parts of S3 and S4 in the local plan notes', () => {
    // Arrange
    const s3 = loadSpecFile(join(experimentsDir, 'write-forwarding.json'), builtinWorkloads);
    const s4 = loadSpecFile(join(experimentsDir, 'network-throughput.json'), builtinWorkloads);
    // Act
    const s3Small = scaleSpec(s3.spec, 'small');
    const s3Plan = planRun(s3Small.spec, { backend: 'local', scripts: s3.scripts });
    const s4Notes = scaleSpec(s4.spec, 'small')
      .notes.map((n) => n.message)
      .join('\n');
    // Assert
    const s3Text = [...s3Small.notes, ...s3Plan.notes].map((n) => n.message).join('\n');
    expect(s3Text).toMatch(/consistency levels \(EVENTUAL\/SESSION\/GLOBAL\)/);
    expect(s3Text).toMatch(/client-side EMULATION of Aurora write forwarding/);
    // Every reader step runs locally, as the emulation; the writer steps as they are.
    expect(
      s3Plan.cells[0]!.steps.filter((s) => s.target !== 'writer').every((s) => s.forwardedWrites !== undefined),
    ).toBe(true);
    expect(
      s3Plan.cells[0]!.steps.filter((s) => s.target === 'writer').every((s) => s.forwardedWrites === undefined),
    ).toBe(true);
    expect(
      s3Plan.cells[0]!.steps.filter((s) => s.forwardedWrites?.consistency === 'GLOBAL').map((s) => s.workload),
    ).toEqual(['consistency-global']);
    expect(s4Notes).toMatch(/CloudWatch NetworkTransmitThroughput/);
    expect(s4Notes).toMatch(/instance classes .* are only emulated locally/);
  });

  it('runs S2 on Aurora MySQL, RDS for MySQL and MariaDB, and self-managed MariaDB with and without pool', () => {
    // Arrange
    const { spec, scripts } = loadSpecFile(join(experimentsDir, 'thread-sweep.json'), builtinWorkloads);
    // Act
    const { spec: small } = scaleSpec(spec, 'small');
    const local = planRun(small, { backend: 'local', scripts });
    const aws = preparePlan({ spec, scripts }, { backend: 'aws', refusals: 'show' });
    // Assert: the thread pool is a parameter where the engine has one, never on Aurora
    expect(
      small.variants.map((v) => [v.name, v.engine?.kind ?? spec.engine.kind, v.instanceParameters['thread_handling']]),
    ).toEqual([
      ['aurora-mysql', 'aurora-mysql', undefined],
      ['rds-mysql', 'rds-mysql', undefined],
      ['rds-mariadb-pool', 'rds-mariadb', 'pool-of-threads'],
      ['rds-mariadb-per-conn', 'rds-mariadb', 'one-thread-per-connection'],
      ['self-managed-pool', 'self-managed', 'pool-of-threads'],
      ['self-managed-per-conn', 'self-managed', 'one-thread-per-connection'],
    ]);
    expect(small.workloads[0]!.threads).toEqual([2, 8, 64, 256, 1024]);
    expect(new Set(local.cells.map((c) => c.variant.name)).size).toBe(6);
    // On AWS: priced (the self-managed servers' EBS volumes included), within the budget, nothing refused.
    const cost = estimatePlanCost(aws.plan, loadPrices(repoRoot));
    expect(cost.total).not.toBeNull();
    expect(cost.total!).toBeLessThanOrEqual(spec.budget!.maxUsd);
    expect(cost.notes.join('\n')).toMatch(/self-managed variants: each server's gp3 root volume/);
    expect(aws.notes.filter((n) => n.level === 'refused')).toEqual([]);
    // Aurora's relaxed durability: 0 with the acknowledgement Aurora MySQL
    // 3 requires; the original template only where a server takes it
    expect(spec.parameterTemplates['aurora-tuned']!.clusterParameters).toEqual({
      innodb_flush_log_at_trx_commit: 0,
      innodb_trx_commit_allow_data_loss: 1,
    });
    expect(spec.parameterTemplates['self-managed']!.instanceParameters).toMatchObject({
      innodb_flush_method: 'O_DIRECT',
      innodb_flush_neighbors: 0,
      sync_binlog: 1000,
    });
    // sizing stays as written: the local backend scales the class (12G buffer pool -> 192 MiB)
    expect(small.parameterTemplates['aurora-tuned']!.instanceParameters['innodb_buffer_pool_size']).toBe(12884901888);
  });

  it("keeps S2's data larger than its buffer pool at --scale small, scaling the rows like the pool", () => {
    // Arrange: 10 x 10M rows (about 22 GiB) over a 12 GiB buffer pool, which the local backend scales to 1/64
    const { spec } = loadSpecFile(join(experimentsDir, 'thread-sweep.json'), builtinWorkloads);
    const poolScale = localShape('db.r6g.2xlarge', { cpus: 2, memoryBytes: 24 * 1024 ** 3 }).memoryScale;
    // Act
    const { spec: small, notes } = scaleSpec(spec, 'small');
    // Assert: rows scaled by the pool's own factor, so the data-to-pool ratio is the study's
    const rows = small.data.tables * small.data.tableSize;
    expect(poolScale).toBe(1 / LOCAL_MEMORY_DIVISOR);
    expect(rows / (spec.data.tables * spec.data.tableSize)).toBeCloseTo(poolScale, 6);
    expect(small.data).toMatchObject({ tables: 4, tableSize: 390_625 });
    expect(notes.find((n) => n.path === 'data')!.message).toBe(
      'scaled for a local rehearsal: 10 x 10,000,000 rows -> 4 x 390,625: 1/64 of the rows, as the 12 GiB ' +
        'buffer pool is 1/64 locally, so the data stays larger than the buffer pool (about 1.9x, about 22 GiB ' +
        'at full scale)',
    );
  });

  it('cuts the data to 4 x 10,000 rows where no buffer pool is set, or the data fits it', () => {
    // Arrange
    const { spec: base } = loadSpecFile(join(experimentsDir, 'quickstart.json'), builtinWorkloads);
    const big = { ...base, data: { ...base.data, tables: 8, tableSize: 1_000_000 } };
    const withPool = (pool: number | string) => ({
      ...big,
      variants: big.variants.map((v) => ({ ...v, instanceParameters: { innodb_buffer_pool_size: pool } })),
    });
    // Act / Assert
    expect(dataOverBufferPool(big)).toBeUndefined();
    expect(dataOverBufferPool(withPool('{DBInstanceClassMemory*3/4}'))).toBeUndefined();
    expect(dataOverBufferPool(withPool('4G'))).toBeUndefined();
    expect(dataOverBufferPool(withPool('1G'))).toMatchObject({ poolBytes: 1024 ** 3 });
    expect(scaleSpec(big, 'small').spec.data).toMatchObject({ tables: 4, tableSize: 10_000 });
    expect(scaleSpec(withPool('1G'), 'small').spec.data).toMatchObject({ tables: 4, tableSize: 31_250 });
  });

  it('thins sweeps keeping both ends', () => {
    // Act / Assert
    expect(thinSweep([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 4)).toEqual([1, 4, 7, 10]);
    expect(thinSweep([3, 1, 2], 5)).toEqual([1, 2, 3]);
  });

  it('estimates the whole AWS cost of every study', () => {
    // Act
    const totals = STUDY_FILES.map((f) => {
      const { spec, scripts } = loadSpecFile(join(experimentsDir, f), builtinWorkloads);
      return [f, Math.round(estimatePlanCost(planRun(spec, { backend: 'aws', scripts }), loadPrices(repoRoot)).total!)];
    });
    // Assert: every study has a priced, non-trivial estimate
    for (const [, total] of totals) expect(total).toBeGreaterThan(0);
  });
});
