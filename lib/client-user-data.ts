/**
 * User data of a sysbench client and of a self-managed server, on Debian 12 for x86_64 or arm64.
 * A client arms its dead-man's switch first, before anything that can fail.
 * Then it installs Debian's packages, the runner and the SSM agent, and runs client/client-ready.sh.
 * Debian's sysbench 1.0.20 uses the system LuaJIT, so nothing is compiled and arm64 does not crash.
 * After the first step, a failure makes the exit trap upload a not-ready marker with the reason.
 * The workflow then stops at once instead of at its readiness deadline.
 * The AWS rehearsal boots this same text. docs/aws-client-boot.md says what stands in for AWS there.
 *
 * The SSM agent is installed as in Systems Manager User Guide, "Manually install SSM Agent on Debian Server instances".
 * Its package is fetched through the S3 API, so it comes through the stack's S3 gateway endpoint.
 *
 * The dead-man's switch schedules `shutdown -h` at the run's expiry tag, read from the instance metadata.
 * It is never later than MAX_CLIENT_LIFETIME_HOURS after boot.
 * Shutdown terminates the instance, so a client nobody tore down still ends.
 */

import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CLIENT_HOME, CLIENT_INSTALL_DIR, CLIENT_READY_PREFIX } from '../core/backends/aws/runner-command';
import { EXPIRES_AT_TAG, RUNNER_PREFIX } from './handler-environment';

/** The spec's largest ttlHours. No run keeps a client longer. */
export const MAX_CLIENT_LIFETIME_HOURS = 168;
/** Instance metadata service base URL. IMDSv2 asks for a session token first. */
const IMDS_BASE_URL = 'http://169.254.169.254/latest';
/** Where the user data logs. The SSM commands' not-ready message names it too. */
const USER_DATA_LOG = '/var/log/aurora-bench-user-data.log';

/**
 * Debian packages a client installs at boot.
 * scripts/build-runner.ts bundles the runner for Debian's nodejs 18.
 * curl and ca-certificates come with Debian's AMIs.
 */
const CLIENT_PACKAGES = ['sysbench', 'awscli', 'nodejs'] as const;
/** Debian packages a self-managed server installs before client/server-install.sh adds MariaDB. */
const SERVER_PACKAGES = ['awscli', 'jq'] as const;
/**
 * What client/server-install.sh installs. The tests read them from the script.
 * @internal Exported for its tests.
 */
export const SERVER_INSTALL_PACKAGES = ['mariadb-server', 'mariadb-client'] as const;

/**
 * What the boot downloads from outside the stack's endpoints, by name.
 * The preflight checks that the clients' subnets reach Debian's package archive.
 * The SSM agent comes from S3, through the S3 gateway endpoint.
 */
export const CLIENT_BOOT_DOWNLOADS: Readonly<Record<string, string>> = { debian: 'https://deb.debian.org/debian' };

/**
 * The public bucket and key of the SSM agent's Debian package, as shell text.
 * The region and the Debian architecture are read at boot.
 */
const SSM_AGENT_DEB_S3_URI =
  's3://amazon-ssm-${AWS_DEFAULT_REGION}/latest/debian_$(dpkg --print-architecture)/amazon-ssm-agent.deb';

export interface ClientUserDataProps {
  /** s3://bucket/runner/ holding client/, ending in '/'. */
  readonly runnerS3Uri: string;
  /** s3://bucket/ of the stack's bucket, ending in '/'. The ready marker goes under clients/ there. */
  readonly bucketS3Uri: string;
  /** The stack's region. The AWS CLI on the client does not guess it. */
  readonly region: string;
  /** The tag key holding the run's expiry as an ISO time. */
  readonly expiresAtTag: string;
}

/**
 * Shell lines that schedule the shutdown at the instance's expiry tag.
 * It is at most MAX_CLIENT_LIFETIME_HOURS from now, also when the tag cannot be read.
 * The caller sets $IMDS to the metadata base URL.
 * @internal Exported for its tests.
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
 * Shell lines that unpack the runner bundle into the client's home.
 * A client and a self-managed server run the same lines.
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
 * apt's options at boot.
 * Debian's apt-daily timers can hold the dpkg lock when the instance starts.
 * DPkg::Lock::Timeout makes apt wait for it instead of failing at once. See apt-get(8) and apt.conf(5).
 * A failed fetch is tried again Acquire::Retries times. See apt.conf(5), "The Acquire Group".
 */
const APT_BOOT_OPTIONS = '-o DPkg::Lock::Timeout=900 -o Acquire::Retries=5';

/**
 * Shell lines that install Debian packages without prompts and without recommended packages.
 * What the steps need is in each package's Depends.
 */
