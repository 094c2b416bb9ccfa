/**
 * The Aurora MySQL parameter catalogue (core/aurora/aurora-mysql-parameters.json, built from AWS's
 * "Aurora MySQL configuration parameters" by scripts/build-aurora-parameter-catalogue.ts) and the
 * contract others code against: lookupParameter and parameterProblems.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  catalogueNames,
  lookupParameter,
  parameterCaveats,
  parameterProblems,
} from '../../core/aurora/parameter-catalogue';
import { AmendmentsFileSchema } from '../../core/aurora/parameter-amendments';
import { writeForwardingParameters } from '../../core/experiment/write-forwarding';
import { WriteForwardingSchema } from '../../core/experiment/schema';

const V3 = '3.10.4';
const V2 = '5.7.mysql_aurora.2.12.5';

describe('the Aurora MySQL parameter catalogue', () => {
  it('records where it was built from', () => {
    // Act
    const data = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'core', 'aurora', 'aurora-mysql-parameters.json'), 'utf8'),
    ) as {
      source: {
        repository: string;
        commit: string;
        files: string[];
        generator: string;
      };
    };
    // Assert
    expect(data.source.repository).toBe('awsdocs/amazon-aurora-user-guide');
    expect(data.source.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(data.source.files).toContain('doc_source/AuroraMySQL.Reference.ParameterGroups.md');
    expect(data.source.generator).toBe('scripts/build-aurora-parameter-catalogue.ts');
    expect(catalogueNames(2).length).toBeGreaterThan(250);
    expect(catalogueNames(3).length).toBeGreaterThan(250);
  });

  it('applies the hand-edited amendments over the built catalogue, each with the AWS page it comes from', () => {
    // Arrange
    const read = (file: string): unknown =>
      JSON.parse(readFileSync(join(__dirname, '..', '..', 'core', 'aurora', file), 'utf8'));
    const built = read('aurora-mysql-parameters.json') as { majors: Record<'3', { parameters: object }> };
    // Act
    const file = AmendmentsFileSchema.parse(read('aurora-mysql-parameter-amendments.json'));
    // Assert: a parameter documented after the archive is only in the amendments, and is found
    expect(file.amendments.length).toBeGreaterThan(0);
    expect(built.majors['3'].parameters).not.toHaveProperty('aurora_in_memory_relaylog');
    expect(file.amendments.map((a) => a.name)).toContain('aurora_in_memory_relaylog');
    expect(lookupParameter(V3, 'aurora_in_memory_relaylog')).toMatchObject({
      cluster: { modifiable: true },
      minVersion: '3.10',
      source: expect.stringMatching(/^https:\/\/docs\.aws\.amazon\.com\//),
    });
  });

  it('refuses an amendment without an AWS page, naming the entry', () => {
    const bad = { $comment: '', read: '2026-11-22', amendments: [{ majors: ['3'], name: 'x_y', source: 'a blog' }] };
    const result = AmendmentsFileSchema.safeParse(bad);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['amendments', 0, 'source']);
  });

  it('looks parameters up per major version, in every spelling RDS takes', () => {
    // Act
    const poolV3 = lookupParameter(V3, 'innodb_buffer_pool_size');
    const shortForm = lookupParameter('3.04.0', 'innodb_buffer_pool_size');
    const v2Only = lookupParameter(V2, 'tx_isolation');
    const goneInV3 = lookupParameter(V3, 'tx_isolation');
    const v3Only = lookupParameter(V3, 'transaction_isolation');
    // Assert
    expect(poolV3).toMatchObject({ name: 'innodb_buffer_pool_size', major: 3, instance: { modifiable: true } });
    expect(poolV3?.cluster).toBeUndefined();
    expect(shortForm?.major).toBe(3);
    expect(v2Only).toMatchObject({ major: 2, instance: { modifiable: true } });
    expect(goneInV3).toBeUndefined();
    expect(v3Only).toMatchObject({ major: 3, instance: { modifiable: true } });
    expect(lookupParameter(V2, 'transaction_isolation')).toBeUndefined();
  });

  it(
    'has the write forwarding parameters the AWS backend sets, at cluster level, with the ranges the spec ' +
      'schema allows',
    () => {
      // Arrange: everything clusterParametersFor can derive from a writeForwarding block
      const wf = WriteForwardingSchema.parse({
        enabled: true,
        consistency: 'GLOBAL',
        maxConnectionsPct: 90,
        idleTimeoutS: 3600,
      });
      const derived = writeForwardingParameters(wf);
      // Act
      const problems = parameterProblems(V3, 'cluster', derived);
      const infos = Object.keys(derived).map((name) => lookupParameter(V3, name));
      // Assert
      expect(Object.keys(derived).sort()).toEqual([
        'aurora_fwd_writer_idle_timeout',
        'aurora_fwd_writer_max_connections_pct',
        'aurora_replica_read_consistency',
      ]);
      expect(problems).toEqual([]);
      expect(infos.every((i) => i?.cluster?.modifiable === true && i.instance === undefined)).toBe(true);
      expect(lookupParameter(V3, 'aurora_replica_read_consistency')?.allowedValues).toEqual([
        'EVENTUAL',
        'SESSION',
        'GLOBAL',
      ]);
      expect(lookupParameter(V3, 'aurora_fwd_writer_max_connections_pct')?.range).toEqual({ min: '0', max: '90' });
      expect(lookupParameter(V3, 'aurora_fwd_writer_idle_timeout')?.range).toEqual({ min: '1', max: '86400' });
      // The schema's bounds are AWS's: the whole published range and nothing past it.
      expect(
        WriteForwardingSchema.safeParse({ enabled: true, maxConnectionsPct: 0, idleTimeoutS: 86400 }).success,
      ).toBe(true);
      expect(WriteForwardingSchema.safeParse({ enabled: true, idleTimeoutS: 86401 }).success).toBe(false);
      expect(WriteForwardingSchema.safeParse({ enabled: true, maxConnectionsPct: 91 }).success).toBe(false);
    },
  );

  it('accepts what Aurora lets you set: an empty problem list', () => {
    // Act
    const cluster = parameterProblems(V3, 'cluster', {
      innodb_flush_log_at_trx_commit: 0,
      innodb_trx_commit_allow_data_loss: 1,
      lower_case_table_names: 1,
      'gtid-mode': 'ON',
    });
    const instance = parameterProblems(V3, 'instance', {
      innodb_buffer_pool_size: '{DBInstanceClassMemory*3/4}',
      max_prepared_stmt_count: 1048576,
      performance_schema: true,
    });
    const v2 = parameterProblems(V2, 'cluster', { innodb_flush_log_at_trx_commit: 2 });
    // Assert
    expect(cluster).toEqual([]);
    expect(instance).toEqual([]);
    expect(v2).toEqual([]);
  });

  it('refuses a parameter Aurora has but does not let you modify', () => {
    // Act
    const problems = parameterProblems(V3, 'instance', { thread_handling: 'pool-of-threads', sync_binlog: 1000 });
    // Assert
    expect(problems.map((p) => p.name)).toEqual(['thread_handling', 'sync_binlog']);
    expect(problems[0]!.reason).toBe('not modifiable on Aurora MySQL 3 at the instance level');
  });

  it('refuses a MySQL parameter that does not apply to Aurora, and one that does not exist at all', () => {
    // Act
    const [flushMethod, bogus] = parameterProblems(V3, 'instance', {
      innodb_flush_method: 'O_DIRECT',
      aurora_bench_bogus: 1,
    });
    // Assert
    expect(flushMethod!.reason).toMatch(
      /^does not apply to Aurora MySQL 3: AWS lists it among the "MySQL parameters that don't apply to Aurora MySQL"/,
    );
    expect(bogus!.reason).toBe("unknown to Aurora MySQL 3: not a parameter in AWS's Aurora MySQL parameter reference");
  });

  it('says when a parameter belongs to the other major version, and what it is called there', () => {
    // Act
    const [renamed] = parameterProblems(V3, 'instance', { slave_parallel_workers: 4 });
    const [v3Only] = parameterProblems(V2, 'instance', { temptable_max_ram: 1073741824 });
    // Assert
    expect(renamed!.reason).toBe(
      'unknown to Aurora MySQL 3: it exists only in Aurora MySQL 2; Aurora MySQL 3 calls it replica_parallel_workers',
    );
    expect(v3Only!.reason).toBe('unknown to Aurora MySQL 2: it exists only in Aurora MySQL 3');
  });

  it('says how a parameter is spelled when only the spelling is wrong', () => {
    // Act
    const [gtid] = parameterProblems(V3, 'cluster', { gtid_mode: 'ON' });
    // Assert
    expect(gtid!.reason).toBe('unknown to Aurora MySQL 3 as written: the parameter is spelled "gtid-mode"');
  });

  it('accepts a modifiable instance-level parameter in a cluster group; refuses one not modifiable', () => {
    // Aurora User Guide, "DB cluster parameter groups for Amazon Aurora DB clusters": the cluster
    // parameter group includes defaults for both cluster-level and instance-level parameters.
    // Act
    const modifiable = parameterProblems(V3, 'cluster', {
      max_prepared_stmt_count: 1048576,
      innodb_buffer_pool_size: '{DBInstanceClassMemory*3/4}',
    });
    const [fixed] = parameterProblems(V3, 'cluster', { sync_binlog: 1 });
    // Assert
    expect(modifiable).toEqual([]);
    expect(fixed!.reason).toBe('not modifiable on Aurora MySQL 3 at the instance level');
  });

  it('refuses a cluster-level parameter in a DB parameter group', () => {
    // Act
    const [clusterOnly] = parameterProblems(V3, 'instance', { innodb_trx_commit_allow_data_loss: 1 });
    const [clusterOnlyInV3] = parameterProblems(V3, 'instance', { innodb_adaptive_hash_index: 0 });
    const adaptiveInV2 = parameterProblems(V2, 'instance', { innodb_adaptive_hash_index: 0 });
    // Assert
    expect(clusterOnly!.reason).toBe('cluster-level only on Aurora MySQL 3: it belongs in clusterParameters');
    expect(clusterOnlyInV3!.reason).toMatch(
      new RegExp(
        /^not modifiable on Aurora MySQL 3 at the instance level \(it is modifiable at the cluster/.source +
          / level: set it in clusterParameters\)/.source,
      ),
    );
    expect(adaptiveInV2).toEqual([]);
  });

  it('refuses a parameter newer than the engine version', () => {
    // Act
    const [tooOld] = parameterProblems('3.04.0', 'cluster', { aurora_jemalloc_tcache_enabled: 1 });
    const recent = parameterProblems(V3, 'cluster', { aurora_jemalloc_tcache_enabled: 1 });
    // Assert
    expect(tooOld!.reason).toBe('needs Aurora MySQL 3.05 or higher; the engine is 3.04.0');
    expect(recent).toEqual([]);
  });

  it('refuses values outside the allowed set or the published range (also past 2^53)', () => {
    // Act
    const problems = parameterProblems(V3, 'cluster', {
      aurora_replica_read_consistency: 'STRONG',
      aurora_fwd_writer_max_connections_pct: 95,
      aurora_fwd_writer_idle_timeout: 'soon',
      aurora_jemalloc_dirty_decay_ms: '18446744073709551616',
    });
    const edges = parameterProblems(V3, 'cluster', {
      aurora_replica_read_consistency: 'session',
      aurora_fwd_writer_max_connections_pct: 90,
      aurora_jemalloc_dirty_decay_ms: '18446744073709551615',
    });
    // Assert
    expect(problems.map((p) => p.reason)).toEqual([
      'value "STRONG" is not allowed on Aurora MySQL 3 (AWS lists EVENTUAL, SESSION, GLOBAL)',
      'value 95 is outside the range 0–90 AWS publishes',
      'value "soon" is not an integer (AWS publishes the range 1–86400)',
      'value 18446744073709551616 is outside the range 0–18446744073709551615 AWS publishes',
    ]);
    expect(edges).toEqual([]);
  });

  it(
    'refuses relaxed commit durability on Aurora MySQL 3 without the data-loss acknowledgement, and warns ' +
      'that 2 behaves like 1 there',
    () => {
      // Act
      const [missing] = parameterProblems(V3, 'cluster', { innodb_flush_log_at_trx_commit: 0 });
      const durable = parameterProblems(V3, 'cluster', { innodb_flush_log_at_trx_commit: 1 });
      const caveats = parameterCaveats(V3, { innodb_flush_log_at_trx_commit: 2 });
      // Assert
      expect(missing!.reason).toBe(
        'a value other than 1 needs innodb_trx_commit_allow_data_loss=1 in the same cluster parameters on Aurora ' +
          'MySQL 3 (AWS: setting it acknowledges the risk of data loss)',
      );
      expect(durable).toEqual([]);
      expect(caveats).toEqual([
        {
          name: 'innodb_flush_log_at_trx_commit',
          reason: expect.stringMatching(/value 2 waits for the cluster volume like 1/),
        },
      ]);
      expect(parameterCaveats(V2, { innodb_flush_log_at_trx_commit: 2 })).toEqual([]);
    },
  );

  it('names an engine version it cannot read instead of guessing a major version', () => {
    // Act
    const problems = parameterProblems('4.0.0', 'cluster', { max_connections: 10 });
    // Assert
    expect(problems).toEqual([
      {
        name: 'engine.version',
        reason: expect.stringMatching(/is not supported: use 2\.x \(MySQL 5\.7\) or 3\.x \(MySQL 8\.0\)/),
      },
    ]);
  });
});
