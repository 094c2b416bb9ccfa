/**
 * The rehearsal's IAM evaluation (core/rehearsal/iam/): statements against a request as the IAM
 * User Guide's "Policy evaluation logic" and "Condition operators" state it, and the request a call
 * is authorized as, from the Service Authorization Reference data setup builds (.iam-definition.json).
 */
import { join } from 'node:path';
import { authorize, type PolicyStatement } from '../../core/rehearsal/iam/authorize';
import { iamRequest } from '../../core/rehearsal/iam/call-requests';
import { iamDefinitionPath, loadIamDefinition } from '../../core/rehearsal/iam/definition';
import { referencesOf, resolveStatements } from '../../core/rehearsal/iam/role-statements';

const definition = loadIamDefinition(iamDefinitionPath(join(__dirname, '..', '..')));
const where = { partition: 'aws', region: 'us-east-1', account: '123456789012' };
const instance = 'arn:aws:ec2:us-east-1:123456789012:instance/i-0abc';

describe('authorize', () => {
  const runTagged: PolicyStatement = {
    Sid: 'RunCommandOnRunClients',
    Effect: 'Allow',
    Action: 'ssm:SendCommand',
    Resource: 'arn:aws:ec2:us-east-1:123456789012:instance/*',
    Condition: { Null: { 'ssm:resourceTag/aurora-bench:run-id': 'false' } },
  };

  it('allows by a matching statement, action names case-insensitive, resources with wildcards', () => {
    expect(
      authorize([runTagged], 'ssm:sendcommand', instance, { 'ssm:resourceTag/aurora-bench:run-id': 'r1' }),
    ).toEqual({ allowed: true, statement: 'RunCommandOnRunClients' });
  });

  it('denies implicitly when the condition does not hold (Null: the tag is absent)', () => {
    expect(authorize([runTagged], 'ssm:SendCommand', instance, {})).toEqual({
      allowed: false,
      reason: 'because no identity-based policy allows the ssm:SendCommand action',
    });
  });

  it('an explicit Deny wins over an Allow; NotAction and NotResource invert their lists', () => {
    const statements: PolicyStatement[] = [
      { Effect: 'Allow', NotAction: 'iam:*', Resource: '*' },
      { Sid: 'NoLake', Effect: 'Deny', Action: 's3:*', NotResource: 'arn:aws:s3:::lake/*' },
    ];
    expect(authorize(statements, 's3:GetObject', 'arn:aws:s3:::lake/a', {}).allowed).toBe(true);
    expect(authorize(statements, 's3:GetObject', 'arn:aws:s3:::other/a', {})).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('explicit deny in an identity-based policy (NoLake)'),
    });
    expect(authorize(statements, 'iam:GetRole', '*', {}).allowed).toBe(false);
  });

  it('a statement naming resources does not grant an action authorized on "*"', () => {
    const s: PolicyStatement = { Effect: 'Allow', Action: 'ssm:ListCommands', Resource: instance };
    expect(authorize([s], 'ssm:ListCommands', '*', {}).allowed).toBe(false);
    expect(authorize([{ ...s, Resource: '*' }], 'ssm:ListCommands', '*', {}).allowed).toBe(true);
  });

  it('set operators, negated and IfExists operators on keys the request lacks', () => {
    const marking: PolicyStatement = {
      Effect: 'Allow',
      Action: 'ec2:CreateTags',
      Resource: '*',
      Condition: { 'ForAllValues:StringEquals': { 'aws:TagKeys': ['aurora-bench:expires-at'] } },
    };
    expect(authorize([marking], 'ec2:CreateTags', '*', { 'aws:TagKeys': ['aurora-bench:expires-at'] }).allowed).toBe(
      true,
    );
    expect(
      authorize([marking], 'ec2:CreateTags', '*', { 'aws:TagKeys': ['aurora-bench:expires-at', 'x'] }).allowed,
    ).toBe(false);
    const op = (Condition: PolicyStatement['Condition']) =>
      authorize([{ Effect: 'Allow', Action: '*', Resource: '*', Condition }], 'sns:Publish', '*', {}).allowed;
    expect(op({ StringNotEquals: { 'aws:PrincipalTag/team': 'a' } })).toBe(true);
    expect(op({ StringEquals: { 'aws:PrincipalTag/team': 'a' } })).toBe(false);
    expect(op({ StringEqualsIfExists: { 'aws:PrincipalTag/team': 'a' } })).toBe(true);
    expect(() => op({ DateGreaterThan: { 'aws:CurrentTime': '2020-01-01' } })).toThrow(/DateGreaterThan/);
  });
});

