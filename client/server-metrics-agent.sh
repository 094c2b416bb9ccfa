#!/bin/bash
# Installs and starts the Amazon CloudWatch agent on a self-managed server instance (Amazon Linux
# 2023), at boot, from its user data (lib/client-user-data.ts serverUserDataCommands), after
# client/server-install.sh. It publishes what AWS/EC2 cannot see from outside the instance: the
# memory available to processes (metric mem_available, namespace CWAgent, dimension InstanceId), which
# core/backends/aws/metrics.ts reads into the reports' FreeableMemory.
#
#   server-metrics-agent.sh
#
# The configuration is the repo's client/cloudwatch-agent.json (next to this script). Sources
# (Amazon CloudWatch User Guide, github.com/awsdocs/amazon-cloudwatch-user-guide, doc_source/):
# - install-CloudWatch-Agent-commandline-fleet.md: the agent is the package amazon-cloudwatch-agent
#   ("sudo yum install amazon-cloudwatch-agent"; on AL2023 yum is dnf), and "-a fetch-config causes
#   the agent to load the latest version of the CloudWatch agent configuration file, and -s starts the
#   agent": /opt/aws/amazon-cloudwatch-agent/bin/amazon-cloudwatch-agent-ctl -a fetch-config -m ec2 -s
#   -c file:<path>. The instance role needs cloudwatch:PutMetricData (CloudWatchAgentServerPolicy;
#   lib/servers.ts grants only that action, on the CWAgent namespace).
# - CloudWatch-Agent-Configuration-File-Details.md: the fields of client/cloudwatch-agent.json
#   (metrics_collection_interval 60 = standard resolution; omit_hostname, so the only dimension is the
#   InstanceId of append_dimensions; namespace CWAgent is also the default).
# - metrics-collected-by-CloudWatch-agent.md: mem_available, "the amount of memory that is available
#   and can be given instantly to processes", unit Bytes.
# Whether AL2023's repository has the package is not assumed (the AWS page names Amazon Linux 2; the
# AL2023 request for it was github.com/amazonlinux/amazon-linux-2023 issue 335): dnf is asked.
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
  command -v dnf >/dev/null 2>&1 || not_started "no $ctl and no dnf to install amazon-cloudwatch-agent with"
  dnf install -y amazon-cloudwatch-agent >>"$log" 2>&1 ||
    not_started "dnf install amazon-cloudwatch-agent failed: $(tail -n 3 "$log" | tr '\n' ' ')"
  [ -x "$ctl" ] || not_started "amazon-cloudwatch-agent installed, but there is no $ctl"
fi
"$ctl" -a fetch-config -m ec2 -s -c "file:$config" >>"$log" 2>&1 ||
  not_started "amazon-cloudwatch-agent-ctl -a fetch-config failed: $(tail -n 3 "$log" | tr '\n' ' ')"
date -u +%Y-%m-%dT%H:%M:%SZ >"$home/metrics-agent-started"
echo "server-metrics-agent: the CloudWatch agent publishes CWAgent mem_available every 60 s"
