#!/usr/bin/env bash
# aurora-bench client readiness: proves that sysbench works on this client, then writes the ready
# marker. A client counts as ready for jobs only once this has passed
# (core/backends/aws/runner-command.ts).
#
#   client/client-ready.sh [--marker-uri s3://bucket/clients/<instance-id>/ready.json]
#   client/client-ready.sh --marker-uri URI --not-ready REASON
#
# Checks, in order:
#   1. sysbench is installed: ${AURORA_BENCH_HOME:-/opt/aurora-bench}/sysbench/bin first, then PATH
#      (EC2 clients: Debian's package, /usr/bin/sysbench);
#   2. `sysbench --version` says 1.0.x;
#   3. a Lua-driven run through the report hook (lua/aurora_bench_hook.lua running
#      lua/ready_check.lua: 2 threads, 2 s, no database) exits 0, prints the hook's JSON interval
#      lines with events, and sysbench's summary counts events; on aarch64 the run's banner must not
#      name the bundled LuaJIT 2.1.0-beta2, which crashes there (sysbench issue #384);
#   4. node runs the runner (runner.js, bundled for Debian 12's Node 18 by scripts/build-runner.ts):
#      `node runner.js --help` exits 0.
# Then writes ${AURORA_BENCH_HOME:-/opt/aurora-bench}/ready and, with --marker-uri, uploads the same
# JSON there: {"ready":true,"sysbench":"sysbench 1.0.20 (using system LuaJIT ...)","sysbenchVersion":
# "1.0.20","drivers":["mysql","pgsql"],"arch":"aarch64","hostname":...,"at":...}. "drivers" is the
# "Compiled-in database drivers:" list of `sysbench --help` (sysbench src/db_driver.c db_print_help
# prints it from the drivers the build linked: without libpq and pg_config at build time there is no
# pgsql), so a PostgreSQL cell stops at readiness with the reason instead of failing every step. A
# failed check removes the local marker and uploads {"ready":false,"reason":...} instead, so the
# workflow stops with the reason.
# --not-ready REASON only uploads that failure marker (the user data's exit trap, when the install
# itself failed).
# Exit status: 0 ready, 1 not ready (reason on stderr), 2 usage error, 4 marker upload failed.
set -euo pipefail
export LC_ALL=C

readonly PROG=client-ready.sh
SCRIPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_ROOT
# shellcheck source=lib/json.sh
. "$SCRIPT_ROOT/lib/json.sh"
readonly HOME_DIR="${AURORA_BENCH_HOME:-/opt/aurora-bench}"
readonly LOCAL_MARKER="$HOME_DIR/ready"
readonly HOOK="$SCRIPT_ROOT/lua/aurora_bench_hook.lua"
readonly CHECK_SCRIPT="$SCRIPT_ROOT/lua/ready_check.lua"
readonly USAGE="usage: $PROG [--marker-uri s3://bucket/key] [--not-ready REASON]"

marker_uri="" not_ready_reason="" have_not_ready=0
while [ $# -gt 0 ]; do
  case "$1" in
    --marker-uri)
      [ $# -ge 2 ] || { echo "$PROG: --marker-uri needs a value" >&2; echo "$USAGE" >&2; exit 2; }
      marker_uri=$2
      shift 2
      ;;
    --not-ready)
      [ $# -ge 2 ] || { echo "$PROG: --not-ready needs a reason" >&2; echo "$USAGE" >&2; exit 2; }
      not_ready_reason=$2
      have_not_ready=1
      shift 2
      ;;
    *) echo "$PROG: unexpected argument '$1'" >&2; echo "$USAGE" >&2; exit 2 ;;
  esac
