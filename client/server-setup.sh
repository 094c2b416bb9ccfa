#!/usr/bin/env bash
# Configures, starts and (for a replica) connects the MariaDB server of a self-managed variant on
# its EC2 instance. The AWS backend sends it over SSM (AWS-RunShellScript) once the instance is
# Online; the contract between the two is core/aurora/server-config.ts (the option lines) and this
# header.
#
#   server-setup.sh --role writer|replica --server-id N --port P --options-b64 B64 --secret-arn ARN
#                   [--writer-host H --writer-port P]          (a replica: the writer's endpoint)
#
#   --options-b64  the [mariadbd] option lines core/aurora/server-config.ts renderServerOptions
#                  rendered from the variant's parameters, one per line, base64
#   --secret-arn   Secrets Manager secret whose SecretString is {"username": ..., "password": ...}
#                  (the shape RDS gives its own): that user gets all privileges from any host; the
#                  writer gets a replication user with the same password for its replicas
#
# Environment: AURORA_BENCH_HOME (default /opt/aurora-bench; everything goes under its server/),
# AURORA_BENCH_SERVER_PORT (overrides --port) and AURORA_BENCH_SERVER_HOST (the address the server
# binds to and reports; default: 0.0.0.0 and the instance's private IPv4 from IMDSv2). The AWS
# rehearsal sets both per emulated instance; on EC2 they are unset.
#
# Steps, each safe to repeat (a second run on a ready server verifies it and prints the same line):
#   1. waits (up to AURORA_BENCH_INSTALL_WAIT_S, default 900 s) for client/server-install.sh's
#      marker, and fails at once with its reason when the install failed;
#   2. writes server/my.cnf: paths, port, server_id, the binary log with GTIDs (log_bin, ROW,
#      log_slave_updates, gtid_strict_mode), read_only on a replica, then the given option lines;
#   3. initialises the datadir (mariadb-install-db) once;
#   4. starts mariadbd detached so the SSM command can end: a transient systemd unit (systemd-run)
#      when systemd is PID 1, else setsid; waits until it answers, or fails with its [ERROR] lines
#      (an option MariaDB does not take ends here, with MariaDB's own words);
#   5. creates the users (not binary-logged: each server has its own, and a replica's own
#      transactions would break gtid_strict_mode) and, on the writer, database sbtest (logged, so
#      the replicas get it);
#   6. a replica: CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos and START SLAVE (MariaDB Server
#      documentation, "Setting Up and Repointing GTID Replicas": a new empty replica with an empty
#      GTID position replicates from the start of the primary's binary log; "GTID Statements and
#      Functions": master_use_gtid=slave_pos), then waits (up to 120 s) until the IO and SQL
#      threads both run.
# Output: progress lines, then as the LAST line of stdout one JSON object:
#   {"ready":true,"role":"writer","host":"10.0.1.23","port":3306,"version":"10.11.x-MariaDB","serverId":1}
# Exit status: 0 ready; 1 failed (one line on stderr: server-setup.sh: <reason>); 2 usage error.
set -uo pipefail
export LC_ALL=C

readonly PROG=server-setup.sh
SCRIPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_ROOT
# shellcheck source=lib/json.sh
. "$SCRIPT_ROOT/lib/json.sh"

fail() {
  echo "$PROG: $*" >&2
  exit 1
}
usage() {
  echo "$PROG: $*" >&2
  echo "usage: $PROG --role writer|replica --server-id N --port P --options-b64 B64 --secret-arn ARN" \
    "[--writer-host H --writer-port P]" >&2
  exit 2
}
say() { echo "$PROG: $*"; }

role='' server_id='' port_arg='' options_b64='' options_given=0 secret_arn='' writer_host='' writer_port=''
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage "$1 needs a value"
  case "$1" in
    --role) role=$2 ;;
    --server-id) server_id=$2 ;;
    --port) port_arg=$2 ;;
    --options-b64) options_b64=$2 options_given=1 ;;
    --secret-arn) secret_arn=$2 ;;
    --writer-host) writer_host=$2 ;;
    --writer-port) writer_port=$2 ;;
    *) usage "unknown argument $1" ;;
  esac
  shift 2
done
case "$role" in writer | replica) ;; *) usage "--role must be writer or replica, got \"$role\"" ;; esac
[[ "$server_id" =~ ^[1-9][0-9]{0,8}$ ]] || usage "--server-id must be a positive integer, got \"$server_id\""
port=${AURORA_BENCH_SERVER_PORT:-$port_arg}
[[ "$port" =~ ^[1-9][0-9]{0,4}$ ]] && [ "$port" -le 65535 ] ||
  usage "the port (--port or AURORA_BENCH_SERVER_PORT) must be 1..65535, got \"$port\""
