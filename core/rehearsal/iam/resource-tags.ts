/**
 * A resource's tags as moto holds them, for the ResourceTag condition keys.
 * See IAM User Guide, "Controlling access to AWS resources using tags".
 */
import { DescribeInstancesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { ListTagsForResourceCommand, type RDSClient } from '@aws-sdk/client-rds';
import { DescribeSecretCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

type Tags = Readonly<Record<string, string>>;

const asRecord = (tags: readonly { Key?: string; Value?: string }[] | undefined): Tags =>
  Object.fromEntries((tags ?? []).flatMap((t) => (t.Key !== undefined ? [[t.Key, t.Value ?? '']] : [])));

/** Tags of EC2 instances, RDS resources and secrets. Undefined for anything moto lacks. */
export function motoResourceTags(clients: {
  readonly ec2: EC2Client;
  readonly rds: RDSClient;
  readonly secrets: SecretsManagerClient;
}): (arn: string) => Promise<Tags | undefined> {
  return async (arn) => {
    try {
      const instance = /^arn:[^:]+:ec2:[^:]*:[^:]*:instance\/(i-[\w]+)$/.exec(arn);
      if (instance) {
        const out = await clients.ec2.send(new DescribeInstancesCommand({ InstanceIds: [instance[1]!] }));
        const found = out.Reservations?.[0]?.Instances?.[0];
        return found ? asRecord(found.Tags) : undefined;
      }
      if (/^arn:[^:]+:rds:/.test(arn) && !arn.includes('*'))
        return asRecord((await clients.rds.send(new ListTagsForResourceCommand({ ResourceName: arn }))).TagList);
      const secret = /^arn:[^:]+:secretsmanager:[^:]*:[^:]*:secret:(.+)$/.exec(arn);
      if (secret) {
        // A secret named by name is authorized on <name>-??????, and moto finds it by the name.
        const id = secret[1]!.endsWith('-??????') ? secret[1]!.slice(0, -7) : arn;
        return asRecord((await clients.secrets.send(new DescribeSecretCommand({ SecretId: id }))).Tags);
      }
      return undefined;
    } catch {
      // No such resource has no tags, as IAM sees it.
      return undefined;
    }
  };
}
