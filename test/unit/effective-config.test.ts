/** The effective-configuration check (core/workflow/effective-config.ts) on hand-made server variables. */
import { configDifferences, type CompareSide } from '../../core/regression/compare';
import { effectiveConfiguration, requestedParameters, sameSetting } from '../../core/workflow/effective-config';

const base = { run_id: 'r', cell_id: 'c-r1', variant: 'c', dt: '2026-11-22' };
const server = (vars: Record<string, string>, error: string | null = null) => ({
  variables: new Map(Object.entries(vars)),
  error,
});

describe('sameSetting', () => {
  it.each([
    ['ON', 'ON', true],
    [true, '1', true],
    [1, 'ON', true],
    ['off', '0', true],
    ['12G', '12884901888', true],
    [1048576, '1048576', true],
    ['O_DIRECT', 'o_direct', true],
    [400, '300', false],
    ['ROW', 'MIXED', false],
    [true, 'OFF', false],
  ])('%p vs %p: %p', (asked, actual, same) => {
    expect(sameSetting(asked, actual)).toBe(same);
  });
});

describe('sameSetting on PostgreSQL (the server value in pg_settings.unit)', () => {
  it.each([
    ['8MB', '8192', 'kB', true],
    ['128MB', '16384', '8kB', true],
    ['64MB', '4096', '8kB', false],
    ['30s', '30', 's', true],
    ['5min', '300', 's', true],
    ['200ms', '1', 's', false],
    [16384, '16384', '8kB', true],
    ['off', 'off', undefined, true],
  ] as const)('%p vs %p %p: %p', (asked, actual, unit, same) => {
    expect(sameSetting(asked, actual, unit)).toBe(same);
  });
});

