/**
 * Engine kinds in the spec: validation against each engine's facts (core/aurora/engines.ts),
 * plans naming the engine and what only AWS shows, the AWS backend's refusal of engines it does not
 * provision yet, and cost per engine.
 */
import { join } from 'node:path';
import { loadSpecFile, SpecError, validateSpec } from '../../core/experiment/validate';
import type { SpecInput } from '../../core/experiment/schema';
import {
  localWriteForwarding,
  parameterGroupFamily,
  serverVolumeGib,
  ENGINE_KINDS,
  ENGINES,
} from '../../core/aurora/engines';
import { planRun } from '../../core/plan/plan';
import { preparePlan } from '../../core/plan/prepare';
import { cellEngine } from '../../core/plan/types';
import { checkBudget, estimatePlanCost, loadPrices } from '../../core/plan/cost';
import { renderPlan } from '../../core/cli/plan-view';

const repoRoot = join(__dirname, '..', '..');
const NOW = new Date('2026-11-22T22:00:00Z');

function spec(engine: SpecInput['engine'], variant: Partial<SpecInput['variants'][number]> = {}): SpecInput {
  return {
    name: 'eng',
    engine,
    variants: [{ name: 'a', instanceClass: 'db.r6g.large', ...variant }],
    data: { tables: 1, tableSize: 100 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', durationS: 60 }],
  };
}

function problemsOf(doc: unknown): { path: string; message: string }[] {
  try {
    validateSpec(doc, 'exp.json');
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    expect((e as SpecError).message).toMatch(/^exp\.json: invalid experiment spec/);
    return [...(e as SpecError).problems];
  }
  throw new Error('expected the spec to be invalid');
}

describe('engine facts', () => {
  it('maps each engine version to its RDS parameter group family', () => {
    // Arrange / Act / Assert: families as botocore's CreateDBParameterGroup examples spell them.
    expect(parameterGroupFamily({ kind: 'aurora-mysql', version: '3.04.0' })).toBe('aurora-mysql8.0');
    expect(parameterGroupFamily({ kind: 'aurora-mysql', version: '5.7.mysql_aurora.2.11.2' })).toBe('aurora-mysql5.7');
    expect(parameterGroupFamily({ kind: 'aurora-postgresql', version: '16.4' })).toBe('aurora-postgresql16');
    expect(parameterGroupFamily({ kind: 'rds-mysql', version: '8.0.39' })).toBe('mysql8.0');
    expect(parameterGroupFamily({ kind: 'rds-mariadb', version: '10.11.9' })).toBe('mariadb10.11');
    expect(parameterGroupFamily({ kind: 'rds-postgresql', version: '15.8' })).toBe('postgres15');
    expect(parameterGroupFamily({ kind: 'self-managed', version: 'mariadb-10.11' })).toBeUndefined();
  });

  it('has local write forwarding only where AWS documents it, from the documented versions', () => {
    // Aurora PostgreSQL: 16.4+, 15.8+, 14.13+ (Aurora User Guide, "Local write forwarding in Aurora PostgreSQL").
    const apg = (version: string) => localWriteForwarding({ kind: 'aurora-postgresql', version }).supported;
    expect([apg('16.4'), apg('16.6'), apg('15.8'), apg('14.13'), apg('17.2')]).toEqual([true, true, true, true, true]);
    expect([apg('16.3'), apg('15.7'), apg('14.12'), apg('13.9')]).toEqual([false, false, false, false]);
    expect(localWriteForwarding({ kind: 'aurora-mysql', version: '3.04.0' }).supported).toBe(true);
    expect(localWriteForwarding({ kind: 'aurora-mysql', version: '3.03.1' }).supported).toBe(false);
    for (const kind of ['rds-mysql', 'rds-mariadb', 'rds-postgresql', 'self-managed'] as const) {
      expect(localWriteForwarding({ kind, version: 'any' }).supported).toBe(false);
    }
  });

  it('gives every kind a sysbench driver matching its local server', () => {
    for (const kind of ENGINE_KINDS) {
      expect(ENGINES[kind].driver).toBe(ENGINES[kind].localServer === 'postgresql' ? 'pgsql' : 'mysql');
    }
  });
});

describe('engine kinds in the spec', () => {
  it('accepts each kind with a version of its own form, and a variant with its own engine', () => {
    // Arrange
    const docs: SpecInput[] = [
      spec({ kind: 'aurora-postgresql', version: '16.4' }),
      spec({ kind: 'rds-mysql', version: '8.0.39' }),
      spec({ kind: 'rds-mariadb', version: '10.11.9' }, { instanceParameters: { thread_handling: 'pool-of-threads' } }),
      spec({ kind: 'rds-postgresql', version: '16.4' }),
      spec({ kind: 'self-managed', version: 'mariadb-10.11' }),
      spec({ version: '3.04.0' }, { engine: { kind: 'rds-mariadb', version: '10.11.9' } }),
    ];
    // Act
    const specs = docs.map((d) => validateSpec(d, 'exp.json'));
    // Assert
    expect(specs.map((s) => s.variants[0]!.engine?.kind ?? s.engine.kind)).toEqual([
      'aurora-postgresql',
      'rds-mysql',
      'rds-mariadb',
      'rds-postgresql',
      'self-managed',
      'rds-mariadb',
    ]);
  });

  it('refuses a version that is not of the engine, naming the JSON path and the expected form', () => {
    const problems = problemsOf(spec({ kind: 'aurora-postgresql', version: '3.04.0' }));
    expect(problems).toEqual([
      {
        path: 'engine.version',
        message: expect.stringMatching(/"3\.04\.0" is not a version of Aurora PostgreSQL: use e\.g\. "16\.4"/),
      },
    ]);
    const variant = problemsOf(spec({ version: '3.04.0' }, { engine: { kind: 'rds-mariadb', version: '8.0.39' } }));
    expect(variant).toEqual([
      { path: 'variants[0].engine.version', message: expect.stringMatching(/is not a version of RDS for MariaDB/) },
    ]);
    expect(problemsOf(spec({ kind: 'oracle' as never, version: '19' }))[0]!.path).toBe('engine.kind');
  });

  it('refuses write forwarding where the engine or its version lacks it', () => {
    const wf = { writeForwarding: { enabled: true }, readers: 1 };
    expect(problemsOf(spec({ kind: 'aurora-postgresql', version: '15.4' }, wf))).toEqual([
      {
        path: 'variants[0].writeForwarding.enabled',
        message: expect.stringMatching(/needs 16\.4 or a later 16, 15\.8 or a later 15.*15\.4/),
      },
    ]);
    expect(problemsOf(spec({ kind: 'rds-mysql', version: '8.0.39' }, wf))).toEqual([
      {
        path: 'variants[0].writeForwarding.enabled',
        message: expect.stringMatching(/RDS for MySQL has no local write forwarding/),
      },
    ]);
    expect(
      problemsOf(
        spec(
          { kind: 'aurora-postgresql', version: '15.8' },
          { ...wf, writeForwarding: { enabled: true, maxConnectionsPct: 20 } },
        ),
      ),
    ).toEqual([
      { path: 'variants[0].writeForwarding.maxConnectionsPct', message: expect.stringMatching(/apg_write_forward/) },
    ]);
    expect(() => validateSpec(spec({ kind: 'aurora-postgresql', version: '15.8' }, wf))).not.toThrow();
  });

  it('checks Aurora MySQL parameters only on Aurora MySQL variants', () => {
    // thread_handling: Aurora MySQL refuses it (not modifiable); RDS for MariaDB has it.
    const mixed = spec(
      { version: '3.04.0' },
      {
        engine: { kind: 'rds-mariadb', version: '10.11.9' },
        instanceParameters: { thread_handling: 'pool-of-threads' },
      },
    );
    mixed.variants.push({
      name: 'b',
      instanceClass: 'db.r6g.large',
      instanceParameters: { thread_handling: 'pool-of-threads' },
    });
    expect(problemsOf(mixed).map((p) => p.path)).toEqual(['variants[1].instanceParameters.thread_handling']);
  });

  it(
    "checks RDS engines' parameters against the rules the RDS User Guide states: the thread pool is RDS for " +
      "MariaDB's, not RDS for MySQL's",
    () => {
      // Arrange
      const mariadb = spec(
        { kind: 'rds-mariadb', version: '10.11.9' },
        { instanceParameters: { thread_handling: 'pool-of-threads', thread_pool_size: 16 } },
      );
      const mysql = spec(
        { kind: 'rds-mysql', version: '8.0.39' },
        { instanceParameters: { thread_handling: 'pool-of-threads' } },
      );
      const badValue = spec(
        { kind: 'rds-mariadb', version: '10.11.9' },
        { instanceParameters: { thread_handling: 'pool' } },
      );
      const mysqlOnly = spec(
        { kind: 'rds-mariadb', version: '10.11.9' },
        {
          clusterParameters: { optimizer_trace: 'enabled=on' },
          instanceParameters: { aurora_use_vector_instructions: 1 },
        },
      );
      const apgOnRds = spec(
        { kind: 'rds-postgresql', version: '16.4' },
        { clusterParameters: { 'apg_write_forward.consistency_mode': 'session' } },
      );
      // Act / Assert
      expect(() => validateSpec(mariadb)).not.toThrow();
      expect(problemsOf(mysql)).toEqual([
        {
          path: 'variants[0].instanceParameters.thread_handling',
          message: expect.stringMatching(
            /MariaDB-only parameter .*the thread pool is a parameter on RDS for MariaDB, not RDS for MySQL/,
          ),
        },
      ]);
      expect(problemsOf(badValue)).toEqual([
        {
          path: 'variants[0].instanceParameters.thread_handling',
          message: expect.stringMatching(/takes one-thread-per-connection, no-threads, pool-of-threads, got "pool"/),
        },
      ]);
      expect(problemsOf(mysqlOnly).map((p) => p.path)).toEqual([
        'variants[0].clusterParameters.optimizer_trace',
        'variants[0].instanceParameters.aurora_use_vector_instructions',
      ]);
      expect(problemsOf(apgOnRds)).toEqual([
        {
          path: 'variants[0].clusterParameters.apg_write_forward.consistency_mode',
          message: expect.stringMatching(/Aurora PostgreSQL parameter/),
        },
      ]);
    },
  );

  it('refuses a self-managed class whose EC2 instance type does not exist', () => {
    expect(
      problemsOf(spec({ kind: 'self-managed', version: 'mariadb-10.11' }, { instanceClass: 'db.r6x.large' })),
    ).toEqual([
      { path: 'variants[0].instanceClass', message: expect.stringMatching(/EC2 instance type "r6x\.large"/) },
    ]);
  });
});

describe('engines in the plan', () => {
  it('names each cell engine and, locally, what only AWS shows', () => {
    // Arrange
    const s = validateSpec(spec({ version: '3.04.0' }, { engine: { kind: 'aurora-postgresql', version: '16.4' } }));
    // Act
    const plan = planRun(s, { backend: 'local', now: NOW });
    // Assert
    expect(cellEngine(plan, plan.cells[0]!)).toEqual({ kind: 'aurora-postgresql', version: '16.4' });
    expect(plan.notes).toContainEqual({
      level: 'info',
      path: 'variants[0].engine',
      message: expect.stringMatching(
        /runs locally on PostgreSQL .* pgsql driver; only AWS shows Aurora's shared storage volume/,
      ),
    });
    expect(renderPlan(plan)).toMatch(/Aurora PostgreSQL 16\.4/);
  });

  it('plans every engine on AWS, self-managed servers included, and prices their EBS volumes', () => {
    // Arrange
    const selfManaged = validateSpec(
      spec({ kind: 'self-managed', version: 'mariadb-10.11' }, { instanceClass: 'db.r6g.large' }),
    );
    const onAws: SpecInput['engine'][] = [
      { kind: 'rds-postgresql', version: '16.4' },
      { kind: 'rds-mysql', version: '8.0.39' },
      { kind: 'rds-mariadb', version: '10.11.9' },
      { kind: 'aurora-postgresql', version: '16.4' },
      { kind: 'aurora-mysql', version: '3.04.0' },
    ];
    const prices = loadPrices(repoRoot);
    // Act
    const shown = preparePlan({ spec: selfManaged, scripts: {} }, { backend: 'aws', now: NOW, source: 'exp.json' });
    const cost = estimatePlanCost(shown.plan, prices);
    const withoutEbs = structuredClone(prices);
    delete withoutEbs.regions['us-east-1']!.ebsGp3GbMonth;
    // Assert
    expect(shown.notes.filter((n) => n.level === 'refused')).toEqual([]);
    for (const engine of onAws) {
      expect(() =>
        preparePlan({ spec: validateSpec(spec(engine)), scripts: {} }, { backend: 'aws', now: NOW }),
      ).not.toThrow();
    }
    // Each server (writer and readers) has a gp3 volume of serverVolumeGib for the cell's hours.
    const cell = shown.plan.cells[0]!;
    const gib = serverVolumeGib(cell.data) * (1 + cell.variant.readers);
    expect(cost.cells[0]!.storageCost).toBeCloseTo(
      (gib * prices.regions['us-east-1']!.ebsGp3GbMonth! * cost.cells[0]!.hours) / 730,
      9,
    );
    expect(cost.cells[0]!.storageCost).toBeGreaterThan(0);
    expect(cost.notes.join('\n')).toMatch(/self-managed variants: each server's gp3 root volume/);
    expect(estimatePlanCost(shown.plan, withoutEbs).missing).toContain(
      "ebsGp3GbMonth (self-managed servers' EBS volumes)",
    );
  });

  it(
    'prices each engine from its own entries, falls back for Aurora PostgreSQL with a note, and names an ' +
      'engine without prices',
    () => {
      // Arrange
      const prices = loadPrices(repoRoot);
      const withoutApg = structuredClone(prices);
      delete withoutApg.regions['us-east-1']!.dbInstanceHourlyByEngine!['aurora-postgresql'];
      const withoutRds = structuredClone(prices);
      delete withoutRds.regions['us-east-1']!.dbInstanceHourlyByEngine!['rds-mariadb'];
      const apg = planRun(validateSpec(spec({ kind: 'aurora-postgresql', version: '16.4' })), {
        backend: 'aws',
        now: NOW,
      });
      const ams = planRun(validateSpec(spec({ version: '3.04.0' })), { backend: 'aws', now: NOW });
      const rds = planRun(validateSpec(spec({ kind: 'rds-mariadb', version: '10.11.9' })), {
        backend: 'aws',
        now: NOW,
      });
      // Act
      const [apgCost, amsCost, rdsCost] = [apg, ams, rds].map((p) => estimatePlanCost(p, prices));
      const apgFallback = estimatePlanCost(apg, withoutApg);
      const rdsMissing = estimatePlanCost(rds, withoutRds);
      // Assert
      expect(apgCost!.total).not.toBeNull();
      expect(apgCost!.notes.join('\n')).not.toMatch(/priced at the Aurora MySQL-Compatible figure/);
      expect(rdsCost!.total).not.toBeNull();
      // RDS for MariaDB's db.r6g.large is listed below Aurora's (no shared storage layer in its price).
      expect(rdsCost!.cells[0]!.dbCost!).toBeLessThan(amsCost!.cells[0]!.dbCost!);
      // RDS bills the gp3 storage allocated to each instance (20 GiB here, the least RDS takes), no I/O.
      expect(rdsCost!.cells[0]!.storageCost).toBeGreaterThan(0);
      expect(rdsCost!.cells[0]!.ioCost).toBe(0);
      expect(apgFallback.cells[0]!.dbCost).toBe(amsCost!.cells[0]!.dbCost);
      expect(apgFallback.notes.join('\n')).toMatch(
        /Aurora PostgreSQL db\.r6g\.large priced at the Aurora MySQL-Compatible figure/,
      );
      expect(rdsMissing.total).toBeNull();
      expect(rdsMissing.missing).toEqual(['rds-mariadb db.r6g.large']);
    },
  );
});

describe('experiments/apg-graviton-vs-intel.json', () => {
  it('validates, plans on AWS with a cost within its budget, and runs on the AWS backend', () => {
    // Arrange
    const file = join(repoRoot, 'experiments', 'apg-graviton-vs-intel.json');
    const loaded = loadSpecFile(file, join(repoRoot, 'client', 'workloads'));
    // Act
    const shown = preparePlan(loaded, { backend: 'aws', now: NOW, refusals: 'show', source: file });
    const cost = checkBudget(shown.plan, loaded.spec.budget, loadPrices(repoRoot));
    // Assert
    expect(loaded.spec.engine).toEqual({ kind: 'aurora-postgresql', version: '16.4' });
    expect(loaded.spec.variants.map((v) => `${v.engine?.kind ?? loaded.spec.engine.kind} ${v.instanceClass}`)).toEqual([
      'aurora-postgresql db.r5.2xlarge',
      'aurora-postgresql db.r6g.2xlarge',
      'rds-postgresql db.r6g.2xlarge',
    ]);
    expect(shown.plan.cells).toHaveLength(9);
    expect(cost.total).not.toBeNull();
    expect(cost.total!).toBeLessThanOrEqual(loaded.spec.budget!.maxUsd);
    expect(shown.notes.filter((n) => n.level === 'refused')).toEqual([]);
    expect(() => preparePlan(loaded, { backend: 'aws', now: NOW, source: file })).not.toThrow();
    const local = preparePlan(loaded, { backend: 'local', now: NOW, scale: 'small', source: file });
    expect(new Set(local.plan.cells.map((c) => cellEngine(local.plan, c).kind))).toEqual(
      new Set(['aurora-postgresql', 'rds-postgresql']),
    );
  });
});
