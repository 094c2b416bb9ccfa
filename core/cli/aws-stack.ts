/** Finds the deployed stack from its CloudFormation outputs, so the CLI needs only the stack name. */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { S3Client } from '@aws-sdk/client-s3';
import { AWS_CONFIG_DEFAULTS, awsConfigFromEnv } from '../backends/aws/config';
import { S3LakeStore } from '../backends/aws/s3-lake';
import type { AwsDeployment } from '../backends/aws/preflight';
import { AuroraBenchError } from '../errors';
import { BACKEND_CONFIG_OUTPUT, STACK_OUTPUTS } from '../backends/aws/stack-outputs';

export type StackOutputs = { readonly [K in keyof typeof STACK_OUTPUTS]: string };

/** Named like the lake's NotFoundError, so users and scripts both read "not there". */
class StackNotFoundError extends AuroraBenchError {
  override readonly name = 'NotFoundError';
}

export async function readStackOutputs(cfn: CloudFormationClient, stackName: string): Promise<StackOutputs> {
  let outputs: { OutputKey?: string; OutputValue?: string }[];
  try {
    const res = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
    outputs = res.Stacks?.[0]?.Outputs ?? [];
  } catch (e) {
    throw new StackNotFoundError(
      `stack "${stackName}" not found (${(e as Error).message}); deploy it with \`npx cdk deploy\` or pass ` +
        `--stack NAME`,
      { cause: e },
    );
  }
  const byKey = new Map(outputs.map((o) => [o.OutputKey, o.OutputValue]));
  const result = {} as Record<keyof typeof STACK_OUTPUTS, string>;
  for (const [field, key] of Object.entries(STACK_OUTPUTS) as [keyof typeof STACK_OUTPUTS, string][]) {
    const value = byKey.get(key);
    if (!value)
      throw new StackNotFoundError(
        `stack "${stackName}" has no output ${key}: is it an aurora-bench stack of this version?`,
      );
    result[field] = value;
  }
  return result;
}

/** The deployed stack's backend configuration, or why it cannot be had, for the preflight to report. */
export async function readDeployment(cfn: CloudFormationClient, stackName: string): Promise<AwsDeployment> {
  let outputs: { OutputKey?: string; OutputValue?: string }[];
  try {
    const res = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
    outputs = res.Stacks?.[0]?.Outputs ?? [];
  } catch (e) {
    return {
      stackName,
      problem:
        `stack "${stackName}" not found (${(e as Error).message}): deploy it with \`npx cdk deploy\` or ` +
        `pass --stack NAME (and --region)`,
    };
  }
  const raw = outputs.find((o) => o.OutputKey === BACKEND_CONFIG_OUTPUT)?.OutputValue;
  if (raw === undefined) {
    return {
      stackName,
      problem:
        `stack "${stackName}" has no output ${BACKEND_CONFIG_OUTPUT}: it is not an aurora-bench stack, ` +
        `or one deployed by an older version (redeploy it with \`npx cdk deploy\`)`,
    };
  }
  try {
    return { stackName, config: awsConfigFromEnv(JSON.parse(raw) as Record<string, string>) };
  } catch (e) {
    return {
      stackName,
      problem:
        `stack "${stackName}" output ${BACKEND_CONFIG_OUTPUT} is not a usable ` +
        `configuration: ${(e as Error).message}`,
    };
  }
}

/** The lake objects that Athena readers check the schema version with before their first query. */
export function stackLakeStore(outputs: StackOutputs, s3?: S3Client): S3LakeStore {
  return new S3LakeStore(s3 ?? new S3Client({}), outputs.resultsBucket, AWS_CONFIG_DEFAULTS.lakePrefix);
}
