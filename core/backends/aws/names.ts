/**
 * Deterministic names and tags for everything the AWS backend creates.
 * A retried Task then finds what an earlier attempt made instead of creating a second copy.
 */
import { createHash } from 'node:crypto';

const RDS_IDENTIFIER_MAX = 63;
const RDS_IDENTIFIER = /^[a-z](?!.*--)[a-z0-9-]*[a-z0-9]$|^[a-z]$/;

/**
 * RDS takes 1 to 63 letters, digits or hyphens, starting with a letter, with no double or trailing hyphen.
 * Parameter group names may have 255, but we keep every name within 63. See botocore, rds/2014-10-31.
 * @internal exported for its tests
 */
export function isValidRdsIdentifier(id: string): boolean {
  return id.length >= 1 && id.length <= RDS_IDENTIFIER_MAX && RDS_IDENTIFIER.test(id);
}

function hash(text: string, chars: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, chars);
}

/** RDS stores identifiers lowercase. */
function clean(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * Short stable id of a run: 8 hex characters of its sha256. The tags carry the full id.
 * @internal exported for its tests
 */
export function runShort(runId: string): string {
  return hash(runId, 8);
}

/** Longest suffix added to a cell base name, as in "-r15". */
const SUFFIX_ROOM = 4;

/**
 * `ab-<runShort>-<cellId>`, shortened with a hash of the cell id when it would leave no room for a suffix.
 * @internal exported for its tests
 */
export function cellBaseName(runId: string, cellId: string): string {
  const head = `ab-${runShort(runId)}-`;
  const cell = clean(cellId) || 'cell';
  const room = RDS_IDENTIFIER_MAX - SUFFIX_ROOM - head.length;
  const body = cell.length <= room ? cell : `${cell.slice(0, room - 7).replace(/-+$/, '')}-${hash(cellId, 6)}`;
  return `${head}${body}`;
}

export interface CellNames {
  readonly base: string;
  readonly clusterId: string;
  readonly clusterParameterGroup: string;
  readonly instanceParameterGroup: string;
  readonly writerId: string;
  readonly readerId: (index: number) => string;
  /**
   * EC2 RunInstances ClientToken for a launch after `launched` clients already exist.
   * The token takes at most 64 ASCII characters, so it is a sha256 hex, never a cut string that could lose the count.
   * See botocore, ec2, RunInstancesRequest.ClientToken.
   */
  readonly clientToken: (launched: number) => string;
  readonly clientName: (index: number) => string;
  /** RunInstances ClientToken of a self-managed cell's server `index`, hashed as clientToken is. */
  readonly serverToken: (index: number) => string;
  /**
   * The Secrets Manager name of a self-managed cell's database credentials.
   * A name should not end in a hyphen and six characters, since Secrets Manager appends that to the ARN.
   * "-credentials" ends the name whatever the base ends with. See botocore, secretsmanager, CreateSecretRequest.Name.
   */
  readonly serverSecretName: string;
}

export function cellNames(runId: string, cellId: string): CellNames {
  const base = cellBaseName(runId, cellId);
  return {
    base,
    clusterId: base,
    clusterParameterGroup: `${base}-cpg`,
    instanceParameterGroup: `${base}-ipg`,
    writerId: `${base}-w`,
    readerId: (i: number) => `${base}-r${i}`,
    // A retried StartClients then returns the same instances on real EC2.
    clientToken: (launched: number) => hash(`${runId}\n${cellId}\nclients-${launched}`, 64),
    clientName: (i: number) => `${base}-client-${i}`,
    serverToken: (index: number) => hash(`${runId}\n${cellId}\nserver-${index}`, 64),
    serverSecretName: `${base}-server-credentials`,
  };
}

export interface TagKeys {
  readonly runId: string;
  readonly cellId: string;
  readonly expiresAt: string;
  readonly role: string;
  readonly clientIndex: string;
  /** A self-managed cell's server: 0 the writer, 1..N its replicas. */
  readonly serverIndex: string;
}

export function tagKeys(prefix: string): TagKeys {
  return {
    runId: `${prefix}run-id`,
    cellId: `${prefix}cell-id`,
    expiresAt: `${prefix}expires-at`,
    role: `${prefix}role`,
    clientIndex: `${prefix}client-index`,
    serverIndex: `${prefix}server-index`,
  };
}

export interface Tag {
  readonly Key: string;
  readonly Value: string;
}

/**
 * ISO time the sweeper may delete the resource after.
 * @internal exported for its tests
 */
export function expiresAt(now: Date, ttlHours: number): string {
  return new Date(now.getTime() + ttlHours * 3600_000).toISOString();
}

function cellTags(
  prefix: string,
  runId: string,
  cellId: string,
  expires: string,
  extra: Readonly<Record<string, string>> = {},
): Tag[] {
  const k = tagKeys(prefix);
  return [
    { Key: k.runId, Value: runId },
    { Key: k.cellId, Value: cellId },
    { Key: k.expiresAt, Value: expires },
    ...Object.entries(extra).map(([Key, Value]) => ({ Key, Value })),
  ];
}

/**
 * The tag list of one cell's resources at `now`: run, cell, expiry and `extra`.
 * The one place the backend's modules build it from.
 */
export function cellTagger(
  tagKeyPrefix: string,
  now: () => Date,
): (
  run: { readonly runId: string; readonly ttlHours: number },
  cell: { readonly cellId: string },
  extra?: Readonly<Record<string, string>>,
) => Tag[] {
  return (run, cell, extra = {}) =>
    cellTags(tagKeyPrefix, run.runId, cell.cellId, expiresAt(now(), run.ttlHours), extra);
}
