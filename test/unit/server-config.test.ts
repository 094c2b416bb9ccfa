/**
 * A self-managed server's configuration file (core/aurora/server-config.ts): the [mariadbd] lines a
 * variant renders to, what cannot go there (refused by validation with the spec path), and the
 * agreement of the TypeScript side with client/server-setup.sh (the options it sets itself) and
 * client/server-install.sh (the one version it installs is the one the spec accepts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINES } from '../../core/aurora/engines';
import { renderServerOptions, SERVER_MANAGED_OPTIONS, serverOptionsBase64 } from '../../core/aurora/server-config';
import { serverHardware } from '../../core/backends/local/instance-classes';
import { loadSpecFile, SpecError, validateSpec } from '../../core/experiment/validate';
import { planRun } from '../../core/plan/plan';

const repoRoot = join(__dirname, '..', '..');
const GiB = 1024 ** 3;

describe('renderServerOptions', () => {
  it(
    "renders thread-sweep's self-managed variant: template and variant parameters, the thread pool, the " +
      "class's defaults",
    () => {
      // Arrange: the study's own variant, as the plan resolves it (template merged, instance values win)
      const { spec, scripts } = loadSpecFile(
        join(repoRoot, 'experiments', 'thread-sweep.json'),
        join(repoRoot, 'client', 'workloads'),
      );
      const plan = planRun(spec, { backend: 'local', scripts });
      const variant = plan.cells.find((c) => c.variant.name === 'self-managed-pool')!.variant;

      // Act
      const rendered = renderServerOptions(variant, serverHardware(variant.instanceClass));

      // Assert: r6g.2xlarge has 8 vCPUs and 64 GiB; the spec sets the buffer pool, so only
      // max_connections comes from the class (Aurora's default for a 2xlarge: 3000)
      expect(rendered.problems).toEqual([]);
      expect(rendered.lines).toEqual([
        'innodb_buffer_pool_size=12884901888',
        'max_prepared_stmt_count=1048575',
        'sync_binlog=1000',
        'innodb_flush_log_at_trx_commit=2',
        'innodb_flush_method=O_DIRECT',
        'innodb_flush_neighbors=0',
        'thread_handling=pool-of-threads',
        'max_connections=3000',
      ]);
      expect(Buffer.from(serverOptionsBase64(rendered.lines), 'base64').toString('utf8')).toBe(
        rendered.lines.join('\n') + '\n',
      );
    },
  );

  it(
    'evaluates formulas with the instance, writes booleans ON/OFF, quotes values with spaces, and fills the ' +
      'buffer pool from memory',
    () => {
      // Arrange
      const variant = {
        name: 'v',
        clusterParameters: { 'Innodb-Adaptive-Hash-Index': false, innodb_io_capacity: '{DBInstanceVCPU*250}' },
        instanceParameters: {
          sql_mode: 'STRICT_TRANS_TABLES, NO_ZERO_DATE',
          innodb_io_capacity: '{DBInstanceVCPU*500}',
        },
      };

      // Act
      const rendered = renderServerOptions(variant, { memoryBytes: 16 * GiB, vcpu: 2, maxConnections: 1000 });

      // Assert: the instance's value wins over the cluster's, names normalised
      expect(rendered.options).toEqual({
        innodb_adaptive_hash_index: 'OFF',
        innodb_io_capacity: '1000',
        sql_mode: 'STRICT_TRANS_TABLES, NO_ZERO_DATE',
        innodb_buffer_pool_size: String(12 * GiB),
        max_connections: '1000',
      });
      expect(rendered.lines).toContain('sql_mode="STRICT_TRANS_TABLES, NO_ZERO_DATE"');
    },
  );

  it(
    'names by spec path what cannot go into the file: managed options, Aurora/RDS names, init-time settings, ' +
      'bad formulas',
    () => {
      // Arrange
      const variant = {
        name: 'v',
        clusterParameters: { aurora_binlog_replication_max_yield_seconds: 1, 'server-id': 9 },
        instanceParameters: {
          innodb_page_size: '32K',
          max_connections: '{NoSuchVariable/2}',
          thread_handling: 'pool-of-threads',
        },
      };

      // Act
      const rendered = renderServerOptions(variant, { memoryBytes: 16 * GiB, vcpu: 2, maxConnections: 1000 });

      // Assert
      expect(rendered.problems.map((p) => p.path)).toEqual([
        'variants[name=v].clusterParameters.aurora_binlog_replication_max_yield_seconds',
        'variants[name=v].clusterParameters.server-id',
        'variants[name=v].instanceParameters.innodb_page_size',
        'variants[name=v].instanceParameters.max_connections',
      ]);
      expect(rendered.problems[1]!.message).toMatch(/set by client\/server-setup\.sh/);
      expect(rendered.options).toEqual({
        thread_handling: 'pool-of-threads',
        innodb_buffer_pool_size: String(12 * GiB),
      });
    },
  );
});

describe('a self-managed variant in the spec', () => {
  it('is refused with the JSON path when it sets what the server script sets itself, or an Aurora parameter', () => {
    // Arrange
    const doc = {
      name: 'sm',
      engine: { kind: 'self-managed', version: 'mariadb-10.11' },
      parameterTemplates: { t: { instanceParameters: { aurora_use_vector_instructions: 1 } } },
      variants: [
        {
          name: 'a',
          instanceClass: 'db.r6g.large',
          parameterTemplate: 't',
          instanceParameters: { port: 3307, thread_handling: 'pool-of-threads' },
        },
      ],
      data: { tables: 1, tableSize: 100 },
      workloads: [{ name: 'rw', test: 'oltp_read_write', durationS: 60 }],
    };

    // Act
    let error: unknown;
    try {
      validateSpec(doc, 'sm.json');
    } catch (e) {
      error = e;
    }

    // Assert
    expect(error).toBeInstanceOf(SpecError);
    expect((error as SpecError).problems.map((p) => p.path)).toEqual([
      'parameterTemplates.t.instanceParameters.aurora_use_vector_instructions',
      'variants[0].instanceParameters.port',
    ]);
  });

  it('takes only the version client/server-install.sh installs', () => {
    // Arrange
    const pattern = ENGINES['self-managed'].versionPattern;
    const install = readFileSync(join(repoRoot, 'client', 'server-install.sh'), 'utf8');

    // Act / Assert: the script installs Debian 12's mariadb-server (MariaDB 10.11) and checks for 10.11
    expect(['mariadb-10.11', 'mariadb-10.6', 'mysql-8.0', 'percona-8.0'].filter((v) => pattern.test(v))).toEqual([
      'mariadb-10.11',
    ]);
    expect(install).toMatch(
      /-o DPkg::Lock::Timeout=900 -o Acquire::Retries=5 \\\n +install -y --no-install-recommends mariadb-server/,
    );
    expect(install).toMatch(/\*" 10\.11\."\*\)/);
  });

  it('client/server-setup.sh refuses the same options the renderer refuses as managed', () => {
    // Arrange
    const script = readFileSync(join(repoRoot, 'client', 'server-setup.sh'), 'utf8');

    // Act: the list is built over several lines (MANAGED='...' then MANAGED+='...'), each name between spaces
    const managed = [...script.matchAll(/^MANAGED\+?=' ([a-z_ ]+) '$/gm)].flatMap((m) => m[1]?.split(' ') ?? []);

    // Assert
    expect(new Set(managed)).toEqual(SERVER_MANAGED_OPTIONS);
  });
});
