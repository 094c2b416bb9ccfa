#!/usr/bin/env bash
# One command on a fresh machine: set everything up, then run experiments/quickstart.json locally
# (real MariaDB writer + reader with GTID replication, real sysbench) and print its results.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck source=scripts/node-path.sh
. scripts/node-path.sh
node dist/bin/aurora-bench.js run experiments/quickstart.json --local "$@"
