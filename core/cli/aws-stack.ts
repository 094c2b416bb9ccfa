/**
 * Finding the deployed aurora-bench stack from its CloudFormation outputs: the CLI needs no
 * configuration beyond the stack name (and the usual AWS credentials and region).
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';

/** Output keys the stack (lib/aurora-bench-stack.ts) exports. */
export const STACK_OUTPUTS = {
  stateMachineArn: 'StateMachineArn',
  resultsBucket: 'ResultsBucketName',
  athenaWorkGroup: 'AthenaWorkGroupName',
  glueDatabase: 'GlueDatabaseName',
} as const;

export type StackOutputs = { readonly [K in keyof typeof STACK_OUTPUTS]: string };

export class StackNotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

export async function readStackOutputs(cfn: CloudFormationClient, stackName: string): Promise<StackOutputs> {
  let outputs: { OutputKey?: string; OutputValue?: string }[];
  try {
    const res = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
    outputs = res.Stacks?.[0]?.Outputs ?? [];
  } catch (e) {
    throw new StackNotFoundError(`stack "${stackName}" not found (${(e as Error).message}); deploy it with \`npx cdk deploy\` or pass --stack NAME`);
  }
  const byKey = new Map(outputs.map((o) => [o.OutputKey, o.OutputValue]));
  const result = {} as Record<keyof typeof STACK_OUTPUTS, string>;
  for (const [field, key] of Object.entries(STACK_OUTPUTS) as [keyof typeof STACK_OUTPUTS, string][]) {
    const value = byKey.get(key);
    if (!value) throw new StackNotFoundError(`stack "${stackName}" has no output ${key}: is it an aurora-bench stack of this version?`);
    result[field] = value;
  }
  return result;
}
