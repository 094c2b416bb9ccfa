import { localShape } from '../../core/backends/local/instance-classes';
import {
  parseSize,
  planParameters,
  type ParameterContext,
  type VariableCatalog,
  type VariableInfo,
} from '../../core/backends/local/parameters';
import { evaluateFormula, FormulaError } from '../../core/aurora/rds-formula';
import type { ResolvedVariant } from '../../core/plan/types';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const HOST = { cpus: 2, memoryBytes: 24 * GiB };

/**
 * A slice of MariaDB 10.11's information_schema.SYSTEM_VARIABLES (types, ranges, READ_ONLY as the server reports them).
 */
const CATALOG: VariableCatalog = new Map<string, VariableInfo>(
  (
    [
      {
        name: 'thread_handling',
        readOnly: true,
        type: 'ENUM',
        enumValues: ['one-thread-per-connection', 'no-threads', 'pool-of-threads'],
        scope: 'GLOBAL',
      },
      {
        name: 'innodb_buffer_pool_size',
        readOnly: false,
        type: 'BIGINT UNSIGNED',
        min: 2097152,
        max: 18446744073701163008,
        scope: 'GLOBAL',
      },
      { name: 'max_connections', readOnly: false, type: 'BIGINT UNSIGNED', min: 10, max: 100000, scope: 'GLOBAL' },
      { name: 'sync_binlog', readOnly: false, type: 'INT UNSIGNED', min: 0, max: 4294967295, scope: 'GLOBAL' },
      {
        name: 'innodb_flush_log_at_trx_commit',
        readOnly: false,
        type: 'BIGINT UNSIGNED',
        min: 0,
        max: 3,
        scope: 'GLOBAL',
      },
      {
        name: 'innodb_flush_method',
        readOnly: true,
        type: 'ENUM',
        enumValues: ['fsync', 'O_DSYNC', 'littlesync', 'nosync', 'O_DIRECT', 'O_DIRECT_NO_FSYNC'],
        scope: 'GLOBAL',
      },
      {
        name: 'max_prepared_stmt_count',
        readOnly: false,
        type: 'INT UNSIGNED',
        min: 0,
        max: 4294967295,
        scope: 'GLOBAL',
      },
      {
        name: 'binlog_format',
        readOnly: false,
        type: 'ENUM',
        enumValues: ['MIXED', 'STATEMENT', 'ROW'],
        scope: 'SESSION',
      },
      { name: 'slow_query_log', readOnly: false, type: 'BOOLEAN', enumValues: ['OFF', 'ON'], scope: 'GLOBAL' },
      { name: 'server_id', readOnly: false, type: 'INT UNSIGNED', min: 1, max: 4294967295, scope: 'SESSION' },
      {
        name: 'tmp_table_size',
        readOnly: false,
        type: 'BIGINT UNSIGNED',
        min: 0,
        max: 2 ** 64 /* BIGINT UNSIGNED's 2^64-1 as a double rounds to 2^64 */,
        scope: 'SESSION',
      },
    ] satisfies VariableInfo[]
  ).map((v) => [v.name, v]),
);

function variant(over: Partial<ResolvedVariant> = {}): ResolvedVariant {
  return {
    name: 'r6g',
    instanceClass: 'db.r6g.2xlarge',
    readers: 1,
    clusterParameters: {},
    instanceParameters: {},
    performanceInsights: false,
    clients: { count: 1, instanceType: 'c6i.large', placement: 'same-az' },
    ...over,
  };
}

function context(v: ResolvedVariant, role: 'writer' | 'reader' = 'writer'): ParameterContext {
  return {
    variant: v,
    shape: localShape(v.instanceClass, HOST),
    catalog: CATALOG,
    role,
    serverVersion: '10.11.19-MariaDB',
  };
}

