#!/bin/bash
# Installs the MariaDB server a self-managed variant runs (engine "self-managed", version
# "mariadb-10.11": core/aurora/engines.ts accepts only that version, because this is what gets
# installed) on a Debian 12 (bookworm) server instance, at boot, from its user data. Then
# client/server-setup.sh (sent by the AWS backend over SSM) configures and starts it.
#
#   server-install.sh
#
# Writes one marker under ${AURORA_BENCH_HOME:-/opt/aurora-bench}:
#   server-installed       "mariadbd=<path>" and "version=<mariadbd --version>" lines: done
#   server-install-failed  the reason, one line: server-setup.sh fails with it instead of waiting
# Nothing is installed when a mariadbd is already there (on PATH or where the packages put it): a
# repeated boot finds its own.
#
# Where MariaDB 10.11 comes from: Debian 12's own archive, package mariadb-server (bookworm ships
# MariaDB 10.11; mariadb-client comes with it), with apt-get from the AMI's sources. The installed
# version is checked (mariadbd --version says 10.11) before the marker.
#
# The package's own service must not run: server-setup.sh starts mariadbd with its own datadir and
# options, on the same port 3306. Debian's maintainer scripts start services through invoke-rc.d
# (or deb-systemd-invoke), which ask /usr/sbin/policy-rc.d first; exit status 101 means "action
# forbidden" (invoke-rc.d(8), "POLICY LAYER"). So a policy-rc.d denying starts is in place while the
# packages install, and the unit is disabled afterwards (systemctl disable), so a reboot does not
# start it either.
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

# The server binary wherever a package puts it: Debian's packages use /usr/sbin/mariadbd.
find_mariadbd() {
  local p
  p=$(command -v mariadbd 2>/dev/null) && [ -n "$p" ] && { printf '%s' "$p"; return 0; }
  for p in /usr/sbin/mariadbd /usr/libexec/mariadbd; do
    [ -x "$p" ] && { printf '%s' "$p"; return 0; }
  done
  return 1
}

if ! mariadbd=$(find_mariadbd); then
  command -v apt-get >/dev/null 2>&1 ||
    fail "no mariadbd and no apt-get to install one with: this script installs MariaDB on Debian 12"
  policy=/usr/sbin/policy-rc.d
  [ -e "$policy" ] && fail "$policy exists already: refusing to replace the machine's service policy"
  printf '#!/bin/sh\n# server-install.sh: no service starts while MariaDB installs\nexit 101\n' >"$policy" &&
    chmod 755 "$policy" ||
    fail "could not write $policy"
  # Waits for a dpkg lock another apt holds, retries a failed fetch (as the user data's apt-get does:
  # lib/client-user-data.ts APT_BOOT_OPTIONS).
  DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=900 -o Acquire::Retries=5 \
    install -y --no-install-recommends mariadb-server mariadb-client >>"$log" 2>&1
  rc=$?
  rm -f "$policy"
  [ $rc -eq 0 ] || fail "apt-get install mariadb-server failed: $(tail -n 3 "$log" | tr '\n' ' ')"
  if command -v systemctl >/dev/null 2>&1; then
    systemctl disable mariadb >>"$log" 2>&1 ||
      fail "systemctl disable mariadb failed: $(tail -n 2 "$log" | tr '\n' ' ')"
  fi
  mariadbd=$(find_mariadbd) || fail "the MariaDB packages installed, but no mariadbd is on PATH or in /usr/sbin"
fi

version=$("$mariadbd" --version 2>&1 | head -n 1)
case "$version" in
  *" 10.11."*) ;;
  *) fail "$mariadbd is not MariaDB 10.11 (it says: $version); a self-managed variant's version is mariadb-10.11" ;;
esac
printf 'mariadbd=%s\nversion=%s\n' "$mariadbd" "$version" >"$ok_marker.tmp" && mv "$ok_marker.tmp" "$ok_marker"
echo "server-install: $version ($mariadbd)"
