/**
 * User data of a sysbench client and of a self-managed server: Debian 12 (bookworm), x86_64 or
 * arm64 (lib/clients.ts says where the AMI comes from). In order, for a client:
 * 1. the dead-man's switch (below), before anything that can fail;
 * 2. the packages, from Debian's archive (apt-get; the AMI's own sources): sysbench 1.0.20, which
 *    Debian builds against its system LuaJIT 2.1 (so no compiler and no LuaJIT crash on arm64:
 *    sysbench issue #384 is the bundled 2.1.0-beta2's), the AWS CLI, and Node.js for the runner;
 * 3. the client runner (client/ of this repository, deployed by the stack under runner/) into
 *    ${AURORA_BENCH_HOME:-/opt/aurora-bench}/client;
 * 4. the SSM agent, which Debian's AMIs do not have (below);
 * 5. client/client-ready.sh: runs sysbench through the report hook and writes the ready marker,
 *    locally and as s3://<bucket>/clients/<instance-id>/ready.json, which checkClientsReady reads
 *    (core/backends/aws/runner-command.ts says why S3). Only then is the client ready for jobs.
 * From before step 2 on, a failed step makes the exit trap upload a not-ready marker with the
 * reason, so the workflow stops at once instead of at its readiness deadline: once the runner is
 * there, with client-ready.sh --not-ready; before (an apt failure: no route to the archive, a broken
 * source, the dpkg lock held past DPkg::Lock::Timeout), with curl alone, signed with the instance
 * profile's keys from the instance metadata (curlNotReadyCommands). The log is
 * /var/log/aurora-bench-user-data.log.
 *
 * The same text is what the AWS rehearsal boots (core/rehearsal/ssm-agent.ts, instance-root.ts):
 * rendered as the stack renders it and run unmodified in a Debian 12 root built by debootstrap
 * from the same archive; docs/aws-client-boot.md says what stands in for AWS there.
 *
 * The SSM agent (Systems Manager User Guide, "Manually install SSM Agent on Debian Server
 * instances", awsdocs/aws-systems-manager-user-guide doc_source/agent-install-deb.md): the package
 * https://s3.<region>.amazonaws.com/amazon-ssm-<region>/latest/debian_amd64/amazon-ssm-agent.deb
 * (debian_arm64 for arm64), `dpkg -i`, then `systemctl enable` when it is not running. It is
 * fetched here as that same object through the S3 API (`aws s3 cp --no-sign-request`: the bucket is
 * public, and the instance role grants no read of AWS's buckets), so it comes through the stack's S3
 * gateway endpoint like the runner does.
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

import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CLIENT_HOME, CLIENT_INSTALL_DIR, CLIENT_READY_PREFIX } from '../core/backends/aws/runner-command';
import { EXPIRES_AT_TAG, RUNNER_PREFIX } from './handler-environment';

/** The spec's largest ttlHours (core/experiment/schema.ts): no run keeps a client longer. */
export const MAX_CLIENT_LIFETIME_HOURS = 168;
/** Instance metadata service base URL (IMDSv2: a session token first). */
const IMDS_BASE_URL = 'http://169.254.169.254/latest';
/** Where the user data logs (also named in the SSM commands' not-ready message). */
const USER_DATA_LOG = '/var/log/aurora-bench-user-data.log';

/**
 * Debian packages a client installs at boot (bookworm: sysbench 1.0.20 on the system LuaJIT, AWS
 * CLI 2.9.19, nodejs 18: the runner, client/runner.js, is bundled for it by scripts/build-runner.ts).
 * curl and ca-certificates come with Debian's AMIs.
 */
const CLIENT_PACKAGES = ['sysbench', 'awscli', 'nodejs'] as const;
/** Debian packages a self-managed server installs before client/server-install.sh adds MariaDB. */
const SERVER_PACKAGES = ['awscli', 'jq'] as const;
/**
 * What client/server-install.sh installs (test/unit/client-user-data.test.ts reads them from the script).
 * @internal exported for its tests (a test seam)
 */
export const SERVER_INSTALL_PACKAGES = ['mariadb-server', 'mariadb-client'] as const;

/**
 * What the boot downloads from outside the stack's endpoints, by name (the preflight checks that
 * the clients' subnets reach it): Debian's package archive, which the AMI's apt sources name (a
 * mirror of it). The SSM agent comes from S3, through the S3 gateway endpoint.
 */
export const CLIENT_BOOT_DOWNLOADS: Readonly<Record<string, string>> = { debian: 'https://deb.debian.org/debian' };

/**
 * The public bucket and key of the SSM agent's Debian package for a region ($AWS_DEFAULT_REGION) and
 * Debian architecture ($(dpkg --print-architecture): amd64 or arm64), as shell text.
 */