describe('planParameters', () => {
  it('applies no option that names a file, under any of its names, from localOnlyParameters', () => {
    // Arrange: both names MariaDB 10.11 has for the slow log's file, and the general log's, as VARCHAR variables.
    const names = ['log_slow_query_file', 'slow_query_log_file', 'general_log_file', 'init_file'];
    const catalog = new Map(CATALOG);
    for (const name of names) catalog.set(name, { name, readOnly: false, type: 'VARCHAR', scope: 'GLOBAL' });
    const v = variant({ localOnlyParameters: Object.fromEntries(names.map((n) => [n, `/etc/${n}`])) });

    // Act
    const plan = planParameters({ ...context(v), catalog });

    // Assert
    expect(plan.applied.map((a) => a.name).filter((n) => names.includes(n))).toEqual([]);
    expect(plan.notes.filter((n) => n.level === 'warning').map((n) => n.path)).toEqual(
      names.map((n) => `variants[name=r6g].localOnlyParameters.${n}`),
    );
  });

  it('applies the S2 template: startup-only ones to the option file, dynamic ones by SET GLOBAL', () => {
    // Arrange
    const v = variant({
      clusterParameters: { sync_binlog: 1000, innodb_flush_log_at_trx_commit: 2, max_prepared_stmt_count: 1048575 },
      instanceParameters: { innodb_flush_method: 'O_DIRECT', thread_handling: 'pool-of-threads' },
    });

    // Act
    const plan = planParameters(context(v));

    // Assert
    expect(plan.startup).toMatchObject({ thread_handling: 'pool-of-threads', innodb_flush_method: 'O_DIRECT' });
    expect(plan.dynamic).toEqual({
      sync_binlog: '1000',
      innodb_flush_log_at_trx_commit: '2',
      max_prepared_stmt_count: '1048575',
    });
    expect(plan.notes.filter((n) => n.level !== 'info')).toEqual([]);
  });

  it('reports Aurora-only and unknown parameters as not applicable instead of dropping them', () => {
    // Arrange
    const v = variant({
      clusterParameters: {
        aurora_fwd_writer_idle_timeout: 60,
        aurora_replica_read_consistency: 'SESSION',
        innodb_dedicated_server: 'ON',
      },
    });

    // Act
    const plan = planParameters(context(v));

    // Assert
    const paths = plan.notes
      .filter((n) => n.level === 'warning' && n.message.startsWith('not applicable locally'))
      .map((n) => n.path);
    expect(paths).toEqual([
      'variants[name=r6g].clusterParameters.aurora_fwd_writer_idle_timeout',
      'variants[name=r6g].clusterParameters.aurora_replica_read_consistency',
      'variants[name=r6g].clusterParameters.innodb_dedicated_server',
    ]);
    expect({ ...plan.startup, ...plan.dynamic }).not.toHaveProperty('aurora_fwd_writer_idle_timeout');
  });

  it('sizes the buffer pool and max_connections from the instance class unless the spec sets them', () => {
    // Act
    const plan = planParameters(context(variant()));

    // Assert: db.r6g.2xlarge = 64 GiB -> 1 GiB local -> 768 MiB buffer pool; Aurora's 3000 connections
    expect(plan.startup).toMatchObject({ innodb_buffer_pool_size: String(768 * MiB), max_connections: '3000' });
  });

  it('scales an absolute buffer pool size by the instance memory ratio and says so', () => {
    // Arrange: S2's 12G on a 64 GiB instance is 3/16 of its memory.
    const v = variant({ clusterParameters: { innodb_buffer_pool_size: '12G' } });

    // Act
    const plan = planParameters(context(v));

    // Assert: locally 1 GiB * 3/16
    expect(plan.startup['innodb_buffer_pool_size']).toBe(String(192 * MiB));
    expect(plan.notes.some((n) => n.path.endsWith('innodb_buffer_pool_size') && /scaled locally/.test(n.message))).toBe(
      true,
    );
  });

  it('evaluates RDS formulas with the local memory', () => {
    // Arrange
    const v = variant({
      instanceParameters: {
        innodb_buffer_pool_size: '{DBInstanceClassMemory*1/2}',
        tmp_table_size: '{DBInstanceClassMemory/64}',
      },
    });

    // Act
    const plan = planParameters(context(v));

    // Assert
    expect(plan.startup['innodb_buffer_pool_size']).toBe(String(512 * MiB));
    expect(plan.dynamic['tmp_table_size']).toBe(String(16 * MiB));
  });

  it('lets instance parameters override cluster parameters', () => {
    // Arrange
    const v = variant({ clusterParameters: { sync_binlog: 1 }, instanceParameters: { sync_binlog: 0 } });

    // Act
    const plan = planParameters(context(v));

    // Assert
    expect(plan.dynamic['sync_binlog']).toBe('0');
    expect(plan.applied.find((a) => a.name === 'sync_binlog')?.path).toBe(
      'variants[name=r6g].instanceParameters.sync_binlog',
    );
  });

  it('turns booleans and size suffixes into what MariaDB takes', () => {
    // Arrange
    const v = variant({ instanceParameters: { slow_query_log: true, tmp_table_size: '64M' } });

    // Act
    const plan = planParameters(context(v));

    // Assert
    expect(plan.dynamic).toMatchObject({ slow_query_log: 'ON', tmp_table_size: String(64 * MiB) });
  });

  it('refuses values MariaDB would not accept, with a warning naming the accepted ones', () => {
    // Arrange
    const v = variant({
      instanceParameters: { thread_handling: 'multiple-connections-per-thread', innodb_flush_log_at_trx_commit: 7 },
    });

    // Act
    const plan = planParameters(context(v));

    // Assert
    expect(plan.startup).not.toHaveProperty('thread_handling');
    expect(plan.notes.find((n) => n.path.endsWith('thread_handling'))?.message).toMatch(
      /accepted: one-thread-per-connection, no-threads, pool-of-threads/,
    );
    expect(plan.dynamic['innodb_flush_log_at_trx_commit']).toBe('3');
    expect(plan.notes.find((n) => n.path.endsWith('innodb_flush_log_at_trx_commit'))?.message).toMatch(
      /above MariaDB's maximum 3/,
    );
  });

  it('keeps the binlog that local replication needs and the settings the backend manages', () => {
    // Arrange
    const off = variant({ clusterParameters: { binlog_format: 'OFF', server_id: 99 } });
    const row = variant({ clusterParameters: { binlog_format: 'ROW' } });

    // Act
    const offPlan = planParameters(context(off));
    const rowPlan = planParameters(context(row));

    // Assert
    expect(offPlan.notes.filter((n) => n.level === 'warning').map((n) => n.path)).toEqual([
      'variants[name=r6g].clusterParameters.binlog_format',
      'variants[name=r6g].clusterParameters.server_id',
    ]);
    expect({ ...offPlan.startup, ...offPlan.dynamic }).not.toHaveProperty('binlog_format');
    expect(rowPlan.dynamic['binlog_format']).toBe('ROW');
  });

  it('resolves TrueIfReplica per role', () => {
    // Arrange
    const v = variant({ instanceParameters: { slow_query_log: '{TrueIfReplica}' } });

    // Act
    const writer = planParameters(context(v, 'writer'));
    const reader = planParameters(context(v, 'reader'));

    // Assert
    expect(writer.dynamic['slow_query_log']).toBe('OFF');
    expect(reader.dynamic['slow_query_log']).toBe('ON');
  });
});

