#!/usr/bin/env bash
# aurora-bench client runner: runs one sysbench phase and leaves its output where it is told.
# Runs on Debian (locally, started by the local backend) and on Debian 12 EC2 clients
# (through SSM Run Command). The CLI is a shared contract (docs/architecture.md, "The runner's command line"):
#
#   client/runner.sh --phase prepare|run --workload NAME --out LOCATION \
#       --host H --port P --user U (--password-env VAR | --password-secret SECRET_ARN) \
#       [--driver mysql|pgsql] [--script-dir DIR | --script-uri s3://bucket/key-prefix/] [--extra-port P2] \
#       [--prepare-out LOCATION2 [--prepare-host H2 --prepare-port P2'] [--prepare-option OPT]...] [--await-prepare LOCATION3]... \
#       [--start-after-prepare S] -- <sysbench options...>
#
# --prepare-out (run only) the step's data is prepared afresh by this same job, one job per step
#           instead of a prepare job and a run job (data.reuse "step"): first `sysbench cleanup`
#           and `sysbench prepare` on H2:P2' (default H:P) with the --prepare-option options (each one
#           sysbench option, --name=value), their files (output.log, client_cpu.jsonl,
#           server_variables.jsonl, result.json with phase "prepare") written to LOCATION2 exactly
#           as a prepare job writes them; then, only when that prepare exited 0, the run into
#           LOCATION. A failed prepare leaves a run that did not run: its result.json has the
#           prepare's exit code (1 if it was 0 but stopped) and its output.log says why.
# --await-prepare (run only; repeatable) another client's job prepares (--prepare-out LOCATION3):
#           this job waits until every awaited LOCATION3/result.json exists (a look a second at
#           those not seen yet), then runs only if each of those prepares exited 0 (and its own,
#           with --prepare-out), else records that it did not run, as above, as soon as one has
#           failed. It waits until stopped (SIGTERM: the workflow stops a step's jobs at its
#           deadline). With --prepare-out too, it awaits the others after its own prepare: a duet's
#           members each prepare their own data and all start their runs together.
# --start-after-prepare (with either) the run starts S seconds after the last of the prepares ended
#           (their result.json endedAt), the same moment on every client of the step however late
#           each one learns of it (clients' clocks are synchronized; one that learns later starts at once).
#
# --extra-port  a second port on the same host: sysbench then connects round-robin to P and P2
#           (--mysql-port=P,P2; sysbench 1.0.20 src/drivers/mysql/drv_mysql.c takes the next port of
#           the list for each connection). Used by the local write-forwarding emulation
#           (client/workloads/wf_emulation.lua), whose threads hold a reader and a writer connection.
#
# DRIVER    sysbench's database driver (default mysql): mysql for MySQL/MariaDB/Aurora MySQL, pgsql
#           for PostgreSQL/Aurora PostgreSQL. The runner gives it the connection options (--mysql-* or
#           --pgsql-*); the same OLTP scripts run on both (sysbench 1.0.20 src/lua/oltp_common.lua).
#
# NAME      a stock test (oltp_read_only, ...) or a custom script file name (fullscan_1kb.lua),
#           found in --script-dir or downloaded from --script-uri + NAME.
# LOCATION  a local directory, or s3://bucket/prefix/ (written to a temp dir, then uploaded).
# Writes (core/sysbench/types.ts): output.log (sysbench stdout+stderr, appended as printed),
# client_cpu.jsonl (one sample a second while sysbench runs), after a successful prepare
# server_variables.jsonl (the server's global variables, client/lua/server_config.lua), result.json (last).
# Every workload runs through client/lua/aurora_bench_hook.lua, which prints one JSON line per
# report interval. prepare = `sysbench cleanup` (failure ignored) then `sysbench prepare`.
# Exit status: 0 when sysbench ran and result.json was written (sysbench's own exit code is in
# result.json), 2 for usage errors, 3 for setup errors (sysbench missing, secret or script not
# fetched), 4 when the S3 upload failed. SIGTERM/SIGINT stop sysbench; result.json is still
# written (and uploaded) before the runner exits.
# The password never appears in output, in result.json or on any command line (see "Connection
# options" below for how it reaches sysbench).
set -euo pipefail
export LC_ALL=C # EPOCHREALTIME and printf must use '.' as the decimal point