[ $options_given = 1 ] || usage "--options-b64 is required (the variant's option lines, base64)"
[ -n "$secret_arn" ] || usage "--secret-arn is required"
if [ "$role" = replica ]; then
  [ -n "$writer_host" ] || usage "a replica needs --writer-host"
  [[ "$writer_port" =~ ^[1-9][0-9]{0,4}$ ]] || usage "a replica needs --writer-port 1..65535, got \"$writer_port\""
elif [ -n "$writer_host$writer_port" ]; then
  usage "--writer-host/--writer-port are for a replica"
fi

home=${AURORA_BENCH_HOME:-/opt/aurora-bench}
dir="$home/server"
datadir="$dir/data"
cnf="$dir/my.cnf"
client_cnf="$dir/client.cnf"
socket="$dir/mariadbd.sock"
pid_file="$dir/mariadbd.pid"
error_log="$dir/error.log"
readonly REPL_USER=aurora_bench_repl

# --------------------------------------------------------------- 1. the install
install_wait=${AURORA_BENCH_INSTALL_WAIT_S:-900}
deadline=$((SECONDS + install_wait))
while [ ! -f "$home/server-installed" ]; do
  [ -f "$home/server-install-failed" ] &&
    fail "the server install failed: $(head -c 1500 "$home/server-install-failed" | tr '\n' ' ')"
  [ $SECONDS -ge $deadline ] &&
    fail "no install marker ($home/server-installed) after ${install_wait} s:" \
      "client/server-install.sh has not finished (see $home/server-install.log)"
  sleep 2
done
mariadbd=$(sed -n 's/^mariadbd=//p' "$home/server-installed" | head -n 1)
[ -n "$mariadbd" ] && [ -x "$mariadbd" ] || fail "the install marker names no runnable mariadbd (\"$mariadbd\")"
# The client programs come with the server's packages: on PATH, or beside mariadbd's /usr/bin.
tool() {
  local name
  for name in "$@"; do
    command -v "$name" 2>/dev/null && return 0
    [ -x "/usr/bin/$name" ] && { echo "/usr/bin/$name"; return 0; }
  done
  return 1
}
client=$(tool mariadb mysql) || fail "no mariadb client (mariadb or mysql) beside $mariadbd"
admin_tool=$(tool mariadb-admin mysqladmin) || fail "no mariadb-admin (or mysqladmin) beside $mariadbd"
install_db=$(tool mariadb-install-db mysql_install_db) || fail "no mariadb-install-db beside $mariadbd"

