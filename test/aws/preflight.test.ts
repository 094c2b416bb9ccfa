/**
 * The engine version check of the AWS preflight against RDS's own answers, played by
 * aws-sdk-client-mock: moto does not implement DescribeDBEngineVersions (it answers HTTP 500), so
 * "not offered" and "offered" cannot be shown on it; the unimplemented fallback runs on moto in
 * aws-backend.test.ts.
 */
import { DescribeInstanceTypesCommand } from '@aws-sdk/client-ec2';
import { DescribeDBEngineVersionsCommand, DescribeOrderableDBInstanceOptionsCommand } from '@aws-sdk/client-rds';
import { mockClient } from 'aws-sdk-client-mock';
import { destroyAwsClients, makeAwsClients } from '../../core/backends/aws/clients';
import { validateForAws } from '../../core/backends/aws/preflight';
import { planRun } from '../../core/plan/plan';
import { validateSpec } from '../../core/spec/validate';
import { offlineAwsConfig } from '../helpers/aws-config';

const config = offlineAwsConfig();

function plan(version: string) {
  const spec = validateSpec({
    name: 'preflight',
    engine: { version },
    region: 'us-east-1',
    variants: [{ name: 'v', instanceClass: 'db.r6g.large', az: 'a', clients: { count: 1, instanceType: 'c6g.large', placement: 'same-az' } }],
    data: { tables: 1, tableSize: 1000 },
    workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [4] }],
    ttlHours: 2,
  });
  return planRun(spec, { backend: 'aws', now: new Date('2026-11-21T10:00:00Z'), runId: 'preflight-1' });
}

function setup() {
  const clients = makeAwsClients({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, maxAttempts: 1 });
  const rds = mockClient(clients.rds);
  const ec2 = mockClient(clients.ec2);
  ec2.on(DescribeInstanceTypesCommand).resolves({ InstanceTypes: [{ InstanceType: 'c6g.large', ProcessorInfo: { SupportedArchitectures: ['arm64'] } }] });
  rds.on(DescribeOrderableDBInstanceOptionsCommand).resolves({ OrderableDBInstanceOptions: [{ Engine: 'aurora-mysql', DBInstanceClass: 'db.r6g.large' }] });
  return { clients, rds };
}

describe('AWS preflight: engine version', () => {
  it('refuses a version RDS does not offer (nonexistent or deprecated) on engine.version', async () => {
    // Arrange: without IncludeAll, DescribeDBEngineVersions lists only available versions.
    const { clients, rds } = setup();
    rds.on(DescribeDBEngineVersionsCommand).resolves({ DBEngineVersions: [] });
    rds.on(DescribeOrderableDBInstanceOptionsCommand).resolves({ OrderableDBInstanceOptions: [] });

    // Act
    const notes = await validateForAws(plan('3.01.0'), config, clients, { checkSubnets: false });

    // Assert
    expect(rds.commandCalls(DescribeDBEngineVersionsCommand).map((c) => c.args[0].input)).toEqual([{ Engine: 'aurora-mysql', EngineVersion: '8.0.mysql_aurora.3.01.0' }]);
    const refused = notes.filter((n) => n.level === 'refused');
    expect(refused.map((n) => n.path)).toEqual(['engine.version']);
    expect(refused[0]!.message).toMatch(/8\.0\.mysql_aurora\.3\.01\.0.*not offered in us-east-1/);
    // No instance-class verdict (nor a built-in-table note) for a version that does not exist.
    expect(notes.some((n) => n.path === 'variants')).toBe(false);
    destroyAwsClients(clients);
  });

  it('accepts an offered version and checks the instance classes with RDS, not the built-in table', async () => {
    // Arrange
    const { clients, rds } = setup();
    rds.on(DescribeDBEngineVersionsCommand).resolves({ DBEngineVersions: [{ Engine: 'aurora-mysql', EngineVersion: '8.0.mysql_aurora.3.08.0', Status: 'available' }] });

    // Act
    const notes = await validateForAws(plan('3.08.0'), config, clients, { checkSubnets: false });

    // Assert
    expect(notes).toEqual([]);
    destroyAwsClients(clients);
  });

  it('accepts the version unchecked, with an info note, only when the API is not implemented', async () => {
    // Arrange: what moto answers (HTTP 500, no AWS error code).
    const { clients, rds } = setup();
    rds.on(DescribeDBEngineVersionsCommand).rejects(Object.assign(new Error('XML parse error'), { name: 'Error', $metadata: { httpStatusCode: 500 } }));

    // Act
    const notes = await validateForAws(plan('3.08.0'), config, clients, { checkSubnets: false });

    // Assert
    expect(notes).toEqual([{ level: 'info', path: 'engine.version', message: expect.stringContaining('not implemented') }]);
    destroyAwsClients(clients);
  });

  it('does not take a real AWS error for "not implemented"', async () => {
    // Arrange
    const { clients, rds } = setup();
    rds.on(DescribeDBEngineVersionsCommand).rejects(Object.assign(new Error('not authorized'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));

    // Act
    const attempt = validateForAws(plan('3.08.0'), config, clients, { checkSubnets: false });

    // Assert
    await expect(attempt).rejects.toThrow(/not authorized/);
    destroyAwsClients(clients);
  });
});