function aptInstallCommands(packages: readonly string[]): string[] {
  return [
    'export DEBIAN_FRONTEND=noninteractive',
    `apt-get -q ${APT_BOOT_OPTIONS} update`,
    `apt-get -q ${APT_BOOT_OPTIONS} install -y --no-install-recommends ${packages.join(' ')}`,
  ];
}

/**
 * Shell lines that install and start the SSM agent.
 * `dpkg -i` starts it where systemd runs.
 * The guide's next step, `systemctl enable --now`, covers an agent that is installed but not running.
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
 * Shell function not_ready_by_curl REASON. It uploads the not-ready marker with curl alone.
 * This covers a failure before apt has installed the AWS CLI.
 * The keys are the instance profile's. See EC2 User Guide, "Retrieve security credentials from instance metadata".
 * curl's --aws-sigv4 signs the request, with UNSIGNED-PAYLOAD as the payload hash.
 * See Amazon S3 API Reference, "Authenticating Requests: Using the Authorization Header".
 * Debian 12's curl 7.88 sends x-amz-content-sha256 as S3 requires.
 * The keys go to curl on its standard input, not its command line.
 * The endpoint follows the AWS SDKs' endpoint variables when set, path-style.
 * See AWS SDKs and Tools Reference Guide, "Service-specific endpoints".
 * Otherwise it is the bucket's regional URL, which the stack's S3 gateway endpoint serves.
 */
function curlNotReadyCommands(): string[] {
  const credentials = '$IMDS/meta-data/iam/security-credentials';
  // A field of the credentials' JSON. EC2 writes one pair per line, but it may be all on one line.
  const field = (name: string) =>
    String.raw`$(printf '%s\n' "$creds" | sed -n 's/.*"${name}"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' ` +
    '| head -n 1)';
  return [
    'not_ready_by_curl() {',
    '  local reason token role creds bucket key endpoint url body',
    // The reason as JSON string text. Tabs and newlines become spaces and other control characters go.
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
 * Shell lines that set the exit trap a client's boot reports a failure with.
 * The marker carries the log's tail as the reason.
 * client-ready.sh uploads it once the runner and the AWS CLI are there, and curl does before.
 * Needs $IMDS and curl.
 */
function notReadyTrapCommands(bucketS3Uri: string): string[] {
  const dir = CLIENT_INSTALL_DIR;
  return [
    ...curlNotReadyCommands(),
    'ready_marker_uri=""',
    // A failed step ends the script, so report it where checkClientsReady looks.
    'report_not_ready() {',
    '  rc=$?',
    '  if [ "$rc" -eq 0 ] || [ -z "$ready_marker_uri" ]; then return 0; fi',
    `  reason="user data failed (exit $rc): $(tail -n 12 ${USER_DATA_LOG} 2>/dev/null | tr '\\n' ' ' | ` +
      `cut -c1-1500 || true)"`,
    // client-ready.sh exits 4 when it could not upload. curl may still get through.
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
 * Shell lines of a client's boot after the shared prelude.
 * The exit trap comes first, so every later failure is reported.
 * client-ready.sh then proves that sysbench works. Needs $IMDS and curl.
 * @internal Exported for its tests.
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
    // client-ready.sh reports its own failure with the precise reason. The trap must not overwrite it.
    'trap - EXIT',
    `"${dir}/client-ready.sh" --marker-uri "$ready_marker_uri"`,
  ];
}

/** The start every instance's boot shares, client or server. */
function bootPreludeCommands(props: { readonly region: string; readonly expiresAtTag: string }): string[] {
  return [
    'set -euo pipefail',
    `exec > >(tee -a ${USER_DATA_LOG}) 2>&1`,
    `IMDS='${IMDS_BASE_URL}'`,
    ...deadMansSwitchCommands(props.expiresAtTag),
    `export AWS_DEFAULT_REGION='${props.region}'`,
  ];
}

/** Shell lines without a shebang, which CDK's UserData.forLinux adds. Values may be CloudFormation tokens. */
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
  /** s3://bucket/runner/ holding client/, ending in '/'. */
  readonly runnerS3Uri: string;
  readonly region: string;
  readonly expiresAtTag: string;
}

/**
 * User data of a self-managed server.
 * It installs what a client does, then MariaDB through client/server-install.sh.
 * A failed earlier step also writes server-install-failed with the log's tail.
 * So the setup command sent over SSM, which waits for a marker, fails at once with the reason.
 * Last, the CloudWatch agent starts. Its failure is only noted, so it never fails the server.
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

/** The user data text of a launch template, rendered. */
function renderLinuxUserData(commands: readonly string[]): string {
  const userData = ec2.UserData.forLinux();
  userData.addCommands(...commands);
  return userData.render();
}

/**
 * The user data of the clients' and the servers' launch templates, rendered as EC2 receives it.
 * The AWS rehearsal boots this text. test/cdk/stack.test.ts checks it against the synthesized templates.
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