const SSM_AGENT_DEB_S3_URI =
  's3://amazon-ssm-${AWS_DEFAULT_REGION}/latest/debian_$(dpkg --print-architecture)/amazon-ssm-agent.deb';

export interface ClientUserDataProps {
  /**
   * s3://bucket/runner/ holding client/ (runner.js, lua/, workloads/, the install and ready scripts), ending in '/'.
   */
  readonly runnerS3Uri: string;
  /** s3://bucket/ of the stack's bucket, ending in '/': the ready marker goes under clients/ there. */
  readonly bucketS3Uri: string;
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
    `expires_at=$(curl -fsS -m 5 -H "X-aws-ec2-metadata-token: $imds_token" ` +
      `"$IMDS/meta-data/tags/instance/${expiresAtTag}" || true)`,
    'shutdown_at=$(date -d "$expires_at" +%s 2>/dev/null || echo "$max_at")',
    'if [ -z "$expires_at" ] || [ "$shutdown_at" -gt "$max_at" ]; then shutdown_at=$max_at; fi',
    'shutdown_minutes=$(( (shutdown_at - $(date +%s) + 59) / 60 ))',
    'if [ "$shutdown_minutes" -lt 1 ]; then shutdown_minutes=1; fi',
    'echo "aurora-bench: this client shuts down (and terminates) in ${shutdown_minutes} min (expires-at: ' +
      '${expires_at:-unknown})"',
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
  return [
    `mkdir -p "${CLIENT_HOME}" "${dir}"`,
    `aws s3 cp --only-show-errors --recursive "$RUNNER_S3_URI" "${dir}/"`,
    `chmod +x "${dir}"/*.sh`,
  ];
}

/**
 * apt's options at boot. Debian's apt-daily timers can hold the dpkg lock when the instance starts:
 * DPkg::Lock::Timeout makes apt wait for it that many seconds instead of failing at once (apt-get(8),
 * apt.conf(5); apt 1.9.11 and later, Debian 12 has 2.6), within the readiness deadline. A fetch that
 * fails is tried again Acquire::Retries times (apt.conf(5), "The Acquire Group").
 */
const APT_BOOT_OPTIONS = '-o DPkg::Lock::Timeout=900 -o Acquire::Retries=5';

/**
 * Shell lines that install Debian packages from the AMI's apt sources, without prompts and without
 * recommended packages (what the steps need is in each package's Depends).
 */
function aptInstallCommands(packages: readonly string[]): string[] {
  return [
    'export DEBIAN_FRONTEND=noninteractive',
    `apt-get -q ${APT_BOOT_OPTIONS} update`,
    `apt-get -q ${APT_BOOT_OPTIONS} install -y --no-install-recommends ${packages.join(' ')}`,
  ];
}

/**
 * Shell lines that install and start the SSM agent (the file comment cites the procedure). `dpkg -i`
 * of AWS's package starts it where systemd runs; `systemctl enable --now` is the guide's next step
 * for an agent that is installed but not running, and a no-op for one that runs.
 */
function ssmAgentInstallCommands(): string[] {
  return [
    `aws s3 cp --only-show-errors --no-sign-request "${SSM_AGENT_DEB_S3_URI}" /tmp/amazon-ssm-agent.deb`,
    'dpkg -i /tmp/amazon-ssm-agent.deb',
    'rm -f /tmp/amazon-ssm-agent.deb',
    'systemctl enable --now amazon-ssm-agent',
  ];
}

/**
 * Shell function not_ready_by_curl REASON: uploads the not-ready marker client/client-ready.sh
 * --not-ready writes ({"ready":false,"reason":...,"hostname":...,"at":...}) to $ready_marker_uri with
 * curl alone, for a failure before apt has installed the AWS CLI (and before the runner is there).
 * The keys are the instance profile's, from IMDSv2 iam/security-credentials/<role> (EC2 User Guide,
 * "Retrieve security credentials from instance metadata"); the request is signed by curl's
 * --aws-sigv4 (curl 7.75 and later; Debian 12 has 7.88, which sends x-amz-content-sha256 for s3 as S3
 * requires: curl pull request 9995), given here as UNSIGNED-PAYLOAD (Amazon S3 API Reference,
 * "Authenticating Requests: Using the Authorization Header"). The keys go to curl on its standard
 * input (-K -), not its command line. The endpoint is the AWS SDKs' and CLI's endpoint variables'
 * (AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL: AWS SDKs and Tools Reference Guide, "Service-specific
 * endpoints") when set, path-style, else the bucket's regional virtual-hosted URL, which the stack's
 * S3 gateway endpoint serves. The role may s3:PutObject under clients/ (lib/clients.ts).
 */
