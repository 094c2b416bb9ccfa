/**
 * The AWS-only values of a spec, checked offline against the names AWS publishes.
 * Local write forwarding is checked against the engine version too.
 * See Aurora User Guide, "Using local write forwarding in an Amazon Aurora MySQL DB cluster".
 */
import { isServerless } from '../aurora/aurora-configurations';
import {
  AURORA_MYSQL_INSTANCE_CLASSES,
  AWS_REGIONS,
  AZ_LETTERS,
  closestNames,
  EC2_INSTANCE_TYPES,
} from '../aurora/aws-names';
import { parseAuroraVersion, supportsLocalWriteForwarding } from '../aurora/engine';
import type { Spec } from './schema';

export interface AwsNameProblem {
  readonly path: string;
  readonly message: string;
}

const didYouMean = (value: string, known: Iterable<string>): string => {
  const close = closestNames(value, known);
  return close.length > 0 ? ` (did you mean ${close.join(' or ')}?)` : '';
};

/** Every AWS-only value of the spec that AWS would refuse, by JSON path. Empty when all are known. */
export function awsNameProblems(spec: Spec): AwsNameProblem[] {
  const problems: AwsNameProblem[] = [];
  if (!AWS_REGIONS.has(spec.region)) {
    problems.push({
      path: 'region',
      message:
        `unknown AWS Region "${spec.region}"${didYouMean(spec.region, AWS_REGIONS)}: use a Region code ` +
        `such as us-east-1`,
    });
  }
  // The Aurora MySQL rules apply to the variants that run Aurora MySQL, at their own version.
  const auroraChecks = new Map<string, { major: 2 | 3; localWriteForwarding: boolean } | undefined>();
  const auroraFacts = (version: string, path: string) => {
    if (!auroraChecks.has(version)) {
      try {
        const parsed = parseAuroraVersion(version);
        auroraChecks.set(version, {
          major: parsed.aurora[0] as 2 | 3,
          localWriteForwarding: supportsLocalWriteForwarding(parsed),
        });
      } catch (e) {
        auroraChecks.set(version, undefined);
        problems.push({ path, message: (e as Error).message });
      }
    }
    return auroraChecks.get(version);
  };
  if (spec.engine.kind === 'aurora-mysql') auroraFacts(spec.engine.version, 'engine.version');
  spec.variants.forEach((v, i) => {
    const engine = v.engine ?? spec.engine;
    const aurora =
      engine.kind === 'aurora-mysql'
        ? auroraFacts(engine.version, v.engine !== undefined ? `variants[${i}].engine.version` : 'engine.version')
        : undefined;
    const major = aurora?.major;
    const localWriteForwarding = aurora?.localWriteForwarding ?? false;
    // aurora-configurations.ts checks db.serverless against the engine version.
    const serverless = isServerless(v.instanceClass);
    if (major !== undefined && !serverless && !AURORA_MYSQL_INSTANCE_CLASSES[major].has(v.instanceClass)) {
      const other = major === 3 ? 2 : 3;
      const why = AURORA_MYSQL_INSTANCE_CLASSES[other].has(v.instanceClass)
        ? `an Aurora MySQL ${other} class that Aurora MySQL ${major} (engine.version ${engine.version}) does not offer`
        : `not an Aurora MySQL ${major} DB instance ` +
          `class${didYouMean(v.instanceClass, AURORA_MYSQL_INSTANCE_CLASSES[major])}`;
      problems.push({
        path: `variants[${i}].instanceClass`,
        message: `"${v.instanceClass}" is ${why}: choose one the Aurora User Guide lists, e.g. db.r6g.large`,
      });
    }
    // A self-managed server runs on the EC2 instance type of the same name without "db.".
    const ec2Type = v.instanceClass.replace(/^db\./, '');
    if (engine.kind === 'self-managed' && !serverless && !EC2_INSTANCE_TYPES.has(ec2Type)) {
      problems.push({
        path: `variants[${i}].instanceClass`,
        message:
          `"${v.instanceClass}": a self-managed server runs on the EC2 instance type "${ec2Type}", ` +
          `which is not one${didYouMean(ec2Type, EC2_INSTANCE_TYPES)}: use e.g. db.r6g.large (EC2 r6g.large)`,
      });
    }
    if (!EC2_INSTANCE_TYPES.has(v.clients.instanceType)) {
      problems.push({
        path: `variants[${i}].clients.instanceType`,
        message:
          `"${v.clients.instanceType}" is not an EC2 instance ` +
          `type${didYouMean(v.clients.instanceType, EC2_INSTANCE_TYPES)}: use one such as c6i.large`,
      });
    }
    if (v.az !== undefined && !(AZ_LETTERS as readonly string[]).includes(v.az)) {
      problems.push({
        path: `variants[${i}].az`,
        message:
          `no AWS Region has an Availability Zone "${spec.region}${v.az}": AZ letters run from a to f ` +
          `(fewer in most Regions)`,
      });
    }
    if (v.writeForwarding?.enabled && major !== undefined && !localWriteForwarding) {
      problems.push({
        path: `variants[${i}].writeForwarding.enabled`,
        message:
          `local write forwarding needs Aurora MySQL 3.04 or higher, but engine.version ` +
          `is ${engine.version}: raise engine.version, or remove writeForwarding`,
      });
    }
  });
  return problems;
}