done
if [ -n "$marker_uri" ] && [[ "$marker_uri" != s3://?*/?* ]]; then
  echo "$PROG: --marker-uri must be s3://bucket/key, got '$marker_uri'" >&2
  exit 2
fi
if [ $have_not_ready = 1 ] && [ -z "$marker_uri" ]; then
  echo "$PROG: --not-ready needs --marker-uri (where the failure is reported)" >&2
  exit 2
fi


work=$(mktemp -d "${TMPDIR:-/tmp}/aurora-bench-ready.XXXXXX")
trap 'rm -rf "$work"' EXIT

# upload_marker JSON_FILE: to --marker-uri (when given); exit 4 when it cannot.
upload_marker() {
  [ -n "$marker_uri" ] || return 0
  if ! aws s3 cp --only-show-errors --content-type application/json "$1" "$marker_uri" 2>"$work/upload.err"; then
    echo "$PROG: could not upload the ready marker to $marker_uri: $(tr '\n' ' ' <"$work/upload.err")" >&2
    exit 4
  fi
}

# not_ready REASON...: the words joined by single spaces, as echo joins them.
not_ready() {
  local reason="$*"
  rm -f "$LOCAL_MARKER"
  echo "$PROG: client not ready: $reason" >&2
  printf '{"ready":false,"reason":%s,"hostname":%s,"at":%s}\n' \
    "$(json_string "${reason:0:2000}")" "$(json_string "$(uname -n)")" \
    "$(json_string "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" >"$work/marker.json"
  upload_marker "$work/marker.json"
  exit 1
}

[ $have_not_ready = 0 ] || not_ready "$not_ready_reason"

# ------------------------------------------------------------------ 1. sysbench installed
if [ -x "$HOME_DIR/sysbench/bin/sysbench" ]; then export PATH="$HOME_DIR/sysbench/bin:$PATH"; fi
command -v sysbench >/dev/null 2>&1 ||
  not_ready "sysbench is not installed (not in $HOME_DIR/sysbench/bin nor on PATH)"
[ -f "$HOOK" ] || not_ready "report hook $HOOK is missing (it ships next to $PROG)"
[ -f "$CHECK_SCRIPT" ] || not_ready "readiness workload $CHECK_SCRIPT is missing (it ships next to $PROG)"

# ------------------------------------------------------------------ 2. version
version_line=$(sysbench --version 2>&1 | head -n 1) || not_ready "sysbench --version failed: $version_line"
version=$(awk '$1 == "sysbench" {print $2; exit}' <<<"$version_line")
[[ "$version" == 1.0.* ]] ||
  not_ready "sysbench --version says '$version_line'; aurora-bench needs sysbench 1.0.x" \
    "(its output format and options)"
arch=$(uname -m)

# The compiled-in drivers: the lines "  <name> - <description>" after "Compiled-in database drivers:".
# awk reads to the end (no early exit): with pipefail, sysbench killed by SIGPIPE would fail the check.
drivers=$(sysbench --help 2>&1 |
  awk '/^Compiled-in database drivers:/ {on = 1; next} on && /^  [a-z]+ - / {print $1; next} {on = 0}' |
  paste -sd, -)
[ -n "$drivers" ] ||
  not_ready "sysbench --help lists no compiled-in database driver (a build without the MySQL client library?)"
drivers_json=$(tr ',' '\n' <<<"$drivers" | while read -r d; do json_string "$d"; echo; done | paste -sd, -)
# ------------------------------------------------------------------ 3. a run through the hook
rc=0
(cd "$work" && AURORA_BENCH_SCRIPT="$CHECK_SCRIPT" sysbench "$HOOK" run --threads=2 --time=2 --report-interval=1) \
  >"$work/run.log" 2>&1 || rc=$?
tail_of_run() { tail -n 8 "$work/run.log" | tr '\n' ' ' | cut -c1-600; }
# A run starts with "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)" (--version leaves the
# LuaJIT out).
build_line=$(grep -m 1 '^sysbench .*LuaJIT' "$work/run.log" || true)
if [ "$arch" = aarch64 ] && [[ "$build_line" == *"bundled LuaJIT 2.1.0-beta2"* ]]; then
  # https://github.com/akopytov/sysbench/issues/384: segmentation faults on aarch64, not on every run.
  not_ready "sysbench was built with its bundled LuaJIT 2.1.0-beta2, which crashes on aarch64" \
    "(sysbench issue #384): install Debian's sysbench package, built on the system LuaJIT"
fi
[ $rc -eq 0 ] ||
  not_ready "the sysbench smoke run through the report hook failed (exit $rc): $(tail_of_run)"
intervals=$(grep -c '^{"aurora_bench":1,' "$work/run.log" || true)
[ "$intervals" -ge 1 ] ||
  not_ready "the report hook printed no interval line in the smoke run: $(tail_of_run)"
grep -q '^{"aurora_bench":1,.*"events":[1-9]' "$work/run.log" ||
  not_ready "the smoke run's intervals counted no events: $(tail_of_run)"
events=$(awk -F: '/total number of events:/ {gsub(/ /, "", $2); print $2; exit}' "$work/run.log")
[[ "$events" =~ ^[0-9]+$ ]] && [ "$events" -gt 0 ] ||
  not_ready "sysbench's summary counted no events in the smoke run: $(tail_of_run)"

# ------------------------------------------------------------------ 4. the runner starts
command -v node >/dev/null 2>&1 ||
  not_ready "node is not installed (Debian: apt-get install nodejs, as the EC2 clients' user data does);" \
    "the runner runs on it"
[ -f "$SCRIPT_ROOT/runner.js" ] ||
  not_ready "the runner $SCRIPT_ROOT/runner.js is missing (it ships next to $PROG)"
runner_help=$(node "$SCRIPT_ROOT/runner.js" --help 2>&1) ||
  not_ready "node ($(node --version 2>&1)) cannot run $SCRIPT_ROOT/runner.js:" \
    "$(tr '\n' ' ' <<<"$runner_help" | cut -c1-400)"

# ------------------------------------------------------------------ marker
{
  printf '{"ready":true,"sysbench":%s,"sysbenchVersion":%s,"drivers":[%s],' \
    "$(json_string "${build_line:-$version_line}")" "$(json_string "$version")" "$drivers_json"
  printf '"arch":%s,"hostname":%s,"at":%s}\n' \
    "$(json_string "$arch")" "$(json_string "$(uname -n)")" "$(json_string "$(date -u +%Y-%m-%dT%H:%M:%SZ)")"
} >"$work/marker.json"
mkdir -p "$HOME_DIR"
# The local marker first (renamed into place): once S3 says ready, a job's own check finds it.
cp "$work/marker.json" "$LOCAL_MARKER.tmp"
mv "$LOCAL_MARKER.tmp" "$LOCAL_MARKER"
upload_marker "$work/marker.json"
echo "$PROG: ready: ${build_line:-$version_line} on $arch, drivers $drivers;" \
  "smoke run: $intervals interval(s), $events events"
