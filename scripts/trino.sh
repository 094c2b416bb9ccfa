#!/usr/bin/env bash
# The Trino server the AWS rehearsal answers Athena with (Athena engine version 3 is Trino: Athena
# User Guide, "Athena engine version 3"). Trino 476 from Maven Central, the server and its Hive
# plugin, cached under ~/.cache/aurora-bench; run on Java 24+ (Trino 476 release notes), the Temurin 25
# JDK by path.
#   bash scripts/trino.sh ensure        download and unpack it when missing
#   bash scripts/trino.sh start [PORT]  ensure, then start a server on PORT (else a free one) of 127.0.0.1
#                                       in the background; prints TRINO_PID=N and TRINO_DIR=... at once,
#                                       then waits until it serves and prints TRINO_ENDPOINT=http://127.0.0.1:PORT
#   bash scripts/trino.sh stop PID DIR  stop that server and remove its folder
# The server starts with no catalog: each rehearsal adds its own (CREATE CATALOG, dynamic catalog
# management) pointed at its own moto, so one server serves every rehearsal and test file of a run.
set -euo pipefail
version=476
java_home=${AURORA_BENCH_TRINO_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
cache="${XDG_CACHE_HOME:-$HOME/.cache}/aurora-bench"
home="$cache/trino-server-$version"

ensure() {
  [ -f "$home/complete" ] && return 0
  mkdir -p "$cache"
  (
    # One setup at a time installs it; another waits and then finds it complete.
    flock 9
    [ -f "$home/complete" ] && exit 0
    command -v mvn >/dev/null || { echo "trino.sh: mvn is required (apt-get install maven)" >&2; exit 1; }
    echo "trino.sh: Trino $version (io.trino:trino-server-core, io.trino:trino-hive) into $home" >&2
    local repo="$HOME/.m2/repository" artifact
    # -Dtransitive=false: the server's pom names every plugin; only the Hive one is needed.
    for artifact in "trino-server-core:$version:tar.gz" "trino-hive:$version:zip"; do
      mvn -q -Dmaven.repo.local="$repo" dependency:get -Dtransitive=false -Dartifact="io.trino:$artifact" >&2
    done
    rm -rf "$home" "$home.$$"
    mkdir -p "$home.$$"
    tar -xzf "$repo/io/trino/trino-server-core/$version/trino-server-core-$version.tar.gz" -C "$home.$$" \
      --strip-components=1
    unzip -q "$repo/io/trino/trino-hive/$version/trino-hive-$version.zip" -d "$home.$$/plugin"
    mv "$home.$$/plugin/trino-hive-$version" "$home.$$/plugin/hive"
    touch "$home.$$/complete"
    mv -T "$home.$$" "$home"
  ) 9>"$home.lock"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

start() {
  ensure
  [ -x "$java_home/bin/java" ] || { echo "trino.sh: Trino $version needs Java 24+ at $java_home" >&2; exit 1; }
  local port dir pid
  port=${1:-$(free_port)}
  dir=$(mktemp -d -t trino.XXXXXX)
  mkdir -p "$dir/etc/catalog" "$dir/data"
  printf 'node.environment=rehearsal\nnode.id=rehearsal-%s\nnode.data-dir=%s/data\n' "$port" "$dir" \
    >"$dir/etc/node.properties"
  # 4 GB of heap: the lake's queries are small, and Trino's defaults want a large machine's memory.
  printf '%s\n' -server -Xmx4G -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Djdk.attach.allowAttachSelf=true \
    -XX:+EnableDynamicAgentLoading >"$dir/etc/jvm.config"
  # catalog.management=dynamic: CREATE CATALOG / DROP CATALOG (Trino documentation, "Catalog management
  # properties"), kept in memory only.
  cat >"$dir/etc/config.properties" <<EOF
coordinator=true
node-scheduler.include-coordinator=true
http-server.http.port=$port
discovery.uri=http://127.0.0.1:$port
catalog.management=dynamic
catalog.store=memory
query.max-memory=1GB
query.max-memory-per-node=1GB
EOF
  # setsid: the server outlives this script; the caller stops it by pid.
  PATH="$java_home/bin:$PATH" JAVA_HOME="$java_home" setsid "$home/bin/launcher" run --etc-dir="$dir/etc" \
    --data-dir="$dir/data" >"$dir/server.log" 2>&1 </dev/null &
  pid=$!
  echo "TRINO_PID=$pid"
  echo "TRINO_DIR=$dir"
  # About 40 s on two cores; allow a loaded machine several times that.
  for _ in $(seq 1 600); do
    kill -0 "$pid" 2>/dev/null || break
    if curl -sf "http://127.0.0.1:$port/v1/info" 2>/dev/null | grep -q '"starting":false'; then
      echo "TRINO_ENDPOINT=http://127.0.0.1:$port"
      return 0
    fi
    sleep 0.5
  done
  stop "$pid" "$dir"
  echo "trino.sh: Trino did not come up on port $port: $(tail -n 5 "$dir/server.log")" >&2
  exit 1
}

stop() {
  local pid=${1:?usage: trino.sh stop PID DIR} dir=${2:-}
  # Only a Trino server (its launcher execs java with io.trino.server.TrinoServer).
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'io.trino.server'; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  case "$dir" in */trino.*) rm -rf "$dir" ;; esac
}

case "${1:-}" in
  ensure) ensure ;;
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  *) echo "usage: trino.sh ensure|start|stop PID DIR" >&2; exit 2 ;;
esac
