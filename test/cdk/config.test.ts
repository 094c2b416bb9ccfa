/** The CDK app's typed config (cdk.json context "aurora-bench") and the nightly execution input. */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadExecutionInput, parseAppConfig } from '../../lib/config';
import { PROJECT_ROOT, repoContextConfig, synthTestApp } from './cdk-fixture';

describe('parseAppConfig', () => {
  test(
    'the repository cdk.json is valid and ships the nightly regression run off (a first deploy starts ' +
      'nothing), ready for Europe/Berlin',
    () => {
      const config = parseAppConfig(repoContextConfig());

      expect(config.nightly).toEqual({
        enabled: false,
        cron: 'cron(0 2 * * ? *)',
        timeZone: 'Europe/Berlin',
        experiment: 'experiments/nightly-regression.json',
      });
      expect(config.network.maxAzs).toBeGreaterThanOrEqual(2);
    },
  );

  test('no context gives the defaults (nightly off)', () => {
    const config = parseAppConfig(undefined);

    expect(config.stackName).toBe('AuroraBench');
    expect(config.nightly.enabled).toBe(false);
    expect(config.nightly.experiment).toBe('experiments/nightly-regression.json');
    expect(config.clients.architectures).toEqual(['x86_64', 'arm64']);
  });

  test('a JSON string from `cdk -c aurora-bench=...` is parsed', () => {
    expect(parseAppConfig('{"namePrefix":"bench2"}').namePrefix).toBe('bench2');
  });

  test('each problem is reported with its path', () => {
    const bad = { namePrefix: 'Bad_Prefix', network: { maxAzs: 1 }, nightly: { cron: '0 2 * * *' }, unknownKey: 1 };

    let message = '';
    try {
      parseAppConfig(bad);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }

    expect(message).toMatch(/aurora-bench\.namePrefix: lowercase letters/);
    expect(message).toMatch(/aurora-bench\.network\.maxAzs/);
    expect(message).toMatch(/aurora-bench\.nightly\.cron: a Scheduler expression/);
    expect(message).toMatch(/unknownKey/);
  });

  test('an existing VPC needs route tables for the S3 endpoint unless endpoints are off', () => {
    const vpc = { vpcId: 'vpc-0abc', availabilityZones: ['a', 'b'], privateSubnetIds: ['subnet-01', 'subnet-02'] };

    expect(() => parseAppConfig({ network: { existingVpc: vpc } })).toThrow(
      /existingVpc\.privateRouteTableIds: the S3 gateway endpoint needs/,
    );
    expect(
      parseAppConfig({ network: { existingVpc: { ...vpc, createEndpoints: false } } }).network.existingVpc
        ?.createEndpoints,
    ).toBe(false);
  });

  test('a new VPC without a NAT gateway is refused: clients install packages from Debian at boot', () => {
    // Arrange
    let message = '';

    // Act
    try {
      parseAppConfig({ network: { natGateways: 0 } });
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }

    // Assert
    expect(message).toMatch(
      /aurora-bench\.network\.natGateways: 0 leaves the clients' private subnets without internet access/,
    );
    expect(message).toContain("from Debian's package archive at boot");
    expect(message).toMatch(/Set aurora-bench\.network\.natGateways to 1 or more/);
  });

  test('without a NAT gateway, an existing VPC is left to the account preflight', () => {
    // An existing VPC's routes are checked by the account preflight, not here.
    const vpc = {
      vpcId: 'vpc-0abc',
      availabilityZones: ['a', 'b'],
      privateSubnetIds: ['subnet-01', 'subnet-02'],
      createEndpoints: false,
    };
    expect(parseAppConfig({ network: { natGateways: 0, existingVpc: vpc } }).network.existingVpc?.vpcId).toBe(
      'vpc-0abc',
    );
    expect(() => parseAppConfig({ clients: { sysbenchSourceUrl: 's3://my-mirror/sysbench.tar.gz' } })).toThrow(
      /sysbenchSourceUrl/,
    );
  });

  test('synth refuses the NAT-less network too (cdk.json context through the app), creating no stack', () => {
    expect(() => synthTestApp({ ...repoContextConfig(), network: { natGateways: 0 } })).toThrow(
      /aurora-bench\.network\.natGateways: 0 leaves/,
    );
  });

  test('an existing VPC needs one subnet per AZ', () => {
    const config = {
      network: {
        existingVpc: {
          vpcId: 'vpc-0abc',
          availabilityZones: ['a', 'b'],
          privateSubnetIds: ['subnet-01', 'subnet-02', 'subnet-03'],
        },
      },
    };

    expect(() => parseAppConfig(config)).toThrow(
      /aurora-bench\.network\.existingVpc\.privateSubnetIds: needs one subnet per availability zone/,
    );
  });
});

describe('loadExecutionInput', () => {
  test('the quickstart experiment becomes {"spec": <file content>}', () => {
    const input = loadExecutionInput('experiments/quickstart.json', PROJECT_ROOT);

    expect(input).toEqual({
      spec: JSON.parse(readFileSync(join(PROJECT_ROOT, 'experiments', 'quickstart.json'), 'utf8')),
    });
  });

  test('custom Lua scripts named by workloads travel in "scripts", keyed by file name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aurora-bench-exp-'));
    try {
      mkdirSync(join(dir, 'lua'));
      writeFileSync(join(dir, 'lua', 'scan.lua'), '-- scan\n');
      writeFileSync(
        join(dir, 'exp.json'),
        JSON.stringify({
          name: 'x',
          workloads: [
            { name: 'scan', script: 'lua/scan.lua' },
            { name: 'ro', test: 'oltp_read_only' },
          ],
        }),
      );

      const input = loadExecutionInput(join(dir, 'exp.json'), PROJECT_ROOT);

      expect(input.scripts).toEqual({ 'scan.lua': '-- scan\n' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a missing experiment file is a config error naming it', () => {
    expect(() => loadExecutionInput('experiments/nope.json', PROJECT_ROOT)).toThrow(
      /aurora-bench\.nightly\.experiment: cannot read .*nope\.json/,
    );
  });
});
