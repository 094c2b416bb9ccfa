#!/usr/bin/env bash
# One command on a fresh machine: set everything up, then run every test: the unit layer (pure
# logic, and the statistics proved by seeded simulation), the static checks (tsc's type check,
# asl-validator, prettier, eslint, knip, the line length of scripts and docs),
# then every other Jest project, one per folder under test/ (real MariaDB/PostgreSQL and sysbench,
# moto, CDK synth + cdk-nag + cfn-lint, the built CLI end to end, faults). Ends with 'jest: N
# passed, N failed'. Arguments, if any, go to every Jest run (e.g. -t 'a name').
#
# No test here asserts a measured performance level: those are benchmarks under bench/, whose
# figures are recorded, never a gate (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
# shellcheck source=scripts/node-path.sh
. scripts/node-path.sh
mkdir -p test-output
# One moto zygote for the whole run (scripts/moto.sh zygote): the server layers start a moto server per
# file and per rehearsal, and each one forked from it skips moto's imports (about 2 s of CPU) and
# starts in a fraction of a second. Started now, its imports overlap the unit layer; a server asked
# for before it listens is started the usual way.
moto_zygote_port=$(bash scripts/moto.sh free-port)
setsid bash scripts/moto.sh zygote "$moto_zygote_port" >test-output/moto-zygote.log 2>&1 </dev/null &
moto_zygote_pid=$!
trap 'kill "$moto_zygote_pid" 2>/dev/null || true' EXIT
export AURORA_BENCH_MOTO_ZYGOTE="127.0.0.1:$moto_zygote_port"
# One Trino server for the whole run (scripts/trino.sh), on which every rehearsal and Trino-backed test
# file answers Athena, each with a catalog of its own on its own moto. It starts in about 40 s, here
# beside the unit layer; a file that asks for it before it serves waits for it (test/aws/trino.ts).
trino_port=$(bash scripts/moto.sh free-port)
setsid bash scripts/trino.sh start "$trino_port" >test-output/trino-start.out 2>test-output/trino.log </dev/null &
stop_trino() {
  local out=test-output/trino-start.out
  bash scripts/trino.sh stop "$(sed -n 's/^TRINO_PID=//p' "$out")" "$(sed -n 's/^TRINO_DIR=//p' "$out")" \
    2>/dev/null || true
}
trap 'kill "$moto_zygote_pid" 2>/dev/null || true; stop_trino' EXIT
export AURORA_BENCH_TRINO="http://127.0.0.1:$trino_port"
set +e
# The unit layer first, alone on both cores, so its result comes first: its seeded simulations are
# CPU-bound tests under Jest's timeout, which a niced run could starve.
npx jest --ci --selectProjects unit --maxWorkers=100% --passWithNoTests --json \
  --outputFile=test-output/jest-unit.json "$@"