describe('the request a call is authorized as (Service Authorization Reference)', () => {
  it('ssm:SendCommand: the document, each instance and the output bucket; AWS documents have no account', () => {
    const request = iamRequest(
      definition,
      'ssm:SendCommand',
      { DocumentName: 'AWS-RunShellScript', InstanceIds: ['i-0abc'], OutputS3BucketName: 'lake' },
      where,
    );
    expect(request?.resources).toEqual([
      'arn:aws:ssm:us-east-1::document/AWS-RunShellScript',
      'arn:aws:s3:::lake',
      instance,
    ]);
  });

  it('rds:CreateDBCluster: the cluster, its subnet group, tags as aws:RequestTag; what the input omits is said', () => {
    const request = iamRequest(
      definition,
      'rds:CreateDBCluster',
      { DBClusterIdentifier: 'ab-1', DBSubnetGroupName: 'sg', Tags: [{ Key: 'aurora-bench:run-id', Value: 'r1' }] },
      where,
    );
    expect(request).toMatchObject({
      resources: ['arn:aws:rds:us-east-1:123456789012:cluster:ab-1', 'arn:aws:rds:us-east-1:123456789012:subgrp:sg'],
      underived: ['cluster-pg', 'og'],
      context: { 'aws:RequestTag/aurora-bench:run-id': 'r1', 'aws:TagKeys': ['aurora-bench:run-id'] },
    });
  });

  it('an action without resource types is authorized on "*"; an unknown action is undefined', () => {
    expect(iamRequest(definition, 'ssm:ListCommands', {}, where)?.resources).toEqual(['*']);
    expect(iamRequest(definition, 'ssm:NoSuchAction', {}, where)).toBeUndefined();
  });
});

describe('role statements resolved to the rehearsal', () => {
  it('references read off the environment the rehearsal gives, pseudo parameters, unresolved ones marked', () => {
    // The stack's two subnets by AZ; the rehearsal gives one per AZ of the Region.
    const refs = referencesOf(
      {
        BUCKET: { Ref: 'Lake' },
        SUBNETS: {
          'Fn::Join': [
            '',
            [
              '{"',
              { 'Fn::Select': [0, { 'Fn::GetAZs': '' }] },
              '":"',
              { Ref: 'SubnetA' },
              '","',
              { 'Fn::Select': [1, { 'Fn::GetAZs': '' }] },
              '":"',
              { Ref: 'SubnetB' },
              '"}',
            ],
          ],
        },
        URI: { 'Fn::Join': ['', ['s3://', { Ref: 'Lake' }, '/runner/']] },
      },
      {
        BUCKET: 'lake-1',
        SUBNETS: '{"us-east-1a":"subnet-1","us-east-1b":"subnet-2","us-east-1c":"subnet-3"}',
        URI: 's3://lake-1/runner/',
      },
      'us-east-1',
    );
    expect(Object.fromEntries(refs)).toEqual({ Lake: 'lake-1', SubnetA: 'subnet-1', SubnetB: 'subnet-2' });
    const [s] = resolveStatements(
      [
        {
          Effect: 'Allow',
          Action: 'ec2:RunInstances',
          Resource: [
            {
              'Fn::Join': [
                '',
                ['arn:', { Ref: 'AWS::Partition' }, ':ec2:', { Ref: 'AWS::Region' }, ':x:subnet/', { Ref: 'SubnetA' }],
              ],
            },
            { 'Fn::Join': ['', ['arn:aws:s3:::', { Ref: 'Lake' }]] },
            { Ref: 'Other' },
          ],
        },
      ],
      refs,
      where,
    );
    expect(s!.Resource).toEqual([
      'arn:aws:ec2:us-east-1:x:subnet/subnet-1',
      'arn:aws:s3:::lake-1',
      '<unresolved Other>',
    ]);
  });
});