function curlNotReadyCommands(): string[] {
  const credentials = '$IMDS/meta-data/iam/security-credentials';
  // A field of the credentials' JSON (one "Key" : "value" pair per line on EC2, or all on one line).
  const field = (name: string) =>
    String.raw`$(printf '%s\n' "$creds" | sed -n 's/.*"${name}"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' ` +
    '| head -n 1)';
  return [
    'not_ready_by_curl() {',
    '  local reason token role creds bucket key endpoint url body',
    // The reason as a JSON string's text: tabs and newlines as spaces, other control characters dropped,
    // backslashes and quotes escaped.
    String.raw`  reason=$(printf '%s' "$1" | tr '\n\t' '  ' | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g')`,
    String.raw`  body=$(printf '{"ready":false,"reason":"%s","hostname":"%s","at":"%s"}' "$reason" "$(uname -n)" ` +
      '"$(date -u +%Y-%m-%dT%H:%M:%SZ)")',
    '  token=$(curl -fsS -m 5 -X PUT "$IMDS/api/token" -H "X-aws-ec2-metadata-token-ttl-seconds: 60")',
    `  role=$(curl -fsS -m 5 -H "X-aws-ec2-metadata-token: $token" "${credentials}/" | head -n 1)`,
    `  creds=$(curl -fsS -m 5 -H "X-aws-ec2-metadata-token: $token" "${credentials}/$role")`,
    '  bucket=${ready_marker_uri#s3://}',
    '  key=${bucket#*/}',
    '  bucket=${bucket%%/*}',
    '  endpoint=${AWS_ENDPOINT_URL_S3:-${AWS_ENDPOINT_URL:-}}',
    '  if [ -n "$endpoint" ]; then url="${endpoint%/}/$bucket/$key"',
    '  else url="https://$bucket.s3.$AWS_DEFAULT_REGION.amazonaws.com/$key"; fi',
    String.raw`  printf 'user = "%s:%s"\nheader = "x-amz-security-token: %s"\n' "${field('AccessKeyId')}" ` +
      `"${field('SecretAccessKey')}" "${field('Token')}" |`,
    '    curl -fsS -m 30 --retry 3 -K - -X PUT --aws-sigv4 "aws:amz:$AWS_DEFAULT_REGION:s3" ' +
      '-H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -H "Content-Type: application/json" ' +
      '--data-binary "$body" "$url" >/dev/null',
    '}',
  ];
}

/**
 * Shell lines that set the exit trap a client's boot reports a failure with, from the start of the
 * script: the not-ready marker under the instance's id, with the log's tail as the reason, uploaded by
 * client/client-ready.sh --not-ready once the runner and the AWS CLI are there, by curl before
 * (curlNotReadyCommands). Needs $IMDS and curl.
 */
function notReadyTrapCommands(bucketS3Uri: string): string[] {
  const dir = CLIENT_INSTALL_DIR;
  return [
    ...curlNotReadyCommands(),
    'ready_marker_uri=""',
    // A failed step ends the script (set -e): report it where checkClientsReady looks, with the log's tail.
    'report_not_ready() {',
    '  rc=$?',
    '  if [ "$rc" -eq 0 ] || [ -z "$ready_marker_uri" ]; then return 0; fi',
    `  reason="user data failed (exit $rc): $(tail -n 12 ${USER_DATA_LOG} 2>/dev/null | tr '\\n' ' ' | ` +
      `cut -c1-1500 || true)"`,
    // client-ready.sh exits 4 when it could not upload: curl may still get through.
    '  ready_rc=4',
    `  if [ -x "${dir}/client-ready.sh" ]; then`,
    `    ready_rc=0; "${dir}/client-ready.sh" --marker-uri "$ready_marker_uri" --not-ready "$reason" || ready_rc=$?`,
    '  fi',
    '  if [ "$ready_rc" -eq 4 ]; then',
    '    not_ready_by_curl "$reason" || echo "aurora-bench: could not upload the not-ready marker with curl" >&2',
    '  fi',
    '}',
    'trap report_not_ready EXIT',
    'imds_token=$(curl -fsS -m 5 -X PUT "$IMDS/api/token" -H "X-aws-ec2-metadata-token-ttl-seconds: 300")',
    'instance_id=$(curl -fsS -m 5 -H "X-aws-ec2-metadata-token: $imds_token" "$IMDS/meta-data/instance-id")',
    `ready_marker_uri="${bucketS3Uri}${CLIENT_READY_PREFIX}\${instance_id}/ready.json"`,
  ];
}

/**
 * Shell lines of a client's boot after the shared prelude: the exit trap (from here on a failure is
 * reported), the given install steps (`before`: the user data's apt-get), the runner, the SSM agent,
 * then client-ready.sh proves sysbench works (steps 2-5 of the file comment). Needs $IMDS and curl.
 * @internal exported for its tests (a test seam)
 */