# --------------------------------------------------------------- 2. the options
options=$(base64 -d <<<"$options_b64" 2>/dev/null) || fail "--options-b64 is not base64"
# What this script sets itself (core/aurora/server-config.ts SERVER_MANAGED_OPTIONS, which refuses
# them before a variant gets here; a test keeps the two lists equal): a line setting one would
# override this file's own, which come first. Each name has a space on either side.
MANAGED=' port socket datadir basedir tmpdir pid_file log_error bind_address user server_id log_bin '
MANAGED+=' log_bin_basename log_bin_index relay_log relay_log_index log_slave_updates log_replica_updates '
MANAGED+=' read_only gtid_strict_mode gtid_domain_id skip_slave_start skip_networking skip_name_resolve '
MANAGED+=' plugin_dir innodb_data_home_dir innodb_log_group_home_dir innodb_undo_directory general_log_file '
MANAGED+=' slow_query_log_file report_host report_port '
MANAGED+=' log_slow_query_file aria_log_dir_path character_sets_dir des_key_file ft_stopword_file init_file '
MANAGED+=' innodb_buffer_pool_filename innodb_temp_data_file_path innodb_tmpdir language '
MANAGED+=' lc_messages_dir log_basename log_ddl_recovery log_isam log_tc master_info_file relay_log_info_file '
MANAGED+=' secure_file_priv slave_load_tmpdir ssl_ca ssl_capath ssl_cert ssl_crl ssl_crlpath ssl_key plugin_load '
MANAGED+=' plugin_load_add wsrep_data_home_dir wsrep_provider wsrep_status_file wsrep_notify_cmd '
readonly MANAGED
n=0
while IFS= read -r line; do
  n=$((n + 1))
  [ -z "$line" ] && continue
  [[ "$line" =~ ^[A-Za-z0-9_.-]+(=.*)?$ ]] || fail "option line $n is not name=value: $line"
  name=${line%%=*}
  name=${name//-/_}
  name=${name,,}
  [[ "$MANAGED" == *" $name "* ]] &&
    fail "option line $n sets $name, which this script sets itself" \
      "(paths, ports, server ids, binary log, replication roles): remove it from the variant"
done <<<"$options"

# --------------------------------------------------------------- the secret
command -v aws >/dev/null 2>&1 || fail "the AWS CLI (aws) is required to read $secret_arn"
# The CLI needs a region; a secret ARN carries one (arn:aws:secretsmanager:REGION:...).
if [ -z "${AWS_REGION:-}${AWS_DEFAULT_REGION:-}" ] && [[ "$secret_arn" == arn:*:secretsmanager:*:* ]]; then
  AWS_DEFAULT_REGION=$(cut -d: -f4 <<<"$secret_arn")
  export AWS_DEFAULT_REGION
fi
secret_err=$(mktemp)
secret_json=$(aws secretsmanager get-secret-value --secret-id "$secret_arn" --query SecretString --output text \
  2>"$secret_err") ||
  fail "could not read secret $secret_arn: $(tr '\n' ' ' <"$secret_err")"
rm -f "$secret_err"
# Printed without a newline and followed by a sentinel, so $(...) cannot strip a trailing newline or
# space off the value.
secret_field() {
  if command -v jq >/dev/null 2>&1; then
    jq -je --arg f "$1" '.[$f] | strings' <<<"$secret_json" 2>/dev/null && printf x
  else
    local read_field='import json,sys; v=json.load(sys.stdin)[sys.argv[1]];'
    read_field+=' assert isinstance(v, str) and v; sys.stdout.write(v)'
    python3 -c "$read_field" "$1" <<<"$secret_json" 2>/dev/null && printf x
  fi
}
admin_user=$(secret_field username) || fail "secret $secret_arn has no \"username\" string"
admin_password=$(secret_field password) || fail "secret $secret_arn has no \"password\" string"
admin_user=${admin_user%x}
admin_password=${admin_password%x}
unset secret_json
[ -n "$admin_user" ] && [ -n "$admin_password" ] || fail "secret $secret_arn has an empty username or password"

# A MariaDB string literal (default sql_mode: backslash escapes).
sql_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\'/\\\'}
  printf "'%s'" "$s"
}
# An option file value: quoted, with the same escapes (MariaDB, "Configuring MariaDB with Option Files").
cnf_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}

# --------------------------------------------------------------- the host
host=${AURORA_BENCH_SERVER_HOST:-}
if [ -n "$host" ]; then
  bind=$host
