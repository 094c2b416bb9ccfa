/**
 * The AWS names a spec may use, known offline.
 * `validate` refuses a typo, instead of the AWS preflight or RDS half-way through a run.
 * The account preflight still checks what only the account knows.
 *
 * Sources.
 * Aurora MySQL instance classes come from Aurora User Guide, "Supported DB engines for DB instance classes".
 * scripts/build-aws-names.ts generates EC2 instance types and regions from botocore.
 * An AZ code is the Region code and a letter. See AWS, "AWS Availability Zones".
 * us-east-1 has the most AZs, six, so codes end in a to f.
 * Local write forwarding needs Aurora MySQL 3.04 or higher.
 * See Aurora User Guide, "Using local write forwarding in an Amazon Aurora MySQL DB cluster".
 */
import awsNamesJson from './aws-names.json';

const SIZES_R = ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge'];

/** Aurora MySQL DB instance classes by major version. The AWS preflight falls back on it when the API lists nothing. */
export const AURORA_MYSQL_INSTANCE_CLASSES: Readonly<Record<2 | 3, ReadonlySet<string>>> = {
  3: new Set([
    ...['r5', 'r6g', 'r6i', 'r7g', 'r7i', 'r8g'].flatMap((f) => SIZES_R.map((s) => `db.${f}.${s}`)),
    'db.r5.24xlarge',
    'db.r6i.24xlarge',
    'db.r6i.32xlarge',
    'db.r7i.24xlarge',
    'db.r7i.48xlarge',
    'db.r8g.24xlarge',
    'db.r8g.48xlarge',
    ...['r6gd', 'r6id', 'r8gd'].flatMap((f) => SIZES_R.map((s) => `db.${f}.${s}`)),
    ...['x2g'].flatMap((f) => SIZES_R.map((s) => `db.${f}.${s}`)),
    'db.t3.medium',
    'db.t3.large',
    'db.t4g.medium',
    'db.t4g.large',
  ]),
  2: new Set([
    ...['r4', 'r5', 'r6g'].flatMap((f) => SIZES_R.map((s) => `db.${f}.${s}`)),
    'db.r5.24xlarge',
    'db.t2.small',
    'db.t2.medium',
    'db.t3.small',
    'db.t3.medium',
    'db.t4g.medium',
    'db.t4g.large',
  ]),
};

const awsNames = awsNamesJson as { source: string; ec2InstanceTypes: string[]; regions: Record<string, string[]> };
export const EC2_INSTANCE_TYPES: ReadonlySet<string> = new Set(awsNames.ec2InstanceTypes);
export const AWS_REGIONS: ReadonlySet<string> = new Set(Object.values(awsNames.regions).flat());
export const AZ_LETTERS = ['a', 'b', 'c', 'd', 'e', 'f'] as const;

/** Edit distance, for "did you mean". */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** The closest known names, at most 2 edits away, alphabetically. A typo's likely intent. */
export function closestNames(value: string, known: Iterable<string>, max = 3): string[] {
  let best = 3;
  let found: string[] = [];
  for (const k of known) {
    const d = editDistance(value, k);
    if (d < best) {
      best = d;
      found = [k];
    } else if (d === best) {
      found.push(k);
    }
  }
  return found.sort().slice(0, max);
}
