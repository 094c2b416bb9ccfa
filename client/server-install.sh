#!/bin/bash
# Installs the MariaDB server a self-managed variant runs (engine "self-managed", version
# "mariadb-10.11": core/aurora/engines.ts accepts only that version, because this is what gets
# installed) on an Amazon Linux 2023 server instance, at boot, from its user data. Then
# client/server-setup.sh (sent by the AWS backend over SSM) configures and starts it.
#
#   server-install.sh
#
# Writes one marker under ${AURORA_BENCH_HOME:-/opt/aurora-bench}:
#   server-installed       "mariadbd=<path>" and "version=<mariadbd --version>" lines: done
#   server-install-failed  the reason, one line: server-setup.sh fails with it instead of waiting
# Nothing is installed when a mariadbd is already there (on PATH or where the packages put it): the
# AWS rehearsal runs this on a machine that has one, and a repeated boot finds its own.
#
# Where MariaDB 10.11 comes from:
# - Amazon Linux 2023's own repository, package mariadb1011-server (with mariadb1011, the client).
#   AL2023 shipped MariaDB 10.5 first: its support statements (github.com/amazonlinux/
#   amazon-linux-2023, al2023-support-statements/support_info.xml, statement eol_mariadb105) list
#   the mariadb105 packages (mariadb105-server ...) with upstream end of life 2025-06-24; later AL2023
#   releases add MariaDB 10.11 as mariadb1011-server, which is what current AL2023 images install.
#   Whether the image's locked repository version has it is asked of dnf (`dnf list
#   mariadb1011-server`), not assumed.
# - Otherwise MariaDB's own package repository for 10.11 (MariaDB Server documentation, "MariaDB
#   Package Repository Setup and Usage": mariadb_repo_setup --mariadb-server-version=mariadb-10.11;
#   --os-type/--os-version override its OS detection, which does not know Amazon Linux, with the
#   RHEL 9 packages AL2023 is compatible with; --skip-maxscale skips what a server does not need),
#   package MariaDB-server (with MariaDB-client).
# The mariadb105 packages are never taken: a 10.5 server is not the 10.11 the spec asked for.
# Either way the installed version is checked (mariadbd --version says 10.11) before the marker.
set -uo pipefail

home=${AURORA_BENCH_HOME:-/opt/aurora-bench}
ok_marker="$home/server-installed"
failed_marker="$home/server-install-failed"
log="$home/server-install.log"
mkdir -p "$home"
rm -f "$failed_marker"

fail() {
  printf '%s\n' "$*" >"$failed_marker"
  echo "server-install: $*" >&2
  exit 1
}

# The server binary wherever a package puts it: Fedora-style packages (AL2023's) use
# /usr/libexec/mariadbd, MariaDB's own /usr/sbin/mariadbd.
find_mariadbd() {
  local p
  p=$(command -v mariadbd 2>/dev/null) && [ -n "$p" ] && { printf '%s' "$p"; return 0; }
  for p in /usr/libexec/mariadbd /usr/sbin/mariadbd; do
    [ -x "$p" ] && { printf '%s' "$p"; return 0; }
  done
  return 1
}

if ! mariadbd=$(find_mariadbd); then
  command -v dnf >/dev/null 2>&1 || fail "no mariadbd and no dnf to install one with: this script installs MariaDB on Amazon Linux 2023"
  if dnf list --quiet mariadb1011-server >>"$log" 2>&1; then
    dnf install -y mariadb1011-server mariadb1011 >>"$log" 2>&1 ||
      fail "dnf install mariadb1011-server failed: $(tail -n 3 "$log" | tr '\n' ' ')"
  else
    setup="$home/mariadb_repo_setup"
    curl -LsSf -o "$setup" https://r.mariadb.com/downloads/mariadb_repo_setup >>"$log" 2>&1 ||
      fail "AL2023's repository has no mariadb1011-server and MariaDB's repository setup script could not be downloaded: $(tail -n 2 "$log" | tr '\n' ' ')"
    bash "$setup" --mariadb-server-version=mariadb-10.11 --os-type=rhel --os-version=9 --skip-maxscale >>"$log" 2>&1 ||
      fail "mariadb_repo_setup for MariaDB 10.11 failed: $(tail -n 3 "$log" | tr '\n' ' ')"
    dnf install -y MariaDB-server MariaDB-client >>"$log" 2>&1 ||
      fail "dnf install MariaDB-server (MariaDB's 10.11 repository) failed: $(tail -n 3 "$log" | tr '\n' ' ')"
  fi
  mariadbd=$(find_mariadbd) || fail "the MariaDB packages installed, but no mariadbd is on PATH, in /usr/libexec or /usr/sbin"
fi

version=$("$mariadbd" --version 2>&1 | head -n 1)
case "$version" in
  *" 10.11."*) ;;
  *) fail "$mariadbd is not MariaDB 10.11 (it says: $version); a self-managed variant's version is mariadb-10.11" ;;
esac
printf 'mariadbd=%s\nversion=%s\n' "$mariadbd" "$version" >"$ok_marker.tmp" && mv "$ok_marker.tmp" "$ok_marker"
echo "server-install: $version ($mariadbd)"