readonly PROG=runner.sh
SCRIPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_ROOT
# shellcheck source=lib/json.sh
. "$SCRIPT_ROOT/lib/json.sh"
readonly HOOK="$SCRIPT_ROOT/lua/aurora_bench_hook.lua"
readonly SERVER_CONFIG_LUA="$SCRIPT_ROOT/lua/server_config.lua"
readonly USAGE="usage: $PROG --phase prepare|run --workload NAME --out LOCATION --host H --port P --user U (--password-env VAR | --password-secret SECRET_ARN) [--driver mysql|pgsql] [--script-dir DIR | --script-uri s3://bucket/prefix/] [--extra-port P2] [--prepare-out LOCATION2 [--prepare-host H2 --prepare-port P2] [--prepare-option OPT]...] [--await-prepare LOCATION3]... [--start-after-prepare S] -- <sysbench options...>"

die_usage() {
  echo "$PROG: $*" >&2
  echo "$USAGE" >&2
  exit 2
}

# ------------------------------------------------------------------ arguments
phase="" workload="" out="" host="" port="" user="" extra_port="" driver=mysql
password_env="" password_secret="" script_dir="" script_uri=""
prepare_out="" prepare_host="" prepare_port="" await_prepares=() prepare_opts=() start_after_prepare=
have_password_env=0 have_password_secret=0 have_script_dir=0 have_script_uri=0

while [ $# -gt 0 ]; do
  arg=$1
  case "$arg" in
    --) shift; break ;;
    --*=*) flag=${arg%%=*}; value=${arg#*=}; shift ;;
    --*)
      flag=$arg
      [ $# -ge 2 ] || die_usage "$flag needs a value"
      value=$2
      shift 2
      ;;
    *) die_usage "unexpected argument '$arg' (sysbench options go after --)" ;;
  esac
  case "$flag" in
    --phase) phase=$value ;;
    --workload) workload=$value ;;
    --out) out=$value ;;
    --host) host=$value ;;
    --port) port=$value ;;
    --extra-port) extra_port=$value ;;
    --user) user=$value ;;
    --driver) driver=$value ;;
    --password-env) password_env=$value; have_password_env=1 ;;
    --password-secret) password_secret=$value; have_password_secret=1 ;;
    --script-dir) script_dir=$value; have_script_dir=1 ;;
    --script-uri) script_uri=$value; have_script_uri=1 ;;
    --prepare-out) prepare_out=$value ;;
    --prepare-host) prepare_host=$value ;;
    --prepare-port) prepare_port=$value ;;
    --prepare-option) prepare_opts+=("$value") ;;
    --await-prepare)
      [ -n "$value" ] || die_usage "--await-prepare needs a location"
      await_prepares+=("$value")
      ;;
    --start-after-prepare) start_after_prepare=$value ;;
    *) die_usage "unknown flag $flag" ;;
  esac
done
sysbench_opts=("$@")

case "$phase" in
  prepare | run) ;;
  "") die_usage "--phase is required (prepare or run)" ;;
  *) die_usage "--phase must be prepare or run, got '$phase'" ;;
esac
case "$driver" in
  mysql | pgsql) ;;
  *) die_usage "--driver must be mysql or pgsql, got '$driver'" ;;
esac
[ -n "$workload" ] || die_usage "--workload is required"
custom=0
if [[ "$workload" == *.lua ]]; then
  [[ "$workload" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]*\.lua$ ]] || die_usage "--workload '$workload' must be a plain .lua file name (no directories)"
  custom=1
elif ! [[ "$workload" =~ ^[a-z][a-z0-9_]*$ ]]; then
  die_usage "--workload '$workload' is neither a stock test name (oltp_read_only) nor a .lua file name"
fi
[ -n "$out" ] || die_usage "--out is required (a directory or s3://bucket/prefix/)"
[ -n "$host" ] || die_usage "--host is required"
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || die_usage "--port must be a TCP port number, got '$port'"
if [ -n "$extra_port" ]; then
  [[ "$extra_port" =~ ^[0-9]+$ ]] && [ "$extra_port" -ge 1 ] && [ "$extra_port" -le 65535 ] || die_usage "--extra-port must be a TCP port number, got '$extra_port'"
fi
[ -n "$user" ] || die_usage "--user is required"
if [ $((have_password_env + have_password_secret)) -ne 1 ]; then
  die_usage "exactly one of --password-env or --password-secret is required"