describe('effectiveConfiguration', () => {
  it(
    'records a PostgreSQL server: server_version, requested values compared in their units, the PostgreSQL ' +
      'performance list',
    () => {
      const config = effectiveConfiguration({
        base,
        instanceId: 'w',
        server: {
          variables: new Map(
            Object.entries({
              server_version: '15.14 (Debian 15.14-0+deb12u1)',
              work_mem: '8192',
              synchronous_commit: 'on',
              shared_buffers: '16384',
              max_connections: '100',
            }),
          ),
          units: new Map(Object.entries({ work_mem: 'kB', shared_buffers: '8kB' })),
          error: null,
        },
        requested: { work_mem: '8MB', synchronous_commit: 'off', apg_ccm_enabled: 1 },
        applyStatus: [],
      });

      expect(config.serverVersion).toBe('PostgreSQL 15.14 (Debian 15.14-0+deb12u1)');
      expect(config.notInEffect).toEqual(['synchronous_commit: asked off, w runs with on']);
      expect(config.rows.map((r) => [r.kind, r.name, r.value, r.requested, r.in_effect])).toEqual([
        ['version', 'server_version', '15.14 (Debian 15.14-0+deb12u1)', null, null],
        ['requested', 'work_mem', '8192', '8MB', true],
        ['requested', 'synchronous_commit', 'on', 'off', false],
        ['requested', 'apg_ccm_enabled', null, '1', null],
        ['performance', 'shared_buffers', '16384', null, null],
        ['performance', 'max_connections', '100', null, null],
      ]);
    },
  );

  it(
    'compares each requested value, skips formulas and values the server does not report, records version and ' +
      'the performance list',
    () => {
      const config = effectiveConfiguration({
        base,
        instanceId: 'w',
        server: server({
          version: '8.0.28',
          aurora_version: '3.04.0',
          innodb_io_capacity: '300',
          max_connections: '1000',
          sync_binlog: '1',
          innodb_buffer_pool_size: '1',
        }),
        requested: {
          innodb_io_capacity: 400,
          max_connections: 1000,
          innodb_buffer_pool_size: '{DBInstanceClassMemory*3/4}',
          aurora_fwd_writer_idle_timeout: 60,
        },
        applyStatus: [],
      });

      expect(config.notInEffect).toEqual(['innodb_io_capacity: asked 400, w runs with 300']);
      expect(config.serverVersion).toBe('8.0.28 (Aurora MySQL 3.04.0)');
      expect(config.rows.map((r) => [r.kind, r.name, r.value, r.requested, r.in_effect])).toEqual([
        ['version', 'version', '8.0.28', null, null],
        ['version', 'aurora_version', '3.04.0', null, null],
        ['requested', 'innodb_io_capacity', '300', '400', false],
        ['requested', 'max_connections', '1000', '1000', true],
        ['requested', 'innodb_buffer_pool_size', '1', '{DBInstanceClassMemory*3/4}', null],
        ['requested', 'aurora_fwd_writer_idle_timeout', null, '60', null],
        ['performance', 'sync_binlog', '1', null, null],
      ]);
    },
  );

  it('an instance whose parameter group is pending-reboot: not in effect', () => {
    const config = effectiveConfiguration({
      base,
      instanceId: 'w',
      server: server({ version: '8.0.28' }),
      requested: {},
      applyStatus: [
        { instanceId: 'w', kind: 'instance', group: 'pg-1', status: 'pending-reboot' },
        { instanceId: 'w', kind: 'cluster', group: 'cpg-1', status: 'in-sync' },
      ],
    });

    expect(config.notInEffect).toEqual([
      'w: instance parameter group pg-1 is pending-reboot (its values are not all in effect)',
    ]);
    expect(config.rows.filter((r) => r.kind === 'apply-status').map((r) => [r.name, r.value, r.in_effect])).toEqual([
      ['instance:pg-1', 'pending-reboot', false],
      ['cluster:cpg-1', 'in-sync', true],
    ]);
  });

  it('variables that could not be read: recorded, nothing judged', () => {
    const config = effectiveConfiguration({
      base,
      instanceId: 'w',
      server: server({}, 'Access denied'),
      requested: { max_connections: 10 },
      applyStatus: [],
    });

    expect(config.notInEffect).toEqual([]);
    expect(config.unread).toBe('Access denied');
    expect(config.rows).toEqual([
      {
        ...base,
        instance_id: 'w',
        kind: 'requested',
        name: 'max_connections',
        value: null,
        requested: '10',
        in_effect: null,
      },
    ]);
  });

  it(
    'requested: the values the backend applied when it recorded them, else the instance parameters over the ' +
      'cluster ones',
    () => {
      const cell = {
        variant: {
          clusterParameters: { Max_Connections: 10, sync_binlog: 1 },
          instanceParameters: { max_connections: 20 },
        },
      } as never;

      expect(requestedParameters(cell, { backendState: {} })).toEqual({ max_connections: 20, sync_binlog: 1 });
      expect(requestedParameters(cell, { backendState: { requestedParameters: '{"max_connections":"30"}' } })).toEqual({
        max_connections: '30',
      });
    },
  );
});

describe('configDifferences (compare)', () => {
  it('lists the values that differ for variants both runs recorded', () => {
    const side = (config: { variant: string; name: string; value: string | null }[]): CompareSide => ({
      run: { run_id: 'x', spec_name: 's', started_at: '', status: 'succeeded', backend: 'local', plan: null },
      steps: [],
      intervals: new Map(),
      config,
    });
    const a = side([
      { variant: 'v', name: 'version', value: '10.11.6-MariaDB' },
      { variant: 'v', name: 'sync_binlog', value: '1' },
      { variant: 'only-a', name: 'sync_binlog', value: '0' },
    ]);
    const b = side([
      { variant: 'v', name: 'version', value: '10.11.19-MariaDB' },
      { variant: 'v', name: 'sync_binlog', value: '1' },
      { variant: 'v', name: 'thread_handling', value: 'pool-of-threads' },
    ]);

    expect(configDifferences(a, b)).toEqual([
      { variant: 'v', name: 'thread_handling', a: '', b: 'pool-of-threads' },
      { variant: 'v', name: 'version', a: '10.11.6-MariaDB', b: '10.11.19-MariaDB' },
    ]);
  });
});