export function clientInstallCommands(
  props: Pick<ClientUserDataProps, 'runnerS3Uri' | 'bucketS3Uri'>,
  before: readonly string[] = [],
): string[] {
  const dir = CLIENT_INSTALL_DIR;
  return [
    `RUNNER_S3_URI='${props.runnerS3Uri}'`,
    ...notReadyTrapCommands(props.bucketS3Uri),
    ...before,
    ...fetchBundleCommands(),
    ...ssmAgentInstallCommands(),
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
    ...clientInstallCommands(props, [
      `echo "aurora-bench: installing ${CLIENT_PACKAGES.join(', ')} from Debian's archive, and the SSM agent"`,
      ...aptInstallCommands(CLIENT_PACKAGES),
    ]),
  ];
}

export interface ServerUserDataProps {
  /** s3://bucket/runner/ holding client/ (server-install.sh and server-setup.sh among it), ending in '/'. */
  readonly runnerS3Uri: string;
  readonly region: string;
  readonly expiresAtTag: string;
}

/**
 * User data of a self-managed server (Debian 12, x86_64 or arm64): the clients' dead-man's switch,
 * the AWS CLI, the bundle and the SSM agent as the clients install them, then client/server-install.sh (Debian's
 * MariaDB 10.11 server package; it writes ${AURORA_BENCH_HOME:-/opt/aurora-bench}/server-installed, or
 * server-install-failed with its reason). A step before it that fails writes server-install-failed too, with the log's
 * tail, so the setup command the backend sends over SSM (client/server-setup.sh, which waits for one of the
 * two markers) fails at once with the reason. Last, client/server-metrics-agent.sh installs and
 * starts the CloudWatch agent (memory from inside the instance, namespace CWAgent); it always exits
 * 0, noting a failure in metrics-agent-failed, so a missing agent never fails the server.
 */
export function serverUserDataCommands(props: ServerUserDataProps): string[] {
  const failedMarker = `${CLIENT_HOME}/server-install-failed`;
  return [
    ...bootPreludeCommands(props),
    `RUNNER_S3_URI='${props.runnerS3Uri}'`,
    'report_install_failed() {',
    '  rc=$?',
    `  if [ "$rc" -ne 0 ] && [ ! -f "${CLIENT_HOME}/server-installed" ] && [ ! -f "${failedMarker}" ]; then`,
    `    mkdir -p "${CLIENT_HOME}" && echo "server user data failed (exit $rc): $(tail -n 12 ${USER_DATA_LOG} ` +
      `2>/dev/null | tr '\\n' ' ' | cut -c1-1500)" > "${failedMarker}"`,
    '  fi',
    '}',
    'trap report_install_failed EXIT',
    `echo "aurora-bench: installing ${SERVER_PACKAGES.join(', ')} from Debian's archive, the SSM agent, then ` +
      `the self-managed server"`,
    ...aptInstallCommands(SERVER_PACKAGES),
    ...fetchBundleCommands(),
    ...ssmAgentInstallCommands(),
    `"${CLIENT_INSTALL_DIR}/server-install.sh"`,
    'echo "aurora-bench: starting the CloudWatch agent (memory metrics)"',
    `"${CLIENT_INSTALL_DIR}/server-metrics-agent.sh"`,
  ];
}

/** The user data text of a launch template: CDK's UserData.forLinux() with these commands, rendered. */
function renderLinuxUserData(commands: readonly string[]): string {
  const userData = ec2.UserData.forLinux();
  userData.addCommands(...commands);
  return userData.render();
}

/**
 * The user data of the clients' and the servers' launch templates (lib/clients.ts, lib/servers.ts)
 * for a bucket and region, rendered as CloudFormation gives it to EC2 once the bucket name and the
 * region are known; with the Debian packages each installs. The AWS rehearsal boots this text
 * (test/cdk/stack.test.ts checks it against the synthesized launch templates).
 */
export function renderedBootUserData(o: {
  readonly bucket: string;
  readonly region: string;
}): Record<'client' | 'server', { readonly userData: string; readonly packages: readonly string[] }> {
  const runnerS3Uri = `s3://${o.bucket}/${RUNNER_PREFIX}`;
  return {
    client: {
      userData: renderLinuxUserData(
        clientUserDataCommands({
          runnerS3Uri,
          bucketS3Uri: `s3://${o.bucket}/`,
          region: o.region,
          expiresAtTag: EXPIRES_AT_TAG,
        }),
      ),
      packages: CLIENT_PACKAGES,
    },
    server: {
      userData: renderLinuxUserData(
        serverUserDataCommands({ runnerS3Uri, region: o.region, expiresAtTag: EXPIRES_AT_TAG }),
      ),
      packages: [...SERVER_PACKAGES, ...SERVER_INSTALL_PACKAGES],
    },
  };
}