fi
if [ $have_password_env = 1 ]; then
  [[ "$password_env" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die_usage "--password-env must name an environment variable, got '$password_env'"
  [ -n "${!password_env+set}" ] || die_usage "--password-env: environment variable $password_env is not set"
fi
if [ $have_password_secret = 1 ] && [ -z "$password_secret" ]; then die_usage "--password-secret needs a secret ARN or name"; fi
if [ $((have_script_dir + have_script_uri)) -gt 1 ]; then die_usage "give only one of --script-dir or --script-uri"; fi
if [ $custom = 1 ] && [ $((have_script_dir + have_script_uri)) -ne 1 ]; then
  die_usage "--workload $workload is a custom script: --script-dir or --script-uri is required"
fi
if [ $have_script_uri = 1 ] && [[ "$script_uri" != s3://?* ]]; then die_usage "--script-uri must start with s3://, got '$script_uri'"; fi
if [ $have_script_dir = 1 ] && [ ! -d "$script_dir" ]; then die_usage "--script-dir $script_dir is not a directory"; fi
if [ -n "$prepare_out" ] || [ ${#await_prepares[@]} -gt 0 ]; then
  [ "$phase" = run ] || die_usage "--prepare-out and --await-prepare go with --phase run"
fi
for location in "${await_prepares[@]}"; do
  [ "$location" != "$prepare_out" ] || die_usage "--await-prepare $location is this job's own --prepare-out"
done
if [ -n "$start_after_prepare" ]; then
  [[ "$start_after_prepare" =~ ^[0-9]+$ ]] || die_usage "--start-after-prepare must be whole seconds, got '$start_after_prepare'"
  [ -n "$prepare_out" ] || [ ${#await_prepares[@]} -gt 0 ] || die_usage "--start-after-prepare needs --prepare-out or --await-prepare"
fi
if [ -z "$prepare_out" ] && { [ -n "$prepare_host$prepare_port" ] || [ ${#prepare_opts[@]} -gt 0 ]; }; then
  die_usage "--prepare-host, --prepare-port and --prepare-option need --prepare-out"
fi
prepare_host=${prepare_host:-$host}
prepare_port=${prepare_port:-$port}
[[ "$prepare_port" =~ ^[0-9]+$ ]] && [ "$prepare_port" -ge 1 ] && [ "$prepare_port" -le 65535 ] || die_usage "--prepare-port must be a TCP port number, got '$prepare_port'"
for opt in "${sysbench_opts[@]}" "${prepare_opts[@]}"; do
  [[ "$opt" == --?* ]] || die_usage "sysbench option '$opt' after -- must look like --name=value"
  name=${opt%%=*}
  name=${name//_/-}
  case "$name" in
    --mysql-host | --mysql-port | --mysql-user | --mysql-password | --mysql-socket | --config-file | --db-driver | --pgsql-host | --pgsql-port | --pgsql-user | --pgsql-password)
      die_usage "sysbench option ${opt%%=*} is set by the runner from its own flags; do not pass it after --" ;;
    --mysql-debug)
      # sysbench 1.0.20 then logs mysql_real_connect()'s arguments, the password among them (drv_mysql.c).
      die_usage "sysbench option ${opt%%=*} would print the database password into the output; it is not allowed" ;;
  esac
done

# ------------------------------------------------------------------ workspace and output
for location in "$out" "$prepare_out" "${await_prepares[@]}"; do
  if [[ "$location" == s3://* ]] && [[ "$location" != s3://?* ]]; then die_usage "$location: s3:// needs a bucket"; fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/aurora-bench-runner.XXXXXX")
chmod 700 "$work"
sb_pid="" sampler_pid="" watchdog_pid=""
cleanup_workspace() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
  [ -n "$watchdog_pid" ] && kill "$watchdog_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup_workspace EXIT

# output_dir_of LOCATION NAME: the local directory LOCATION's files are written in (LOCATION itself,
# or for s3:// a work directory uploaded to it), its files emptied: a reader takes result.json as
# "the job has ended", so an old one goes first.
output_dir_of() {
  local dir
  if [[ "$1" == s3://* ]]; then
    dir="$work/$2"
    mkdir -p "$dir"
  else
    mkdir -p "$1" 2>/dev/null || return 1
    dir=$(cd "$1" && pwd)
  fi
  rm -f "$dir/result.json"
  : >"$dir/output.log"
  : >"$dir/client_cpu.jsonl"
  printf '%s' "$dir"
}
run_dir=$(output_dir_of "$out" out) || die_usage "--out: cannot create directory $out"
prep_dir=""
if [ -n "$prepare_out" ]; then prep_dir=$(output_dir_of "$prepare_out" prepare-out) || die_usage "--prepare-out: cannot create directory $prepare_out"; fi

# use_output DIR LOCATION: where the sysbench commands that follow write (output.log, client_cpu.jsonl, result.json).
use_output() {
  out_dir=$1 out_location=$2
  log_file="$out_dir/output.log"
  cpu_file="$out_dir/client_cpu.jsonl"
  result_file="$out_dir/result.json"
}
use_output "$run_dir" "$out"

# upload_dir DIR LOCATION: for an s3:// LOCATION, uploads output.log and client_cpu.jsonl, then
# result.json (if written) on its own, so a reader polling the prefix never sees result.json
# before the files it describes.
upload_dir() {
  [[ "$2" == s3://* ]] || return 0
  local dest="${2%/}/"
  aws s3 cp --recursive --only-show-errors --exclude result.json --exclude .result.json.tmp "$1/" "$dest" || return 1
  if [ -f "$1/result.json" ]; then aws s3 cp --only-show-errors "$1/result.json" "${dest}result.json" || return 1; fi
}
upload_outputs() { upload_dir "$out_dir" "$out_location"; }

sysbench_version="" host_name=""
iso_now() { date -u +%Y-%m-%dT%H:%M:%S.%3NZ; }

# write_result DIR PHASE EXIT_CODE STARTED_AT ENDED_AT COMMAND: result.json (core/sysbench/types.ts RunnerResult).
write_result() {
  {
    printf '{\n'
    printf '  "phase": %s,\n' "$(json_string "$2")"
    printf '  "exitCode": %d,\n' "$3"
    printf '  "startedAt": %s,\n' "$(json_string "$4")"
    printf '  "endedAt": %s,\n' "$(json_string "$5")"
    printf '  "sysbenchVersion": %s,\n' "$(json_string "$sysbench_version")"
    printf '  "hostname": %s,\n' "$(json_string "$host_name")"
    printf '  "command": %s\n' "$(json_string "$6")"
    printf '}\n'
  } >"$1/.result.json.tmp"
  # Renamed into place in the same directory: a reader never sees a half-written result.json.
  mv "$1/.result.json.tmp" "$1/result.json"
}

die_setup() {
  echo "$PROG: $*" >&2
  # Also into output.log, so the reason reaches the results lake even when nobody reads stderr.
  echo "aurora-bench runner: $*" >>"$run_dir/output.log" || true
  if [ -n "$prep_dir" ]; then
    # The prepare this job owes ends too (exit code 3), with the reason: the workflow reports it as
    # the prepare's failure, and the clients awaiting it stop waiting.
    echo "aurora-bench runner: $*" >>"$prep_dir/output.log" || true
    write_result "$prep_dir" prepare 3 "$(iso_now)" "$(iso_now)" "" || true
    upload_dir "$prep_dir" "$prepare_out" || echo "$PROG: could not upload output to $prepare_out" >&2
  fi
  upload_dir "$run_dir" "$out" || echo "$PROG: could not upload output to $out" >&2
  exit 3
}

# ------------------------------------------------------------------ signals
stop_signal="" signal_seen=0
on_signal() {
  stop_signal=$1
  signal_seen=1
  if [ -n "$sb_pid" ] && kill -0 "$sb_pid" 2>/dev/null; then
    kill -TERM "$sb_pid" 2>/dev/null || true
    # sysbench stuck in a network call may outlive TERM: make sure it goes.
    if [ -z "$watchdog_pid" ]; then
      (sleep 10; kill -KILL "$sb_pid" 2>/dev/null) </dev/null >/dev/null 2>&1 &
      watchdog_pid=$!
    fi
  fi
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT

# ------------------------------------------------------------------ setup
# A sysbench under the client home comes first; EC2 clients have Debian's in /usr/bin (lib/client-user-data.ts).
if [ -x "${AURORA_BENCH_HOME:-/opt/aurora-bench}/sysbench/bin/sysbench" ]; then export PATH="${AURORA_BENCH_HOME:-/opt/aurora-bench}/sysbench/bin:$PATH"; fi
command -v sysbench >/dev/null 2>&1 || die_setup "sysbench is not installed (Debian: apt-get install sysbench, as the EC2 clients' user data does)"
[ -f "$HOOK" ] || die_setup "report hook $HOOK is missing (it ships next to runner.sh)"
if [[ "$out$prepare_out${await_prepares[*]}" == *s3://* ]] || [ $have_password_secret = 1 ] || [ $have_script_uri = 1 ]; then
  command -v aws >/dev/null 2>&1 || die_setup "the AWS CLI (aws) is required for s3:// locations and Secrets Manager"
fi
# The CLI needs a region; a secret ARN carries one (arn:aws:secretsmanager:REGION:...).
if [ -z "${AWS_REGION:-}${AWS_DEFAULT_REGION:-}" ] && [[ "$password_secret" == arn:*:secretsmanager:*:* ]]; then
  region=$(cut -d: -f4 <<<"$password_secret")
  [ -n "$region" ] && export AWS_DEFAULT_REGION="$region"
fi

if [ $have_password_env = 1 ]; then
  password=${!password_env}
  # Read once: nothing the runner starts (the AWS CLI, sysbench) inherits it from here on.
  unset "$password_env"
else
  secret_json=$(aws secretsmanager get-secret-value --secret-id "$password_secret" --query SecretString --output text 2>"$work/secret.err") ||
    die_setup "could not read secret $password_secret: $(tr '\n' ' ' <"$work/secret.err")"
  # The RDS-managed secret is JSON {"username": ..., "password": ...}. Printed without a newline and
  # followed by a sentinel, so $(...) cannot strip a trailing newline or space off the password.
  if command -v jq >/dev/null 2>&1; then
    password=$(jq -je '.password | strings' <<<"$secret_json" 2>/dev/null && printf x) || die_setup "secret $password_secret has no \"password\" string"
  else
    password=$(python3 -c 'import json,sys; p=json.load(sys.stdin)["password"]; assert isinstance(p, str); sys.stdout.write(p)' <<<"$secret_json" 2>/dev/null && printf x) ||
      die_setup "secret $password_secret has no \"password\" string"
  fi
  password=${password%x}
  unset secret_json
fi
# sysbench gets MYSQL_PWD (PGPASSWORD) only when the password travels that way (see "Connection
# options"), never one this runner happened to inherit.
unset MYSQL_PWD PGPASSWORD

if [ $custom = 1 ]; then
  if [ $have_script_dir = 1 ]; then
    script_path="$(cd "$script_dir" && pwd)/$workload"
    [ -f "$script_path" ] || die_setup "custom workload $workload not found in --script-dir $script_dir"
  else
    script_path="$work/$workload"
    aws s3 cp --only-show-errors "${script_uri%/}/$workload" "$script_path" 2>"$work/script.err" ||
      die_setup "could not download ${script_uri%/}/$workload: $(tr '\n' ' ' <"$work/script.err")"
  fi
  workload_env=(AURORA_BENCH_SCRIPT="$script_path")
else
  workload_env=(AURORA_BENCH_TEST="$workload")
fi

sysbench_version=$(sysbench --version 2>/dev/null | awk '{print $2; exit}')
host_name=$(uname -n)

# Connection options; the password never goes on a command line (the process list shows those to
# every user). sysbench 1.0.20 passes --mysql-password to mysql_real_connect() and reads no MySQL
# option file itself (src/drivers/mysql/drv_mysql.c: mysql_drv_init takes args.password from
# sb_get_value_string("mysql-password"); mysql_drv_real_connect calls mysql_options only for SSL
# and compression, never MYSQL_READ_DEFAULT_FILE/GROUP). Two ways in, in this order:
# 1. sysbench's own config file (--config-file, a private 0600 file in the runner's 0700 work dir).
#    Its parser (src/sb_options.c, read_config) takes `name=value`, splits values at ',' and
#    whitespace, and treats '#' as the start of a comment, but reads a value that starts with ' or "
#    verbatim up to the same quote character, with no escapes: so the password is written between
#    the quote character it does not contain. fgets() reads lines of at most MAXSTRLEN-1 = 255
#    bytes, newline included, so the password must fit in 255 - len('mysql-password=""\n').
#    Every password RDS accepts fits: 8 to 41 printable ASCII characters except '/', '"' and '@'
#    (CreateDBCluster MasterUserPassword, botocore rds service-2.json), so '"' always works.
# 2. Otherwise (both quote characters, a newline, or too long): MYSQL_PWD in sysbench's own
#    environment. With no --mysql-password sysbench's option has no value (set_option ignores the
#    empty default) and passes NULL, and MariaDB Connector/C then reads MYSQL_PWD
#    (libmariadb/mariadb_lib.c, mthd_my_real_connect: "if (!passwd) passwd=getenv("MYSQL_PWD")").
#    /proc/<pid>/environ is readable by the process's own user and root only, like the config file.
# Never: --mysql-debug, which makes drv_mysql.c log the mysql_real_connect() arguments, password
# included (refused with the other connection options above).
# The pgsql driver is the same in every respect that matters here (src/drivers/pgsql/drv_pgsql.c,
# 1.0.20): --pgsql-host/-port/-user/-password/-db options, the password passed to PQsetdbLogin(),
# which leaves an empty one unset so that libpq reads PGPASSWORD (libpq's documented fallback for a
# connection without a password); its config-file line is pgsql-password="...".
opt_prefix=mysql password_env_var=MYSQL_PWD
if [ "$driver" = pgsql ]; then opt_prefix=pgsql password_env_var=PGPASSWORD; fi
password_opts=()
password_via_env=0
# 255 - len('mysql-password=""' + newline); ${#password} counts bytes (LC_ALL=C). pgsql- is as long.
readonly MAX_CONFIG_PASSWORD_BYTES=237
password_bytes=${#password}
if [ -z "$password" ]; then
  : # no password: nothing to pass
elif [[ "$password" != *$'\n'* ]] && [ "$password_bytes" -le "$MAX_CONFIG_PASSWORD_BYTES" ] && { [[ "$password" != *'"'* ]] || [[ "$password" != *"'"* ]]; }; then
  quote='"'
  [[ "$password" != *'"'* ]] || quote="'"
  (umask 077 && printf '%s-password=%s%s%s\n' "$opt_prefix" "$quote" "$password" "$quote" >"$work/sysbench.cfg")
  password_opts=(--config-file="$work/sysbench.cfg")
else
  password_via_env=1
fi
# connect_to HOST PORTS: the connection options of the sysbench commands that follow.
connect_to() {
  display_conn=(--"$opt_prefix"-host="$1" --"$opt_prefix"-port="$2" --"$opt_prefix"-user="$user")
  if [ "$driver" = pgsql ]; then display_conn=(--db-driver=pgsql "${display_conn[@]}"); fi
  conn_opts=("${display_conn[@]}" "${password_opts[@]}")
}
run_ports=$port${extra_port:+,$extra_port}
connect_to "$host" "$run_ports"
# The sysbench options of the commands that follow (the step's, or its prepare's with --prepare-out).
phase_opts=("${sysbench_opts[@]}")

# ------------------------------------------------------------------ CPU sampler
# One JSON line a second: sysbench's CPU (utime+stime of /proc/PID/stat) as % of one core, and the
# host's busy share of all cores from the aggregate line of /proc/stat.
sample_cpu() {
  local pid=$1 clk cores stat rest fields
  local prev_ticks prev_busy prev_total prev_us ticks busy total now_us
  local user nice system idle iowait irq softirq steal
  clk=$(getconf CLK_TCK)
  cores=$(grep -c '^cpu[0-9]' /proc/stat)
  read_sample() {
    stat=$(<"/proc/$pid/stat") || return 1
    rest=${stat##*) }
    read -r -a fields <<<"$rest"
    ticks=$((fields[11] + fields[12]))
    read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
    busy=$((user + nice + system + irq + softirq + steal))
    total=$((busy + idle + iowait))
    now_us=${EPOCHREALTIME/./}
  }
  read_sample 2>/dev/null || return 0
  prev_ticks=$ticks prev_busy=$busy prev_total=$total prev_us=$now_us
  while sleep 1; do
    read_sample 2>/dev/null || return 0
    local d_us=$((now_us - prev_us)) d_total=$((total - prev_total))
    [ "$d_us" -gt 0 ] || continue
    # Hundredths of a percent, in integers.
    local proc_c=$(((ticks - prev_ticks) * 10000 * 1000000 / (clk * d_us)))
    local host_c=0
    [ "$d_total" -gt 0 ] && host_c=$(((busy - prev_busy) * 10000 / d_total))
    printf '{"t":%s.%s,"sysbenchCpuPct":%d.%02d,"hostCpuPct":%d.%02d,"cores":%d}\n' \
      "${now_us:0:${#now_us}-6}" "${now_us:${#now_us}-6:3}" \
      $((proc_c / 100)) $((proc_c % 100)) $((host_c / 100)) $((host_c % 100)) "$cores" >>"$cpu_file"
    prev_ticks=$ticks prev_busy=$busy prev_total=$total prev_us=$now_us
  done
}

# ------------------------------------------------------------------ running sysbench
quote_words() {
  local out="" w
  for w in "$@"; do out+="${out:+ }$(printf '%q' "$w")"; done
  printf '%s' "$out"
}

# run_sysbench COMMAND: runs sysbench through the hook, appends its output to output.log, samples
# its CPU, and sets sb_rc to its exit code (128+N when killed by signal N).
run_sysbench() {
  local cmd=$1 rc prev=""
  (
    cd "$work"
    # export is a shell builtin: the password reaches sysbench's environment without any argv.
    if [ $password_via_env = 1 ]; then export "$password_env_var=$password"; fi
    exec env "${workload_env[@]}" sysbench "$HOOK" "$cmd" "${conn_opts[@]}" "${phase_opts[@]}"
  ) >>"$log_file" 2>&1 &
  sb_pid=$!
  sample_cpu "$sb_pid" </dev/null &
  sampler_pid=$!
  while :; do
    signal_seen=0
    rc=0
    wait "$sb_pid" || rc=$?
    # A trapped signal interrupts `wait` (status 128+N) while sysbench may still be running or
    # unreaped: wait again for its own status.
    if [ $signal_seen = 1 ]; then prev=$rc; continue; fi
    if [ $rc = 127 ] && [ -n "$prev" ]; then rc=$prev; fi
    break
  done
  kill "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
  sampler_pid=""
  if [ -n "$watchdog_pid" ]; then kill "$watchdog_pid" 2>/dev/null || true; wait "$watchdog_pid" 2>/dev/null || true; watchdog_pid=""; fi
  sb_pid=""
  sb_rc=$rc
}

# dump_server_variables: after a successful prepare (MySQL: SHOW GLOBAL VARIABLES; PostgreSQL: pg_settings), the server's settings as it runs
# (client/lua/server_config.lua) into server_variables.jsonl; its own errors stay in that file (the
# workflow then reports the configuration as unread). Not part of sysbench's exit code.
dump_server_variables() {
  [ -f "$SERVER_CONFIG_LUA" ] || { echo "aurora-bench runner: $SERVER_CONFIG_LUA is missing" >"$out_dir/server_variables.jsonl"; return 0; }
  (
    cd "$work"
    if [ $password_via_env = 1 ]; then export "$password_env_var=$password"; fi
    exec sysbench "$SERVER_CONFIG_LUA" dump "${conn_opts[@]}"
  ) >"$out_dir/server_variables.jsonl" 2>&1 || true
}

display_command() {
  printf '%s sysbench %s %s %s --%s-password=***** %s' "$(quote_words "${workload_env[@]}")" "$(quote_words "$HOOK")" "$1" \
    "$(quote_words "${display_conn[@]}")" "$opt_prefix" "$(quote_words "${phase_opts[@]}")"
}

sb_rc=0
signal_rc() { case "$stop_signal" in TERM) echo 143 ;; INT) echo 130 ;; *) echo 0 ;; esac; }

# prepare_data: `sysbench cleanup` (failure ignored: the tables may not exist yet) then `sysbench
# prepare`, into the current output; sets sb_rc and command_text.
prepare_data() {
  command_text="$(display_command cleanup) && $(display_command prepare)"
  if [ -z "$stop_signal" ]; then
    run_sysbench cleanup
    local cleanup_rc=$sb_rc
    if [ -z "$stop_signal" ]; then
      run_sysbench prepare
      if [ "$sb_rc" = 0 ] && [ -z "$stop_signal" ]; then dump_server_variables; fi
    else
      sb_rc=$cleanup_rc
    fi
  else
    sb_rc=$(signal_rc)
  fi
}

# Why the run of this job is not run (a prepare that failed or never ended), and the exit code its result.json gets.
not_run="" not_run_rc=0
# When the prepares this job ran or awaited ended (their result.json endedAt).
prepare_ends=()

# wait_for_run_start: with --start-after-prepare S, sleeps until S seconds after the last of
# prepare_ends (no wait once that is past, or when a time does not read); a signal ends the wait.
wait_for_run_start() {
  [ -n "$start_after_prepare" ] && [ ${#prepare_ends[@]} -gt 0 ] || return 0
  local ended ns ended_ns=0 now_ns left_ms
  for ended in "${prepare_ends[@]}"; do
    ns=$(date -u -d "$ended" +%s%N 2>/dev/null) && [ -n "$ended" ] || return 0
    [ "$ns" -le "$ended_ns" ] || ended_ns=$ns
  done
  now_ns=$(date -u +%s%N)
  # Rounded up: the run never starts before the moment (endedAt has whole milliseconds).
  left_ms=$(((ended_ns + start_after_prepare * 1000000000 - now_ns + 999999) / 1000000))
  [ "$left_ms" -gt 0 ] || return 0
  sleep "$((left_ms / 1000)).$(printf '%03d' $((left_ms % 1000)))" &
  wait $! || true
}

# await_prepare_results: waits for the other clients' prepares (--await-prepare), a look a second
# at each whose result.json is not seen yet, until every one is seen, one has failed, or this job
# is stopped; sets not_run unless every one exited 0, and adds their endedAt to prepare_ends.
await_prepare_results() {
  local pending=("${await_prepares[@]}") still location copy rc looks=0
  while [ ${#pending[@]} -gt 0 ] && [ -z "$stop_signal" ]; do
    still=()
    for location in "${pending[@]}"; do
      copy="$work/awaited-$((looks += 1)).json"
      if [[ "$location" == s3://* ]]; then
        aws s3 cp --only-show-errors "${location%/}/result.json" "$copy" >/dev/null 2>&1 || { still+=("$location"); continue; }
      elif [ -f "${location%/}/result.json" ]; then
        cp "${location%/}/result.json" "$copy" || { still+=("$location"); continue; }
      else
        still+=("$location")
        continue
      fi
      rc=$(sed -n 's/^ *"exitCode": *\(-\{0,1\}[0-9][0-9]*\).*/\1/p' "$copy" | head -n 1)
      if [ "$rc" != 0 ]; then
        # One failed prepare is enough: no run of the step runs, and nobody waits for the rest.
        not_run="the data's prepare ($location) failed: exit code ${rc:-unknown}" not_run_rc=${rc:-1}
        return 0
      fi
      prepare_ends+=("$(sed -n 's/^ *"endedAt": *"\([^"]*\)".*/\1/p' "$copy" | head -n 1)")
    done
    pending=("${still[@]}")
    [ ${#pending[@]} -gt 0 ] || break
    sleep 1 &
    wait $! || true # a trapped signal ends the wait early
  done
  if [ ${#pending[@]} -gt 0 ]; then
    not_run="stopped by SIG$stop_signal while waiting for the data's prepare (${pending[*]})" not_run_rc=$(signal_rc)
  fi
}

if [ "$phase" = prepare ]; then
  started_at=$(iso_now)
  prepare_data
  write_result "$out_dir" prepare "$sb_rc" "$started_at" "$(iso_now)" "$command_text"
else
  if [ -n "$prepare_out" ]; then
    use_output "$prep_dir" "$prepare_out"
    connect_to "$prepare_host" "$prepare_port"
    phase_opts=("${prepare_opts[@]}")
    started_at=$(iso_now)
    prepare_data
    prepare_ended=$(iso_now)
    prepare_ends+=("$prepare_ended")
    write_result "$out_dir" prepare "$sb_rc" "$started_at" "$prepare_ended" "$command_text"
    # Uploaded before the run starts: the clients awaiting it start their runs on it.
    if ! upload_outputs; then
      echo "$PROG: could not upload the prepare's output to $prepare_out" >&2
      exit 4
    fi
    if [ "$sb_rc" != 0 ] || [ -n "$stop_signal" ]; then
      not_run="the data's prepare ($prepare_out) failed: exit code $sb_rc" not_run_rc=$sb_rc
      [ "$not_run_rc" != 0 ] || not_run_rc=$(signal_rc)
    fi
    use_output "$run_dir" "$out"
    connect_to "$host" "$run_ports"
    phase_opts=("${sysbench_opts[@]}")
  fi
  # After this job's own prepare (if any, and only if it succeeded): the others' (a duet's members').
  if [ ${#await_prepares[@]} -gt 0 ] && [ -z "$not_run" ]; then await_prepare_results; fi
  [ -n "$not_run" ] || wait_for_run_start
  # The run's own times: a prepare before it is not part of the measured step.
  started_at=$(iso_now)
  command_text=$(display_command run)
  if [ -n "$not_run" ]; then
    echo "aurora-bench runner: not run: $not_run" >>"$log_file"
    sb_rc=$not_run_rc
    [ "$sb_rc" != 0 ] || sb_rc=1
  elif [ -z "$stop_signal" ]; then
    run_sysbench run
  else
    sb_rc=$(signal_rc)
  fi
  write_result "$out_dir" run "$sb_rc" "$started_at" "$(iso_now)" "$command_text"
fi

if ! upload_outputs; then
  echo "$PROG: could not upload the output to $out" >&2
  exit 4
fi
if [ -n "$stop_signal" ]; then echo "$PROG: stopped by SIG$stop_signal (sysbench exit code $sb_rc)" >&2; fi
exit 0
