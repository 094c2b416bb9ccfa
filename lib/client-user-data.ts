/**
 * User data of a sysbench client (Amazon Linux 2023, x86_64 or arm64). In order:
 * 1. the dead-man's switch (below), before anything that can fail;
 * 2. the client runner (client/ of this repository, deployed by the stack under runner/) into
 *    ${AURORA_BENCH_HOME:-/opt/aurora-bench}/client: it carries the install and readiness scripts;
 * 3. build dependencies from the AL2023 repositories (served from S3, reachable without a NAT);
 * 4. client/install-sysbench.sh: sysbench 1.0.20 built against a current LuaJIT 2.1 (the LuaJIT
 *    sysbench bundles crashes on arm64; the script says why), installed under
 *    ${AURORA_BENCH_HOME:-/opt/aurora-bench}/sysbench;
 * 5. client/client-ready.sh: runs sysbench through the report hook and writes the ready marker,
 *    locally and as s3://<bucket>/clients/<instance-id>/ready.json, which checkClientsReady reads
 *    (core/backends/aws/runner-command.ts says why S3). Only then is the client ready for jobs.
 * When any step fails, the exit trap uploads a not-ready marker with the reason, so the workflow
 * stops at once instead of at its readiness deadline. The log is /var/log/aurora-bench-user-data.log.
 *
 * Why build from source: Amazon Linux 2023 ships no sysbench package and does not support EPEL; the
 * packagecloud repository script targets el/ubuntu and would be one more external download. The
 * sources come from clients.sysbenchSourceUrl and clients.luajitSourceUrl (GitHub by default,
 * through the NAT; or s3:// copies for VPCs without one). The MySQL client library package name
 * differs between AL2023 releases, so both known names are tried.
 *
 * Every path on the client is written as ${AURORA_BENCH_HOME:-/opt/aurora-bench}/... (CLIENT_HOME),
 * as the SSM commands are, so the same text can run under another directory.
 *
 * Dead-man's switch: the client schedules its own `shutdown -h` at its run's
 * `aurora-bench:expires-at` tag, read from the instance metadata (the launch template enables
 * InstanceMetadataTags), and never later than MAX_CLIENT_LIFETIME_HOURS after boot. The launch
 * template's InstanceInitiatedShutdownBehavior is terminate, so a client nobody tore down (a crashed
 * workflow, a failed sweep) ends as terminated.
 */

import { CLIENT_HOME, CLIENT_INSTALL_DIR, CLIENT_READY_PREFIX } from '../core/backends/aws/runner-command';

const SYSBENCH_VERSION = '1.0.20';

/** The spec's largest ttlHours (core/experiment/schema.ts): no run keeps a client longer. */
export const MAX_CLIENT_LIFETIME_HOURS = 168;
/** Instance metadata service base URL (IMDSv2: a session token first). */
const IMDS_BASE_URL = 'http://169.254.169.254/latest';
/** Where the user data logs (also named in the SSM commands' not-ready message). */
const USER_DATA_LOG = '/var/log/aurora-bench-user-data.log';

export interface ClientUserDataProps {
  /** s3://bucket/runner/ holding client/ (runner.sh, lua/, workloads/, the install and ready scripts), ending in '/'. */
  readonly runnerS3Uri: string;
  /** s3://bucket/ of the stack's bucket, ending in '/': the ready marker goes under clients/ there. */
  readonly bucketS3Uri: string;
  readonly sysbenchSourceUrl: string;
  readonly luajitSourceUrl: string;
  /** The stack's region: the AWS CLI on the client does not guess it. */
  readonly region: string;
  /** The tag key holding the run's expiry (ISO time), e.g. aurora-bench:expires-at. */
  readonly expiresAtTag: string;
}

/**
 * Shell lines that schedule the shutdown at the instance's expires-at tag, at most
 * MAX_CLIENT_LIFETIME_HOURS from now (also when the tag or the metadata cannot be read). $IMDS is
 * the metadata base URL (set by the caller).
 * @internal exported for its tests (a test seam)
 */