unit_code=$?
# Then the static checks (tsc's type check, asl-validator, prettier, eslint, knip, the line length of
# scripts and docs) beside the server layers, at the lowest CPU priority (nice 19): the server layers leave part of the
# two cores idle (waits, steps winding down, the last files alone), and a niced process gets only
# that, so the checks take no time of their own and barely slow the layers (at normal priority
# beside them they lengthened the layers by about their own time). setup's build emits dist/ without
# a type check (scripts/build-dist.ts), so tsc's (--noEmit) is one of these. Each check's output is
# shown, in order, once all are done; any failure fails the run at the end.
run_check() {
  local name=$1
  shift
  {
    echo "test: $name"
    nice -n 19 "$@"
    echo "$?" >"test-output/check-$name.code"
  } >"test-output/check-$name.log" 2>&1
}
run_check lint npm run --silent lint &
lint_pid=$!
{
  run_check typecheck npm run --silent typecheck
  run_check asl-validator npx asl-validator --json-path state-machines/benchmark.asl.json
  run_check format npm run --silent format:check
  run_check deadcode npm run --silent deadcode
  run_check line-length bash scripts/check-line-length.sh
} &
checks_pid=$!
# sysbench steps at a low CPU priority, and capped, while the server layers run. A step runs for a
# fixed time and takes every cycle it is given, and no test reads its throughput (none asserts a
# performance level), so on two shared cores its load only slowed the other files' work, and its
# server's: the server answers every query the step sends, at the server's priority.
# - Each local runner, each emulated client's command and each server starts a session of its own
#   (spawned detached), and with the kernel's autogroup scheduling (kernel.sched_autogroup_enabled)
#   a busy session gets as much CPU as the whole test run. So every `sysbench ... run` gets nice 10,
#   its threads and (in a session of its own) its session's autogroup.
# - Where this run may create a CPU cgroup (root, with cgroup v1's cpu controller, as on the CI
#   machine kind), the steps' threads also go into one of their own, all steps together capped at a
#   tenth of a core (CFS bandwidth control, cpu.cfs_quota_us per cpu.cfs_period_us: the kernel's
#   Documentation/scheduler/sched-bwc.rst) with a weight as low as nice 10's. A capped step sends
#   fewer queries, so its server works less too; steps still run every interval, connect and report.
#   Elsewhere the steps keep nice 10 alone.
# Prepares (`sysbench ... prepare`), servers and everything else keep their priority and CPU.
# The cgroup's tasks file (one thread id per write; threads started later inherit it), or nothing.
make_steps_cgroup() {
  local dir=/sys/fs/cgroup/cpu/aurora-bench-steps-$$
  [ -w /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] && mkdir "$dir" || return 0
  if echo 110 >"$dir/cpu.shares" && echo 100000 >"$dir/cpu.cfs_period_us" && echo 10000 >"$dir/cpu.cfs_quota_us"; then
    echo "$dir/tasks"
  else
    rmdir "$dir"
  fi
} 2>/dev/null
steps_cgroup=$(make_steps_cgroup || true)
deprioritize_steps() {
  local own pid group task
  own=$(cut -d' ' -f1 /proc/$$/autogroup 2>/dev/null || true)
  while sleep 0.5; do
    for pid in $(pgrep -x sysbench); do
      [ "$(cut -d' ' -f19 "/proc/$pid/stat" 2>/dev/null)" = 10 ] && continue
      tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline" | grep -qx run || continue
      # A client's readiness check (client/client-ready.sh) is a `run` too, but a light one: each event
      # sleeps 5 ms (client/lua/ready_check.lua). Capped with the steps, its reporter thread can get no
      # CPU before its 2 s end, and the check requires an interval line: it keeps its priority.
      tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -q '^AURORA_BENCH_SCRIPT=.*/ready_check\.lua$' && continue
      # shellcheck disable=SC2046 # one word per thread id
      renice -n 10 -p $(ls "/proc/$pid/task" 2>/dev/null) >/dev/null 2>&1 || true
      group=$(cut -d' ' -f1 "/proc/$pid/autogroup" 2>/dev/null || true)
      if [ -n "$group" ] && [ "$group" != "$own" ]; then echo 10 >"/proc/$pid/autogroup" 2>/dev/null || true; fi
      [ -n "$steps_cgroup" ] || continue
      for task in "/proc/$pid/task"/*; do echo "${task##*/}" >"$steps_cgroup" 2>/dev/null || true; done
    done
  done
}
deprioritize_steps &
deprioritize_pid=$!
# Every other layer (each folder under test/ is a Jest project: jest.config.js), three files at a
# time: most of their time is fixed-length sysbench steps and waits, which overlap, and every file
# keeps its servers, ports and directories to itself (a fourth at a time took no less: the layers
# keep both cores busy). A new layer is picked up here without an edit.
npx jest --ci --ignoreProjects unit --maxWorkers=3 --passWithNoTests --json \
  --outputFile=test-output/jest-servers.json "$@"
servers_code=$?
kill "$deprioritize_pid" "$moto_zygote_pid" 2>/dev/null || true
stop_trino
# Empty once every step has ended (a process leaves its cgroup when it exits).
[ -z "$steps_cgroup" ] || rmdir "$(dirname "$steps_cgroup")" 2>/dev/null || true
wait "$lint_pid" "$checks_pid"
cat test-output/check-{typecheck,asl-validator,format,lint,deadcode,line-length}.log
check_code() { cat "test-output/check-$1.code" 2>/dev/null || echo 1; }
typecheck_code=$(check_code typecheck)
asl_code=$(check_code asl-validator)
format_code=$(check_code format)
lint_code=$(check_code lint)
deadcode_code=$(check_code deadcode)
line_length_code=$(check_code line-length)
set -e
# A plain closing line CI can read whatever the runner.
node -e '
const runs = ["unit", "servers"].map((n) => require("./test-output/jest-" + n + ".json"));
const sum = (k) => runs.reduce((s, r) => s + r[k], 0);
const skipped = sum("numPendingTests") + sum("numTodoTests");
const tail = skipped ? `, ${skipped} skipped` : "";
console.log(`jest: ${sum("numPassedTests")} passed, ${sum("numFailedTests")} failed${tail}`);
if (sum("numTotalTests") === 0) { console.error("no test ran"); process.exit(1); }
'
if [ "$typecheck_code" -ne 0 ]; then echo "test: type check (tsc --noEmit) failed (see above)"; fi
if [ "$asl_code" -ne 0 ]; then echo "test: asl-validator failed (see above)"; fi
if [ "$lint_code" -ne 0 ]; then echo "test: lint failed (see above)"; fi
if [ "$format_code" -ne 0 ]; then echo "test: format check failed: run npm run format"; fi
if [ "$deadcode_code" -ne 0 ]; then
  echo "test: unused exports, files or dependencies (see above): remove them, or tag a test seam @internal"
fi
if [ "$line_length_code" -ne 0 ]; then echo "test: line-length failed (see above)"; fi
[ "$typecheck_code" -eq 0 ] && [ "$asl_code" -eq 0 ] && [ "$format_code" -eq 0 ] && [ "$lint_code" -eq 0 ] &&
  [ "$deadcode_code" -eq 0 ] && [ "$line_length_code" -eq 0 ] && [ "$unit_code" -eq 0 ] && [ "$servers_code" -eq 0 ]