else
  bind=0.0.0.0
  # IMDSv2: a session token first, then the instance's private IPv4 (EC2 User Guide, "Use the
  # Instance Metadata Service to access instance metadata").
  token=$(curl -sS -m 5 -X PUT http://169.254.169.254/latest/api/token \
    -H 'X-aws-ec2-metadata-token-ttl-seconds: 300' 2>/dev/null) ||
    fail "no AURORA_BENCH_SERVER_HOST and the instance metadata service gave no token:" \
      "cannot tell the server's address"
  host=$(curl -sS -m 5 -H "X-aws-ec2-metadata-token: $token" \
    http://169.254.169.254/latest/meta-data/local-ipv4 2>/dev/null) ||
    fail "the instance metadata service gave no local-ipv4"
  [[ "$host" =~ ^[0-9.]+$ ]] || fail "the instance metadata service's local-ipv4 is not an IPv4 address: $host"
fi

# --------------------------------------------------------------- who runs mariadbd
mkdir -p "$datadir" "$dir/tmp"
run_as=''
if [ "$(id -u)" = 0 ]; then
  # mariadbd refuses root unless told; the packages' own "mysql" user is used when it can reach
  # the server directory (an AURORA_BENCH_HOME under a private directory may not let it).
  run_as=root
  if id -u mysql >/dev/null 2>&1 && chown -R mysql: "$dir" 2>/dev/null &&
    runuser -u mysql -- test -w "$datadir" 2>/dev/null; then
    run_as=mysql
  fi
fi

# --------------------------------------------------------------- 2. my.cnf
read_only=OFF
[ "$role" = replica ] && read_only=ON
new_cnf=$(
  echo "# written by client/server-setup.sh: $role, server_id $server_id"
  echo "[mariadbd]"
  echo "datadir=$(cnf_string "$datadir")"
  echo "socket=$(cnf_string "$socket")"
  echo "pid-file=$(cnf_string "$pid_file")"
  echo "log-error=$(cnf_string "$error_log")"
  echo "tmpdir=$(cnf_string "$dir/tmp")"
  echo "port=$port"
  echo "bind-address=$bind"
  [ -n "$run_as" ] && echo "user=$run_as"
  echo "server-id=$server_id"
  echo "log-bin=mariadb-bin"
  echo "binlog-format=ROW"
  echo "log-slave-updates=ON"
  echo "relay-log=relay-bin"
  echo "gtid-strict-mode=ON"
  echo "read-only=$read_only"
  echo "skip-name-resolve"
  echo "report-host=$host"
  echo "report-port=$port"
  # Sysbench threads killed at a step's end are connection errors; never let them block a client
  # host (the variant's lines may still set it).
  echo "max-connect-errors=1000000000"
  echo "# the variant's parameters (core/aurora/server-config.ts renderServerOptions)"
  printf '%s\n' "$options"
)

running() {
  local pid
  pid=$(cat "$pid_file" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "--defaults-file=$cnf"
}

if running; then
  [ "$(cat "$cnf")" = "$new_cnf" ] ||
    fail "a server already runs here ($cnf) with other settings than these: its options change only with a new instance"
  say "mariadbd already runs with these settings (pid $(cat "$pid_file"))"
else
  printf '%s\n' "$new_cnf" >"$cnf"

  # ------------------------------------------------------------- 3. the datadir
  if [ ! -d "$datadir/mysql" ]; then
    find "$datadir" -mindepth 1 -delete 2>/dev/null
    # --no-defaults: the bootstrap writes no binary log and none of the variant's options; root
    # gets no password, and only until step 5 locks it to the unix socket.
    # Its temporary files go where the server's do (an inherited TMPDIR may not be writable for it).
    TMPDIR="$dir/tmp" "$install_db" --no-defaults --datadir="$datadir" --skip-test-db \
      --auth-root-authentication-method=normal ${run_as:+--user=$run_as} >"$dir/install-db.log" 2>&1 ||
      fail "mariadb-install-db failed: $(
        { grep '\[ERROR\]' "$dir/install-db.log" || tail -n 3 "$dir/install-db.log"; } |
          sed 's/^.*\[ERROR\] *//' | head -n 3 | tr '\n' ' '
      )(see $dir/install-db.log)"
    [ "$run_as" = mysql ] && chown -R mysql: "$dir"
    say "initialised $datadir"
  fi

  # ------------------------------------------------------------- 4. start
  rm -f "$error_log"
  ulimit -n 65535 2>/dev/null || true
  if [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] && [ "$(id -u)" = 0 ] &&
    command -v systemd-run >/dev/null 2>&1; then
    unit=aurora-bench-mariadbd
    systemctl stop "$unit" >/dev/null 2>&1
    systemctl reset-failed "$unit" >/dev/null 2>&1
    systemd-run --quiet --unit="$unit" --property=LimitNOFILE=1048576 --property=TimeoutStopSec=300 \
      "$mariadbd" --defaults-file="$cnf" ||
      fail "systemd-run could not start mariadbd"
  else
    setsid "$mariadbd" --defaults-file="$cnf" </dev/null >>"$dir/mariadbd.out" 2>&1 &
  fi
  ready_wait=${AURORA_BENCH_SERVER_READY_S:-300}
  deadline=$((SECONDS + ready_wait))
  pause=0.05
  until "$admin_tool" --no-defaults --socket="$socket" --connect-timeout=2 ping >/dev/null 2>&1; do
    # mariadbd writes its pid file only once it listens: before that, an exit shows in its log.
    if grep -q '\[ERROR\]' "$error_log" 2>/dev/null && ! pgrep -f -- "--defaults-file=$cnf" >/dev/null 2>&1; then
      fail "mariadbd did not start:" \
        "$(grep '\[ERROR\]' "$error_log" | sed 's/^.*\[ERROR\] *//' | head -n 3 | tr '\n' ' ')(see $error_log)"
    fi
    if [ $SECONDS -ge $deadline ]; then
      fail "mariadbd did not answer within ${ready_wait} s: $(tail -n 3 "$error_log" 2>/dev/null | tr '\n' ' ')"
    fi
    sleep "$pause"
    pause=0.2
  done
  say "mariadbd started ($("$mariadbd" --version 2>/dev/null | head -n 1))"
fi

# --------------------------------------------------------------- 5. users and sbtest
# The admin login once step 5 ran (client.cnf, 0600), root over the socket before that.
sql() {
  if [ -f "$client_cnf" ]; then
    "$client" --defaults-file="$client_cnf" -N -B -e "$1"
  else
    "$client" --no-defaults --socket="$socket" -uroot -N -B -e "$1"
  fi
}
if [ -f "$client_cnf" ] && ! sql 'SELECT 1' >/dev/null 2>&1; then
  # From an earlier secret or a half-finished run: root still gets in over the socket as the OS root.
  rm -f "$client_cnf"
fi
u=$(sql_string "$admin_user")
p=$(sql_string "$admin_password")
users_sql="SET SESSION sql_log_bin=0;
CREATE USER IF NOT EXISTS $u@'%' IDENTIFIED BY $p;
ALTER USER $u@'%' IDENTIFIED BY $p;
GRANT ALL PRIVILEGES ON *.* TO $u@'%' WITH GRANT OPTION;"
if [ "$role" = writer ]; then
  users_sql+="
CREATE USER IF NOT EXISTS '$REPL_USER'@'%' IDENTIFIED BY $p;
ALTER USER '$REPL_USER'@'%' IDENTIFIED BY $p;
GRANT REPLICATION SLAVE ON *.* TO '$REPL_USER'@'%';"
fi
users_sql+="
ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket;"
out=$(sql "$users_sql" 2>&1) || fail "creating the users failed: $(tr '\n' ' ' <<<"$out")"
umask 077
printf '[client]\nuser=%s\npassword=%s\nsocket=%s\n' \
  "$(cnf_string "$admin_user")" "$(cnf_string "$admin_password")" "$(cnf_string "$socket")" >"$client_cnf"
umask 022
sql 'SELECT 1' >/dev/null 2>&1 || fail "the admin user from $secret_arn cannot log in after it was created"
if [ "$role" = writer ]; then
  out=$(sql 'CREATE DATABASE IF NOT EXISTS sbtest' 2>&1) ||
    fail "CREATE DATABASE sbtest failed: $(tr '\n' ' ' <<<"$out")"
fi

# --------------------------------------------------------------- 6. replication
slave_field() { sed -n "s/^ *$1: //p" <<<"$status" | head -n 1; }
if [ "$role" = replica ]; then
  status=$("$client" --defaults-file="$client_cnf" -e 'SHOW SLAVE STATUS\G' 2>&1) ||
    fail "SHOW SLAVE STATUS failed: $(tr '\n' ' ' <<<"$status")"
  if [ "$(slave_field Master_Host)" != "$writer_host" ] || [ "$(slave_field Master_Port)" != "$writer_port" ] ||
    [ "$(slave_field Using_Gtid)" != Slave_Pos ]; then
    change_master="CHANGE MASTER TO MASTER_HOST=$(sql_string "$writer_host"), MASTER_PORT=$writer_port,"
    change_master+=" MASTER_USER='$REPL_USER', MASTER_PASSWORD=$p, MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=2;"
    out=$(sql "STOP SLAVE;
$change_master
START SLAVE;" 2>&1) ||
      fail "CHANGE MASTER TO $writer_host:$writer_port failed: $(tr '\n' ' ' <<<"$out")"
    say "replicating from $writer_host:$writer_port (GTID, slave_pos)"
  else
    sql 'START SLAVE' >/dev/null 2>&1
  fi
  deadline=$((SECONDS + ${AURORA_BENCH_REPLICA_WAIT_S:-120}))
  while :; do
    status=$("$client" --defaults-file="$client_cnf" -e 'SHOW SLAVE STATUS\G' 2>&1)
    io=$(slave_field Slave_IO_Running)
    sqlt=$(slave_field Slave_SQL_Running)
    [ "$io" = Yes ] && [ "$sqlt" = Yes ] && break
    if [ $SECONDS -ge $deadline ]; then
      fail "replication from $writer_host:$writer_port did not start within ${AURORA_BENCH_REPLICA_WAIT_S:-120} s" \
        "(IO thread: ${io:-?}, SQL thread: ${sqlt:-?}): $(slave_field Last_IO_Error) $(slave_field Last_SQL_Error)"
    fi
    [ "$sqlt" = No ] && [ -n "$(slave_field Last_SQL_Error)" ] &&
      fail "the replica's SQL thread stopped: $(slave_field Last_SQL_Error)"
    sleep 0.5
  done
  say "replica IO and SQL threads run"
fi

version=$(sql 'SELECT VERSION()' 2>/dev/null) || fail "SELECT VERSION() failed"
printf '{"ready":true,"role":%s,"host":%s,"port":%d,"version":%s,"serverId":%d}\n' \
  "$(json_string "$role")" "$(json_string "$host")" "$port" "$(json_string "$version")" "$server_id"