export function deadMansSwitchCommands(expiresAtTag: string): string[] {
  return [
    `max_at=$(( $(date +%s) + ${MAX_CLIENT_LIFETIME_HOURS} * 3600 ))`,
    'imds_token=$(curl -fsS -m 5 -X PUT "$IMDS/api/token" -H "X-aws-ec2-metadata-token-ttl-seconds: 60" || true)',
    `expires_at=$(curl -fsS -m 5 -H "X-aws-ec2-metadata-token: $imds_token" "$IMDS/meta-data/tags/instance/${expiresAtTag}" || true)`,
    'shutdown_at=$(date -d "$expires_at" +%s 2>/dev/null || echo "$max_at")',
    'if [ -z "$expires_at" ] || [ "$shutdown_at" -gt "$max_at" ]; then shutdown_at=$max_at; fi',
    'shutdown_minutes=$(( (shutdown_at - $(date +%s) + 59) / 60 ))',
    'if [ "$shutdown_minutes" -lt 1 ]; then shutdown_minutes=1; fi',
    'echo "aurora-bench: this client shuts down (and terminates) in ${shutdown_minutes} min (expires-at: ${expires_at:-unknown})"',
    'shutdown -h "+${shutdown_minutes}"',
  ];
}

/**
 * The bundle (client/ of this repository, under runner/ in the stack's bucket, named by
 * $RUNNER_S3_URI) into ${AURORA_BENCH_HOME:-/opt/aurora-bench}/client: the same lines on a client
 * and on a self-managed server.
 */
function fetchBundleCommands(): string[] {
  const dir = CLIENT_INSTALL_DIR;
  return [`mkdir -p "${CLIENT_HOME}" "${dir}"`, `aws s3 cp --only-show-errors --recursive "$RUNNER_S3_URI" "${dir}/"`, `chmod +x "${dir}"/*.sh`];
}

/**
 * Shell lines that put the runner in place, install sysbench and prove it works (steps 2-5 of the
 * file comment). Needs $IMDS; the AWS CLI and curl (part of AL2023).
 * @internal exported for its tests (a test seam)
 */
export function clientInstallCommands(props: Omit<ClientUserDataProps, 'region' | 'expiresAtTag'>): string[] {
  const dir = CLIENT_INSTALL_DIR;
  return [
    `RUNNER_S3_URI='${props.runnerS3Uri}'`,
    'imds_token=$(curl -fsS -m 5 -X PUT "$IMDS/api/token" -H "X-aws-ec2-metadata-token-ttl-seconds: 300")',
    'instance_id=$(curl -fsS -m 5 -H "X-aws-ec2-metadata-token: $imds_token" "$IMDS/meta-data/instance-id")',
    `ready_marker_uri="${props.bucketS3Uri}${CLIENT_READY_PREFIX}\${instance_id}/ready.json"`,
    // A failed step ends the script (set -e): report it where checkClientsReady looks, with the log's tail.
    'report_not_ready() {',
    '  rc=$?',
    `  if [ "$rc" -ne 0 ] && [ -x "${dir}/client-ready.sh" ]; then`,
    `    "${dir}/client-ready.sh" --marker-uri "$ready_marker_uri" --not-ready "user data failed (exit $rc): $(tail -n 12 ${USER_DATA_LOG} 2>/dev/null | tr '\\n' ' ' | cut -c1-1500)" || true`,
    '  fi',
    '}',
    'trap report_not_ready EXIT',
    ...fetchBundleCommands(),
    // Build dependencies: the AL2023 repositories are served from S3, reachable without a NAT.
    'dnf install -y -q --setopt=install_weak_deps=False gcc make automake autoconf libtool pkgconf-pkg-config openssl-devel libaio-devel zlib-devel tar gzip xz jq',
    'dnf install -y -q mariadb105-devel || dnf install -y -q mariadb-connector-c-devel',
    // libpq and pg_config for sysbench's pgsql driver (client/install-sysbench.sh --with-pgsql); without
    // them sysbench is built for the MySQL engines only, so a missing package does not fail the client:
    // client-ready.sh reports the compiled-in drivers and a PostgreSQL cell refuses clients without
    // pgsql (client-fleet.ts). The package name is tried first; then whichever package provides
    // /usr/bin/pg_config (dnf installs by file path: "dnf install /usr/bin/<file>", dnf command
    // reference, install specs), in case the repositories name the headers differently.
    "dnf install -y -q libpq-devel || dnf install -y -q /usr/bin/pg_config || echo 'libpq headers / pg_config not installed: sysbench without its pgsql driver'",
    `"${dir}/install-sysbench.sh" --luajit-source '${props.luajitSourceUrl}' --sysbench-source '${props.sysbenchSourceUrl}' --prefix "${CLIENT_HOME}/sysbench"`,
    // client-ready.sh reports its own failure, with the precise reason: the trap must not overwrite it.
    'trap - EXIT',
    `"${dir}/client-ready.sh" --marker-uri "$ready_marker_uri"`,
  ];
}

