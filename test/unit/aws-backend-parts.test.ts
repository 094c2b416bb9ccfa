/**
 * The AWS backend's pure parts: names within RDS identifier rules, engine versions, the env config
 * the Lambda builds, SSM status mapping, shell quoting of the runner command.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterParametersFor } from '../../core/backends/aws/cluster';
import { executionTimeoutS, jobComment, mapInvocation } from '../../core/backends/aws/jobs';
import { cloudWatchWindow } from '../../core/backends/aws/metrics';
import {
  AWS_CONFIG_ENV,
  AwsConfigError,
  awsConfigFromEnv,
  awsConfigToEnv,
  type AwsBackendConfig,
} from '../../core/backends/aws/config';
import { EngineVersionError, parseAuroraVersion, supportsLocalWriteForwarding } from '../../core/aurora/engine';
import { cellBaseName, cellNames, expiresAt, isValidRdsIdentifier, runShort } from '../../core/backends/aws/names';
import { clientReadyKey, shellQuote, ssmRunnerCommands } from '../../core/backends/aws/runner-command';
import { planRun } from '../../core/plan/plan';
import { validateSpec } from '../../core/experiment/validate';

describe('AWS names', () => {
  it('makes valid RDS identifiers from any cell id, within 63 characters with every suffix', () => {
    // Arrange
    const cellIds = ['r5-2x-a-r1', 'a--b-r12', 'x'.repeat(40) + '-r100', 'UPPER_case.dots-r1', '-lead-r1'];

    // Act
    const all = cellIds.flatMap((c) => {
      const n = cellNames('study-20261121-101010-abcd', c);
      return [n.clusterId, n.clusterParameterGroup, n.instanceParameterGroup, n.writerId, n.readerId(15)];
    });

    // Assert
    for (const id of all) expect({ id, valid: isValidRdsIdentifier(id) }).toEqual({ id, valid: true });
  });

  it('is deterministic and keeps different long cell ids apart', () => {
    const a = 'v'.repeat(40) + '-r1';
    const b = 'v'.repeat(40) + '-r2';
    expect(cellBaseName('run-1', a)).toBe(cellBaseName('run-1', a));
    expect(cellBaseName('run-1', a)).not.toBe(cellBaseName('run-1', b));
    expect(cellBaseName('run-1', 'c1')).not.toBe(cellBaseName('run-2', 'c1'));
    expect(cellBaseName('run-1', 'c1')).toBe(`ab-${runShort('run-1')}-c1`);
  });

  it('makes a RunInstances client token of at most 64 characters that keeps the count, for any cell id', () => {
    // Arrange: a cell id long enough that "<base>-clients-<count>" is past 64 characters.
    const longCell = 'graviton-vs-intel-r6g-2xlarge-in-az-b-with-a-long-name-r3';

    // Act
    const names = cellNames('graviton-vs-intel-20261121-0200', longCell);
    const tokens = [0, 1, 2].map((n) => names.clientToken(n));

    // Assert
    for (const t of tokens) expect(t).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(tokens).size).toBe(3);
    expect(names.clientToken(1)).toBe(cellNames('graviton-vs-intel-20261121-0200', longCell).clientToken(1));
    expect(names.clientToken(0)).not.toBe(cellNames('graviton-vs-intel-20261121-0200', `${longCell}x`).clientToken(0));
  });

  it('rejects identifiers that break the rules', () => {
    for (const bad of ['1abc', 'ab--c', 'abc-', 'a'.repeat(64), 'ab_c', ''])
      expect(isValidRdsIdentifier(bad)).toBe(false);
  });

  it('computes expiry from the ttl', () => {
    expect(expiresAt(new Date('2026-11-21T10:00:00Z'), 24)).toBe('2026-11-22T10:00:00.000Z');
  });
});

describe('Aurora engine versions', () => {
  it('maps spec versions to RDS engine versions and families', () => {
    expect(parseAuroraVersion('3.04.0')).toEqual({
      engineVersion: '8.0.mysql_aurora.3.04.0',
      aurora: [3, 4, 0],
      family: 'aurora-mysql8.0',
    });
    expect(parseAuroraVersion('3.4')).toMatchObject({ engineVersion: '8.0.mysql_aurora.3.04.0' });
    expect(parseAuroraVersion('5.7.mysql_aurora.2.10.0')).toEqual({
      engineVersion: '5.7.mysql_aurora.2.10.0',
      aurora: [2, 10, 0],
      family: 'aurora-mysql5.7',
    });
    expect(() => parseAuroraVersion('1.22.2')).toThrow(EngineVersionError);
    expect(() => parseAuroraVersion('8.0.mysql_aurora.2.10.0')).toThrow(EngineVersionError);
  });

  it('allows local write forwarding from 3.04 on', () => {
    expect(supportsLocalWriteForwarding(parseAuroraVersion('3.03.1'))).toBe(false);
    expect(supportsLocalWriteForwarding(parseAuroraVersion('3.04.0'))).toBe(true);
    expect(supportsLocalWriteForwarding(parseAuroraVersion('3.10.0'))).toBe(true);
    expect(supportsLocalWriteForwarding(parseAuroraVersion('2.12.0'))).toBe(false);
  });
});

describe('AWS config from the Lambda environment', () => {
  const config: AwsBackendConfig = {
    region: 'eu-west-1',
    bucket: 'lake-bucket',
    lakePrefix: 'lake/',
    ssmOutputPrefix: 'ssm-output/',
    subnetIdsByAz: { 'eu-west-1a': 'subnet-aaa', 'eu-west-1b': 'subnet-bbb' },
    dbSecurityGroupId: 'sg-db',
    dbSubnetGroupName: 'db-subnets',
    clientSecurityGroupId: 'sg-client',
    clientInstanceProfileArn: 'arn:aws:iam::1:instance-profile/c',
    launchTemplateIds: { x86_64: 'lt-x', arm64: 'lt-a' },
    launchTemplateVersion: '$Default',
    runnerS3Uri: 's3://lake-bucket/runner/',
    tagKeyPrefix: 'aurora-bench:',
    ssmDocumentName: 'AWS-RunShellScript',
    masterUsername: 'benchadmin',
    performanceInsightsRetentionDays: 7,
    piPeriodS: 60,
    metricsPublishDelayS: 0,
  };

  it('round-trips through the environment', () => {
    expect(awsConfigFromEnv(awsConfigToEnv(config))).toEqual(config);
  });

  it('waits 180 s for late CloudWatch datapoints unless told otherwise; refuses a delay not 0..3600 s', () => {
    const { [AWS_CONFIG_ENV.metricsPublishDelayS]: _unset, ...withoutDelay } = awsConfigToEnv(config);

    expect(awsConfigFromEnv(withoutDelay).metricsPublishDelayS).toBe(180);
    expect(() => awsConfigFromEnv({ ...withoutDelay, [AWS_CONFIG_ENV.metricsPublishDelayS]: '-1' })).toThrow(
      /AURORA_BENCH_METRICS_PUBLISH_DELAY_S must be a whole number of seconds from 0 to 3600/,
    );
    expect(() => awsConfigFromEnv({ ...withoutDelay, [AWS_CONFIG_ENV.metricsPublishDelayS]: '90.5' })).toThrow(
      AwsConfigError,
    );
  });

  it("leaves the group settle time to RDS's 5 minutes unless told otherwise; refuses one not 0..3600 s", () => {
    const env = awsConfigToEnv(config);

    expect(awsConfigFromEnv(env).parameterGroupSettleS).toBeUndefined();
    expect(awsConfigFromEnv({ ...env, [AWS_CONFIG_ENV.parameterGroupSettleS]: '3' }).parameterGroupSettleS).toBe(3);
    expect(awsConfigFromEnv(awsConfigToEnv({ ...config, parameterGroupSettleS: 0 })).parameterGroupSettleS).toBe(0);
    expect(() => awsConfigFromEnv({ ...env, [AWS_CONFIG_ENV.parameterGroupSettleS]: '-1' })).toThrow(
      /AURORA_BENCH_PARAMETER_GROUP_SETTLE_S must be a whole number of seconds from 0 to 3600/,
    );
  });

  it("asks for the minute series at CloudWatch's 60 s unless told otherwise; refuses a period not 1..60 s", () => {
    const env = awsConfigToEnv(config);

    expect(awsConfigFromEnv(env).metricsPeriodS).toBeUndefined();
    expect(awsConfigFromEnv(awsConfigToEnv({ ...config, metricsPeriodS: 5 })).metricsPeriodS).toBe(5);
    expect(() => awsConfigFromEnv({ ...env, [AWS_CONFIG_ENV.metricsPeriodS]: '61' })).toThrow(
      /AURORA_BENCH_METRICS_PERIOD_S must be a whole number of seconds from 1 to 60/,
    );
  });

  it('names every missing or malformed variable at once', () => {
    // Arrange
    const env = {
      ...awsConfigToEnv(config),
      [AWS_CONFIG_ENV.bucket]: '',
      [AWS_CONFIG_ENV.subnetIdsByAz]: '["subnet-a"]',
      [AWS_CONFIG_ENV.piPeriodS]: '7',
    };

    // Act
    let error: unknown;
    try {
      awsConfigFromEnv(env);
    } catch (e) {
      error = e;
    }

    // Assert
    expect(error).toBeInstanceOf(AwsConfigError);
    const message = (error as Error).message;
    expect(message).toContain('AURORA_BENCH_BUCKET is not set');
    expect(message).toContain('AURORA_BENCH_SUBNET_IDS_BY_AZ must be a JSON object');
    expect(message).toContain('AURORA_BENCH_PI_PERIOD_S must be one of');
  });
});

describe('AWS backend helpers', () => {
  const plan = planRun(
    validateSpec({
      name: 'helpers',
      engine: { version: '3.04.0' },
      variants: [
        {
          name: 'wf',
          instanceClass: 'db.r6g.large',
          readers: 1,
          clusterParameters: { binlog_group_commit_sync_delay: 1000, innodb_deadlock_detect: false },
          writeForwarding: { enabled: true, idleTimeoutS: 60 },
        },
      ],
      data: { tables: 8, tableSize: 10_000_000 },
      workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [32], durationS: 600 }],
    }),
    { backend: 'aws', now: new Date('2026-11-21T10:00:00Z'), runId: 'r' },
  );
  const cell = plan.cells[0]!;

  it('adds the write forwarding parameters to the cluster parameters', () => {
    expect(clusterParametersFor(cell)).toEqual({
      binlog_group_commit_sync_delay: '1000',
      innodb_deadlock_detect: '0',
      aurora_replica_read_consistency: 'EVENTUAL',
      aurora_fwd_writer_idle_timeout: '60',
    });
  });

  it('sizes the SSM execution timeout from the step and the data, within the 48 h limit', () => {
    const step = cell.steps[0]!;
    expect(executionTimeoutS(cell, step, 'run')).toBe(600 + 300 + 600);
    expect(executionTimeoutS(cell, step, 'prepare')).toBe(Math.ceil(80_000_000 / 2000) + 600);
    const huge = { ...cell, data: { ...cell.data, tables: 100_000, tableSize: 100_000_000 } };
    expect(executionTimeoutS(huge, step, 'prepare')).toBe(172_800);
    // A run that prepares first (data.reuse step) may take both.
    expect(executionTimeoutS(cell, step, 'run', true)).toBe(Math.ceil(80_000_000 / 2000) + 600 + 300 + 600);
  });

  it('keeps SSM comments within 100 characters and stable per job', () => {
    const id = `${'c'.repeat(44)}/${'s'.repeat(50)}/run/i-0123456789abcdef0`;
    expect(jobComment('run', id).length).toBeLessThanOrEqual(100);
    expect(jobComment('run', id)).toBe(jobComment('run', id));
    expect(jobComment('run', id)).not.toBe(jobComment('run2', id));
  });

  it('maps every SSM invocation status', () => {
    const h = {
      jobId: 'j',
      clientId: 'i-1',
      phase: 'run' as const,
      outputPrefix: 'p/',
      ref: 'c',
      startedAt: '2026-11-21T10:00:00Z',
    };
    for (const s of ['Pending', 'InProgress', 'Delayed', 'Cancelling'] as const)
      expect(mapInvocation(h, { Status: s }).state).toBe('running');
    expect(mapInvocation(h, { Status: 'Success' }).state).toBe('exited');
    for (const s of ['Failed', 'TimedOut', 'Cancelled'] as const)
      expect(mapInvocation(h, { Status: s, StatusDetails: s }).state).toBe('lost');
    expect(mapInvocation(h, { Status: 'TimedOut', StatusDetails: 'ExecutionTimedOut' }).detail).toBe(
      'SSM ExecutionTimedOut',
    );
    expect(mapInvocation(h, { Status: 'Failed', StandardErrorContent: 'x --password=s3cret y' }).detail).not.toContain(
      's3cret',
    );
  });

  it('quotes every runner argument for the shell', () => {
    expect(shellQuote('plain-arg_1.lua')).toBe('plain-arg_1.lua');
    expect(shellQuote("it's")).toBe(`'it'"'"'s'`);
    expect(shellQuote('a b;rm -rf /')).toBe(`'a b;rm -rf /'`);
    const cmds = ssmRunnerCommands('us-east-1', 's3://b/runner/', '', ['--phase', 'run', '--', '--threads=4']);
    expect(cmds[cmds.length - 1]).toBe(
      'exec node "${AURORA_BENCH_HOME:-/opt/aurora-bench}/client/runner.js" --phase run -- --threads=4',
    );
  });

  it('refuses a runner digest that is not a SHA-256 in hex, which would reach the shell unquoted', () => {
    expect(() => ssmRunnerCommands('us-east-1', 's3://b/runner/', '$(reboot)', ['--phase', 'run'])).toThrow(
      'runner digest "$(reboot)" is not a SHA-256 in hex (or empty)',
    );
    expect(ssmRunnerCommands('us-east-1', 's3://b/runner/', 'ab'.repeat(32), ['--phase', 'run']).join('\n')).toContain(
      `!= "${'ab'.repeat(32)}" ]; then`,
    );
  });

  it('writes every client path under ${AURORA_BENCH_HOME:-/opt/aurora-bench}, never inside single quotes', () => {
    // Act
    const script = ssmRunnerCommands('us-east-1', 's3://b/runner/', '', ['--phase', 'run']).join('\n');

    // Assert: /opt/aurora-bench only as the default of the variable, and each use expanded by the shell.
    expect(script.split('/opt/aurora-bench').length - 1).toBe(
      script.split('${AURORA_BENCH_HOME:-/opt/aurora-bench}').length - 1,
    );
    expect(script).not.toMatch(/'[^'\n]*\$\{AURORA_BENCH_HOME/);
    expect(script).toContain('"${AURORA_BENCH_HOME:-/opt/aurora-bench}/ready"');
  });

  it('refuses a job at once on a client without the ready marker, and runs it under AURORA_BENCH_HOME with one', () => {
    // Arrange: the commands up to the runner's exec, with bash, under a temp client home.
    const home = mkdtempSync(join(tmpdir(), 'ab-home-'));
    const script =
      ssmRunnerCommands('us-east-1', 's3://b/runner/', '', ['--phase', 'run']).slice(0, 3).join('\n') +
      '\necho "past the check"';
    const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', AURORA_BENCH_HOME: home };

    // Act
    const missing = spawnSync('bash', ['-c', script], { encoding: 'utf8', env });
    writeFileSync(join(home, 'ready'), '{"ready":true}\n');
    const present = spawnSync('bash', ['-c', script], { encoding: 'utf8', env });
    rmSync(home, { recursive: true, force: true });

    // Assert
    expect(missing.status).toBe(3);
    expect(missing.stderr).toContain(
      `client not ready: ${home}/ready is missing (client-ready.sh has not proven that sysbench works`,
    );
    expect(present.status).toBe(0);
    expect(present.stdout).toBe('past the check\n');
  });

  it("names a client's ready marker key by its instance id and refuses anything else", () => {
    expect(clientReadyKey('i-0123456789abcdef0')).toBe('clients/i-0123456789abcdef0/ready.json');
    expect(() => clientReadyKey('../raw/x')).toThrow(/not an EC2 instance id/);
  });
});

describe('cloudWatchWindow', () => {
  it('keeps only the whole minutes inside a step, so partly idle minutes do not lower the averages', () => {
    // A 600 s step from 10:00:20 to 10:10:20 -> the nine whole minutes 10:01..10:10
    expect(cloudWatchWindow('2026-11-21T10:00:20Z', '2026-11-21T10:10:20Z')).toEqual({
      start: new Date('2026-11-21T10:01:00Z'),
      end: new Date('2026-11-21T10:10:00Z'),
    });
  });

  it('falls back to the enclosing minutes for a step shorter than two minutes', () => {
    expect(cloudWatchWindow('2026-11-21T10:00:20Z', '2026-11-21T10:01:30Z')).toEqual({
      start: new Date('2026-11-21T10:00:00Z'),
      end: new Date('2026-11-21T10:02:00Z'),
    });
  });

  it('uses the period it is given: a 2 s step in 5 s periods waits for 10:00:25, not 10:01', () => {
    expect(cloudWatchWindow('2026-11-21T10:00:18Z', '2026-11-21T10:00:20.5Z', 5)).toEqual({
      start: new Date('2026-11-21T10:00:15Z'),
      end: new Date('2026-11-21T10:00:25Z'),
    });
  });
});
