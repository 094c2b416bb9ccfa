#!/bin/bash
# Installs and starts the Amazon CloudWatch agent on a self-managed server instance (Debian 12), at
# boot, from its user data (lib/client-user-data.ts serverUserDataCommands), after
# client/server-install.sh. It publishes what AWS/EC2 cannot see from outside the instance: the
# memory available to processes (metric mem_available, namespace CWAgent, dimension InstanceId), which
# core/backends/aws/metrics.ts reads into the reports' FreeableMemory.
#
#   server-metrics-agent.sh
#
# The configuration is the repo's client/cloudwatch-agent.json (next to this script). Sources
# (Amazon CloudWatch User Guide, github.com/awsdocs/amazon-cloudwatch-user-guide, doc_source/):
# - download-CloudWatch-Agent-on-EC2-Instance-commandline-first.md: the Debian package is
#   https://amazoncloudwatch-agent-<region>.s3.<region>.amazonaws.com/debian/<amd64|arm64>/latest/
#   amazon-cloudwatch-agent.deb (one URL, cut at its last slash), installed with `dpkg -i -E`; it is
#   fetched here as that object through the S3 API (aws s3 cp --no-sign-request: a public bucket,
#   reached through the stack's S3 gateway endpoint), in $AWS_DEFAULT_REGION (the user data exports
#   it).
# - install-CloudWatch-Agent-commandline-fleet.md: "-a fetch-config causes
#   the agent to load the latest version of the CloudWatch agent configuration file, and -s starts the
#   agent": /opt/aws/amazon-cloudwatch-agent/bin/amazon-cloudwatch-agent-ctl -a fetch-config -m ec2 -s
#   -c file:<path>. The instance role needs cloudwatch:PutMetricData (CloudWatchAgentServerPolicy;
#   lib/servers.ts grants only that action, on the CWAgent namespace).
# - CloudWatch-Agent-Configuration-File-Details.md: the fields of client/cloudwatch-agent.json
#   (metrics_collection_interval 60 = standard resolution; omit_hostname, so the only dimension is the
#   InstanceId of append_dimensions; namespace CWAgent is also the default).
# - metrics-collected-by-CloudWatch-agent.md: mem_available, "the amount of memory that is available
#   and can be given instantly to processes", unit Bytes.
#
# The agent only adds a metric: nothing it does may fail the server. A failure is written, with its
# reason, to ${AURORA_BENCH_HOME:-/opt/aurora-bench}/metrics-agent-failed and the script exits 0; the
# cell's FreeableMemory is then simply absent from the reports (metrics.ts does not count it in a
# window's completeness). Started, it writes metrics-agent-started.
set -uo pipefail

home=${AURORA_BENCH_HOME:-/opt/aurora-bench}
config="$(cd "$(dirname "$0")" && pwd)/cloudwatch-agent.json"
# Where the package puts its control script; a test points AURORA_BENCH_CWAGENT_CTL at a stand-in.
ctl=${AURORA_BENCH_CWAGENT_CTL:-/opt/aws/amazon-cloudwatch-agent/bin/amazon-cloudwatch-agent-ctl}
log="$home/metrics-agent.log"
mkdir -p "$home"
rm -f "$home/metrics-agent-failed" "$home/metrics-agent-started"

not_started() {
  printf '%s\n' "$*" >"$home/metrics-agent-failed"
  echo "server-metrics-agent: not started (the server goes on without memory metrics): $*" >&2
  exit 0
}

[ -f "$config" ] || not_started "no $config in the bundle"
if [ ! -x "$ctl" ]; then
  command -v dpkg >/dev/null 2>&1 ||
    not_started "no $ctl and no dpkg to install amazon-cloudwatch-agent with (this script installs it on Debian)"
  [ -n "${AWS_DEFAULT_REGION:-}" ] ||
    not_started "no $ctl, and AWS_DEFAULT_REGION is not set: the package is downloaded from the region's bucket"
  deb="$home/amazon-cloudwatch-agent.deb"
  package="s3://amazoncloudwatch-agent-$AWS_DEFAULT_REGION/debian/$(dpkg --print-architecture)"
  package+="/latest/amazon-cloudwatch-agent.deb"
  aws s3 cp --only-show-errors --no-sign-request "$package" "$deb" >>"$log" 2>&1 ||
    not_started "could not download $package: $(tail -n 2 "$log" | tr '\n' ' ')"
  dpkg -i -E "$deb" >>"$log" 2>&1 ||
    not_started "dpkg -i amazon-cloudwatch-agent.deb failed: $(tail -n 3 "$log" | tr '\n' ' ')"
  rm -f "$deb"
  [ -x "$ctl" ] || not_started "amazon-cloudwatch-agent installed, but there is no $ctl"
fi
"$ctl" -a fetch-config -m ec2 -s -c "file:$config" >>"$log" 2>&1 ||
  not_started "amazon-cloudwatch-agent-ctl -a fetch-config failed: $(tail -n 3 "$log" | tr '\n' ' ')"
date -u +%Y-%m-%dT%H:%M:%SZ >"$home/metrics-agent-started"
echo "server-metrics-agent: the CloudWatch agent publishes CWAgent mem_available every 60 s"
