/**
 * User data of a sysbench client (Amazon Linux 2023): installs sysbench 1.0.20 and the client runner,
 * then writes a ready marker the backend can poll through SSM. The runner needs the AWS CLI (part of
 * AL2023), jq (installed here; it falls back to python3) and sysbench.
 *
 * Why build from source: Amazon Linux 2023 ships no sysbench package and does not support EPEL; the
 * packagecloud repository script targets el/ubuntu and would be one more external download. So the
 * instance fetches the 1.0.20 source tarball (GitHub by default, or an s3:// copy for VPCs without a
 * NAT: clients.sysbenchSourceUrl), installs the build dependencies from the AL2023 repositories (reached
 * through the S3 gateway endpoint) and builds it with its bundled LuaJIT. The MySQL client library
 * package name differs between AL2023 releases, so both known names are tried.
 * Known risk: the bundled LuaJIT 2.1.0-beta2 can fail on arm64 kernels with a 48-bit address space
 * ("bad light userdata pointer"); the marker is only written when `sysbench --version` and a
 * `sysbench cpu` smoke run succeed, so such a client is reported as not ready instead of failing steps.
 *
 * Dead-man's switch: before anything else (a failed build ends the script under `set -e`), the client
 * schedules its own `shutdown -h` at its run's `aurora-bench:expires-at` tag, read from the instance
 * metadata (the launch template enables InstanceMetadataTags), and never later than
 * MAX_CLIENT_LIFETIME_HOURS after boot. The launch template's InstanceInitiatedShutdownBehavior is
 * terminate, so a client nobody tore down (a crashed workflow, a failed sweep) ends as terminated.
 */

import { CLIENT_INSTALL_DIR, CLIENT_READY_MARKER } from '../core/backends/aws/runner-command';

export const SYSBENCH_VERSION = '1.0.20';
/** Where the runner lives on a client: the backend copies it there again before each job. */
export const RUNNER_INSTALL_DIR = CLIENT_INSTALL_DIR;
/** Written last by the user data; its content is the installed sysbench version line. Jobs wait for it. */
export { CLIENT_READY_MARKER };

/** The spec's largest ttlHours (core/spec/schema.ts): no run keeps a client longer. */
export const MAX_CLIENT_LIFETIME_HOURS = 168;
/** Instance metadata service base URL (IMDSv2: a session token first). */
export const IMDS_BASE_URL = 'http://169.254.169.254/latest';

export interface ClientUserDataProps {
  /** s3://bucket/runner/ holding client/ (runner.sh, lua/, workloads/), ending in '/'. */
  readonly runnerS3Uri: string;
  readonly sysbenchSourceUrl: string;
  /** The stack's region: the AWS CLI on the client does not guess it. */
  readonly region: string;
  /** The tag key holding the run's expiry (ISO time), e.g. aurora-bench:expires-at. */
  readonly expiresAtTag: string;
}

/**
 * Shell lines that schedule the shutdown at the instance's expires-at tag, at most
 * MAX_CLIENT_LIFETIME_HOURS from now (also when the tag or the metadata cannot be read). $IMDS is
 * the metadata base URL (set by the caller).
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

/** Shell lines (no shebang: CDK's UserData.forLinux adds it). Values may be CloudFormation tokens. */
export function clientUserDataCommands(props: ClientUserDataProps): string[] {
  return [
    'set -euo pipefail',
    'exec > >(tee -a /var/log/aurora-bench-user-data.log) 2>&1',
    `IMDS='${IMDS_BASE_URL}'`,
    ...deadMansSwitchCommands(props.expiresAtTag),
    `export AWS_DEFAULT_REGION='${props.region}'`,
    `SYSBENCH_VERSION='${SYSBENCH_VERSION}'`,
    `SYSBENCH_SOURCE_URL='${props.sysbenchSourceUrl}'`,
    `RUNNER_S3_URI='${props.runnerS3Uri}'`,
    `RUNNER_DIR='${RUNNER_INSTALL_DIR}'`,
    'mkdir -p /opt/aurora-bench',
    // Build dependencies: the AL2023 repositories are served from S3, reachable without a NAT.
    'dnf install -y -q --setopt=install_weak_deps=False gcc make automake autoconf libtool pkgconf-pkg-config openssl-devel libaio-devel zlib-devel tar gzip jq',
    'dnf install -y -q mariadb105-devel || dnf install -y -q mariadb-connector-c-devel',
    'if ! sysbench --version 2>/dev/null | grep -q "sysbench ${SYSBENCH_VERSION}"; then',
    '  workdir=$(mktemp -d)',
    '  case "$SYSBENCH_SOURCE_URL" in',
    '    s3://*) aws s3 cp --only-show-errors "$SYSBENCH_SOURCE_URL" "$workdir/sysbench.tar.gz" ;;',
    '    *) curl -fsSL --retry 5 -o "$workdir/sysbench.tar.gz" "$SYSBENCH_SOURCE_URL" ;;',
    '  esac',
    '  tar -xzf "$workdir/sysbench.tar.gz" -C "$workdir"',
    '  cd "$workdir"/sysbench-*',
    '  ./autogen.sh',
    '  ./configure --prefix=/usr/local --with-mysql --without-pgsql',
    '  make -j"$(nproc)"',
    '  make install',
    '  cd /',
    '  rm -rf "$workdir"',
    'fi',
    'export PATH=/usr/local/bin:$PATH',
    'sysbench --version | grep "sysbench ${SYSBENCH_VERSION}"',
    'sysbench cpu --time=1 run > /dev/null',
    // The client runner (client/ of this repository), deployed by the stack under runner/.
    'rm -rf "$RUNNER_DIR" && mkdir -p "$RUNNER_DIR"',
    'aws s3 cp --only-show-errors --recursive "$RUNNER_S3_URI" "$RUNNER_DIR/"',
    'chmod +x "$RUNNER_DIR"/*.sh 2>/dev/null || true',
    `sysbench --version > ${CLIENT_READY_MARKER}`,
  ];
}