describe('evaluateFormula', () => {
  it('does integer arithmetic, functions and base-2 log as RDS documents them', () => {
    // Arrange
    const vars = { DBInstanceClassMemory: 16 * GiB, DBInstanceVCPU: 4 };

    // Act / Assert
    expect(evaluateFormula('{DBInstanceClassMemory*3/4}', vars)).toBe(12 * GiB);
    expect(evaluateFormula('{DBInstanceClassMemory/12582880}', vars)).toBe(Math.trunc((16 * GiB) / 12582880));
    expect(evaluateFormula('LEAST({DBInstanceClassMemory/9531392},5000)', vars)).toBe(1802);
    expect(
      evaluateFormula(
        'GREATEST({log(DBInstanceClassMemory/805306368)*45},{log(DBInstanceClassMemory/8187281408)*1000})',
        vars,
      ),
    ).toBe(1000);
    expect(evaluateFormula('SUM({DBInstanceVCPU*2},1)', vars)).toBe(9);
    expect(evaluateFormula('IF(0,1,2)', vars)).toBe(2);
  });

  it('names what it cannot evaluate', () => {
    // Act / Assert
    expect(() => evaluateFormula('{EndPointPort}', { EndPointPort: undefined })).toThrow(
      /EndPointPort has no local value/,
    );
    expect(() => evaluateFormula('{Memory*2}', {})).toThrow(FormulaError);
    expect(() => evaluateFormula('{DBInstanceVCPU*2', { DBInstanceVCPU: 2 })).toThrow(/expected "}"/);
  });
});

describe('parseSize', () => {
  it('reads K/M/G/T binary multiples and nothing else', () => {
    // Act / Assert
    expect(parseSize('12G')).toBe(12 * GiB);
    expect(parseSize('512M')).toBe(512 * MiB);
    expect(parseSize('64k')).toBe(64 * 1024);
    expect(parseSize('1.5GB')).toBe(1.5 * GiB);
    expect(parseSize('12')).toBeUndefined();
    expect(parseSize('O_DIRECT')).toBeUndefined();
  });
});
