/**
 * What runs on a client, as shell text the stack and the backend generate:
 * - ssmRunnerCommands: the AWS-RunShellScript commands of one job: fetch client/ from the runner S3
 *   location, then exec `node client/runner.js` (the bundled runner, core/runner/) with the argv that
 *   core/sysbench/command.ts `runnerArgs` builds (shared CLI contract, core/sysbench/runner-argv.ts,
 *   docs/architecture.md, "The runner's command line"). Only the secret's ARN travels
 *   (--password-secret), never a password.
 * - the client home and the ready marker (lib/client-user-data.ts writes them at boot).
 *
 * Client home: every path on a client is written as `${AURORA_BENCH_HOME:-/opt/aurora-bench}/...`
 * (CLIENT_HOME), so the same text runs on an EC2 client (variable unset: /opt/aurora-bench) and on
 * a machine that emulates several clients by giving each its own AURORA_BENCH_HOME.
 *
 * Readiness ("sysbench works", not "the SSM agent is online"): the user data installs sysbench
 * (Debian's package, lib/client-user-data.ts), then runs client/client-ready.sh, which runs sysbench through the
 * report hook and only then writes the marker twice:
 *   ${AURORA_BENCH_HOME:-/opt/aurora-bench}/ready      on the client (a job refuses to start without it)
 *   s3://<bucket>/clients/<instance-id>/ready.json      what checkClientsReady reads ({"ready":true,...})
 * A failed boot uploads {"ready":false,"reason":...} to the same key, so the workflow stops at once
 * with the reason instead of waiting for its readiness deadline.
 *
 * Why an S3 object rather than an SSM command that cats the marker: checkClientsReady polls every
 * 15 s for minutes while sysbench builds. A command per poll per client would fill the instances'
 * Run Command history (startJobs scans ListCommands per instance to find a job's command again on
 * a retry), cost a round trip of seconds through the agent, and could only start once the agent is
 * Online. A GetObject is one call, answers in milliseconds, needs no agent, and the Task role already
 * reads the whole bucket; the client role gains s3:PutObject on clients/* only (lib/clients.ts).
 * Instance ids are never reused, so a marker cannot be left over from another client. The objects
 * expire by a lifecycle rule (lib/results-lake.ts).
 */

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunnerExitCode } from '../../sysbench/runner-argv';

/** POSIX single-quote quoting: safe for any byte sequence except NUL. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`;
}

/** The client's home directory as shell text: expanded by the shell, so it must never sit inside single quotes. */
export const CLIENT_HOME = '${AURORA_BENCH_HOME:-/opt/aurora-bench}';

/** Where the runner (this repository's client/ directory) is installed on a client. */
export const CLIENT_INSTALL_DIR = `${CLIENT_HOME}/client`;

/** Written by client/client-ready.sh once sysbench has run through the report hook. Jobs refuse to start without it. */
const CLIENT_READY_MARKER = `${CLIENT_HOME}/ready`;

/** Key prefix (in the stack's bucket, outside the lake) of the clients' ready markers. */
export const CLIENT_READY_PREFIX = 'clients/';

/** The S3 key of a client's ready marker. */
export function clientReadyKey(instanceId: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(instanceId)) throw new Error(`client id "${instanceId}" is not an EC2 instance id`);
  return `${CLIENT_READY_PREFIX}${instanceId}/ready.json`;
}

/** The marker client/client-ready.sh writes (JSON). */
export interface ClientReadyMarker {
  readonly ready: boolean;
  /** Why not (ready: false). */
  readonly reason?: string;
  /** `sysbench --version` (ready: true). */
  readonly sysbench?: string;
  readonly sysbenchVersion?: string;
  /**
   * The database drivers the client's sysbench was built with (`sysbench --help`, "Compiled-in database
   * drivers"); absent in markers written before client-ready.sh reported them.
   */
  readonly drivers?: readonly string[];
  /** `uname -m` */
  readonly arch?: string;
  readonly hostname?: string;
  readonly at?: string;
}

/** Exit code when the client is not ready (the runner's own setup-error code). */
const CLIENT_NOT_READY_EXIT = RunnerExitCode.Setup;

/**
 * The digest of a runner bundle (client/ as the stack deploys it, or as a client installed it): the
 * SHA-256 of what `sha256sum` prints for its files, in the C locale's byte order of their paths
 * relative to the folder ("<hex>  ./lua/x.lua" lines). RUNNER_DIGEST_SHELL computes the same on a
 * client with coreutils. The stack puts it in the Tasks' environment (AwsBackendConfig.runnerDigest).
 */
export function runnerBundleDigest(dir: string): string {
  const files: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else if (e.isFile()) files.push(path);
    }
  };
  walk('.');
  // sha256sum escapes a name holding a backslash or a newline: such a name would not hash the same here.
  const odd = files.find((f) => /[\\\n]/.test(f));
  if (odd !== undefined) throw new Error(`runner bundle ${dir}: file name ${JSON.stringify(odd)} cannot be digested`);
  files.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const listing = files
    .map(
      (f) =>
        `${createHash('sha256')
          .update(readFileSync(join(dir, f)))
          .digest('hex')}  ${f}\n`,
    )
    .join('');
  return createHash('sha256').update(listing).digest('hex');
}

/**
 * Shell text printing runnerBundleDigest of the current folder (coreutils and findutils, on every
 * Debian image). An empty folder digests the empty listing.
 */
const RUNNER_DIGEST_SHELL = [
  'find . -type f -print0',
  'LC_ALL=C sort -z',
  'xargs -0 -r sha256sum',
  'sha256sum',
  "cut -d' ' -f1",
].join(' | ');

/**
 * AWS-RunShellScript `commands`: one script, run by the SSM agent as root. A client always runs the
 * runner of the stack that started the job: the bundle is copied again unless the installed one has
 * that stack's digest (`runnerDigest`, runnerBundleDigest of the client/ the stack deployed; empty:
 * always copied). The check costs milliseconds where the AWS CLI's copy costs about a second of CPU
 * per job. Jobs are only sent to clients checkClientsReady found ready, so the marker check here does
 * not wait: a job deadline (measured from SendCommand) is never spent on a client's boot.
 */
export function ssmRunnerCommands(
  region: string,
  runnerS3Uri: string,
  runnerDigest: string,
  runnerArgv: readonly string[],
): string[] {
  const dir = CLIENT_INSTALL_DIR;
  if (!/^([0-9a-f]{64})?$/.test(runnerDigest))
    throw new Error(`runner digest "${runnerDigest}" is not a SHA-256 in hex (or empty)`);
  return [
    'set -eu',
    `export AWS_DEFAULT_REGION=${shellQuote(region)}`,
    `if [ ! -f "${CLIENT_READY_MARKER}" ]; then echo "client not ready: ${CLIENT_READY_MARKER} is missing ` +
      `(client-ready.sh has not proven that sysbench works; see /var/log/aurora-bench-user-data.log)" >&2; ` +
      `exit ${CLIENT_NOT_READY_EXIT}; fi`,
    `mkdir -p "${dir}"`,
    `if [ -z "${runnerDigest}" ] || [ "$(cd "${dir}" && ${RUNNER_DIGEST_SHELL})" != "${runnerDigest}" ]; then`,
    `  aws s3 cp --recursive --only-show-errors ${shellQuote(runnerS3Uri)} "${dir}/"`,
    'fi',
    // Debian 12's nodejs (lib/client-user-data.ts installs it at boot; client-ready.sh proves it loads the bundle).
    `exec node "${dir}/runner.js" ${runnerArgv.map(shellQuote).join(' ')}`,
  ];
}