/**
 * The start every instance's boot shares, client or server: strict bash, everything logged to the
 * user-data log, the metadata endpoint, the dead-man's switch, and the region for the AWS CLI.
 */
function bootPreludeCommands(props: { readonly region: string; readonly expiresAtTag: string }): string[] {
  return [
    'set -euo pipefail',
    `exec > >(tee -a ${USER_DATA_LOG}) 2>&1`,
    `IMDS='${IMDS_BASE_URL}'`,
    ...deadMansSwitchCommands(props.expiresAtTag),
    `export AWS_DEFAULT_REGION='${props.region}'`,
  ];
}

/** Shell lines (no shebang: CDK's UserData.forLinux adds it). Values may be CloudFormation tokens. */
export function clientUserDataCommands(props: ClientUserDataProps): string[] {
  return [
    ...bootPreludeCommands(props),
    `echo "aurora-bench: installing sysbench ${SYSBENCH_VERSION} with a current LuaJIT under ${CLIENT_HOME}"`,
    ...clientInstallCommands(props),
  ];
}

export interface ServerUserDataProps {
  /** s3://bucket/runner/ holding client/ (server-install.sh and server-setup.sh among it), ending in '/'. */
  readonly runnerS3Uri: string;
  readonly region: string;
  readonly expiresAtTag: string;
}

/**
 * User data of a self-managed server (Amazon Linux 2023, x86_64 or arm64): the clients' dead-man's
 * switch, the bundle fetched as the clients fetch it, then client/server-install.sh (the MariaDB
 * server package; it writes ${AURORA_BENCH_HOME:-/opt/aurora-bench}/server-installed, or
 * server-install-failed with its reason). A step before it that fails (the bundle's copy) writes
 * server-install-failed too, with the log's tail, so the setup command the backend sends over SSM
 * (client/server-setup.sh, which waits for one of the two markers) fails at once with the reason.
 * Last, client/server-metrics-agent.sh installs and starts the CloudWatch agent (memory from inside
 * the instance, namespace CWAgent); it always exits 0, noting a failure in metrics-agent-failed, so
 * a missing agent never fails the server.
 */
export function serverUserDataCommands(props: ServerUserDataProps): string[] {
  const failedMarker = `${CLIENT_HOME}/server-install-failed`;
  return [
    ...bootPreludeCommands(props),
    `RUNNER_S3_URI='${props.runnerS3Uri}'`,
    'report_install_failed() {',
    '  rc=$?',
    `  if [ "$rc" -ne 0 ] && [ ! -f "${CLIENT_HOME}/server-installed" ] && [ ! -f "${failedMarker}" ]; then`,
    `    mkdir -p "${CLIENT_HOME}" && echo "server user data failed (exit $rc): $(tail -n 12 ${USER_DATA_LOG} 2>/dev/null | tr '\\n' ' ' | cut -c1-1500)" > "${failedMarker}"`,
    '  fi',
    '}',
    'trap report_install_failed EXIT',
    'echo "aurora-bench: installing the self-managed server"',
    ...fetchBundleCommands(),
    `"${CLIENT_INSTALL_DIR}/server-install.sh"`,
    'echo "aurora-bench: starting the CloudWatch agent (memory metrics)"',
    `"${CLIENT_INSTALL_DIR}/server-metrics-agent.sh"`,
  ];
}
