#!/usr/bin/env bash
# The moto server the AWS backend tests run against (RDS, EC2, S3, CloudWatch, Athena, SSM over HTTP).
#   bash scripts/moto.sh ensure        create .venv with moto[server] if it is missing
#   bash scripts/moto.sh start         ensure, then start moto_server on a free 127.0.0.1 port in the
#                                      background; prints MOTO_ENDPOINT=http://127.0.0.1:PORT and MOTO_PID=N
#   bash scripts/moto.sh stop PID      stop the server started with that pid (only a moto_server pid)
#   bash scripts/moto.sh free-port     print a free 127.0.0.1 port (for zygote)
#   bash scripts/moto.sh zygote PORT   import moto once and fork servers for `start` (scripts/moto_server.py);
#                                      runs until killed. `start` forks from it when AURORA_BENCH_MOTO_ZYGOTE
#                                      is 127.0.0.1:PORT and it answers, and starts a server of its own otherwise
# Exits non-zero with a message on stderr when moto cannot be installed or does not come up.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"

ensure() {
  if [ -x "$venv/bin/moto_server" ]; then return 0; fi
  # Several test runs may start at once on a fresh machine: one installs, the others wait.
  exec 9>"${TMPDIR:-/tmp}/aurora-bench-venv.lock"
  flock 9
  if [ ! -x "$venv/bin/moto_server" ]; then
    command -v python3 >/dev/null ||
      { echo "moto.sh: python3 is required (apt-get install python3 python3-venv)" >&2; exit 1; }
    echo "moto.sh: creating $venv with moto[server]" >&2
    python3 -m venv "$venv" || { echo "moto.sh: python3 -m venv failed (apt-get install python3-venv)" >&2; exit 1; }
    "$venv/bin/pip" install -q --disable-pip-version-check 'moto[server]' >&2 \
      || { echo "moto.sh: pip install 'moto[server]' failed" >&2; exit 1; }
  fi
  flock -u 9
}

free_port() {
  local program='import socket; s=socket.socket(); s.bind(("127.0.0.1",0));'
  program+=' print(s.getsockname()[1]); s.close()'
  "$venv/bin/python" -c "$program"
}

# The pid of a server forked by the zygote AURORA_BENCH_MOTO_ZYGOTE names (127.0.0.1:PORT) on port $1,
# its output in $2; fails when none is named or it does not answer.
fork_from_zygote() {
  local zygote=${AURORA_BENCH_MOTO_ZYGOTE:-} fd pid
  [[ $zygote =~ ^127\.0\.0\.1:[0-9]+$ ]] || return 1
  { exec {fd}<>"/dev/tcp/${zygote%:*}/${zygote#*:}"; } 2>/dev/null || return 1
  printf '%s %s\n' "$1" "$2" >&"$fd"
  read -r -t 10 pid <&"$fd" || pid=""
  exec {fd}>&-
  [[ $pid =~ ^[0-9]+$ ]] && echo "$pid"
}

zygote() {
  ensure
  exec "$venv/bin/python" "$root/scripts/moto_server.py" --zygote "${1:?usage: moto.sh zygote PORT}"
}

start() {
  ensure
  local attempt port pid log probe
  for attempt in 1 2 3; do
    port="$(free_port)"
    log="$(mktemp -t moto-server.XXXXXX.log)"
    # setsid: the server outlives this script and is not killed with the caller's process group;
    # the caller stops it by pid.
    # scripts/moto_server.py: moto_server with its per-request listing of moto's modules taken once.
    if ! pid=$(fork_from_zygote "$port" "$log"); then
      setsid "$venv/bin/python" "$root/scripts/moto_server.py" -H 127.0.0.1 -p "$port" >"$log" 2>&1 < /dev/null &
      pid=$!
    fi
    for _ in $(seq 1 100); do
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      probe="import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/data.json', timeout=1)"
      if "$venv/bin/python" -c "$probe" 2>/dev/null; then
        echo "MOTO_ENDPOINT=http://127.0.0.1:$port"
        echo "MOTO_PID=$pid"
        echo "MOTO_LOG=$log"
        return 0
      fi
      sleep 0.2
    done
    kill "$pid" 2>/dev/null || true
    echo "moto.sh: moto_server did not come up on port $port (attempt $attempt): $(tail -n 5 "$log")" >&2
  done
  exit 1
}

stop() {
  local pid="${1:?usage: moto.sh stop PID}"
  # Only ever a moto_server we started: check the command line before signalling.
  if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q moto_server; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
}

case "${1:-}" in
  ensure) ensure ;;
  start) start ;;
  stop) stop "${2:-}" ;;
  zygote) zygote "${2:-}" ;;
  free-port) ensure && free_port ;;
  *) echo "usage: $0 ensure | start | stop PID | free-port | zygote PORT" >&2; exit 2 ;;
esac
