#!/usr/bin/env bash
# aurora-bench: builds sysbench 1.0.20 against a current LuaJIT 2.1 and installs it under a prefix.
# Run by the client user data (lib/client-user-data.ts) on Amazon Linux 2023, x86_64 and arm64,
# after the build dependencies are installed (gcc, make, autoconf, automake, libtool, pkgconf, the
# MariaDB client library headers, libpq's headers and pg_config, openssl, libaio, zlib).
#
#   client/install-sysbench.sh --luajit-source SRC --sysbench-source SRC [--prefix DIR] [--work DIR] [--jobs N]
#   client/install-sysbench.sh --luajit-source SRC --luajit-only [--prefix DIR] [--work DIR] [--jobs N]
#
# SRC   a source tarball (.tar.gz, .tar.xz, .tar.bz2): s3://bucket/key, https://..., or a local file.
# DIR   --prefix defaults to ${AURORA_BENCH_HOME:-/opt/aurora-bench}/sysbench: sysbench in DIR/bin, its
#       Lua tests in DIR/share/sysbench, LuaJIT in DIR/luajit (build-time only: it is linked in
#       statically). client/runner.sh and client/client-ready.sh look in DIR/bin first.
#
# Why not the LuaJIT sysbench bundles: sysbench 1.0.20 ships LuaJIT 2.1.0-beta2, which crashes on
# aarch64 (sysbench issue #384, https://github.com/akopytov/sysbench/issues/384, "Segmentation
# fault ... It occured on aarch64 platform"): LuaJIT of that age only handles 47-bit pointers, and
# arm64 kernels may hand out addresses above that. LuaJIT fixed it upstream ("Add support for
# full-range 64 bit lightuserdata", e9af1abec542e6f9851ff2368e7f196b6382a44c, 2020, and the
# follow-ups "Reorganize lightuserdata interning code" 836fb5bb and "Avoid conflict between 64 bit
# lightuserdata and ITERN key" 16d38a4b, 2021), after sysbench's last 1.0 release. Debian builds
# the same sysbench 1.0.20 against its system LuaJIT (Build-Depends: libluajit2-5.1-dev, configure
# --with-system-luajit), which shows the 1.0.20 sources work with a current LuaJIT 2.1. The rest of
# the 1.0.20 build (its bundled ConcurrencyKit included) builds on arm64: 1.0.20 added arm64 to
# sysbench's CI (ChangeLog: "Add arm64 to Travis CI matrix (#358)").
#
# How sysbench is pointed at it (sysbench 1.0.20 m4/sb_luajit.m4): --with-system-luajit makes
# configure call PKG_CHECK_MODULES([LUAJIT], [luajit]), which takes LUAJIT_CFLAGS and LUAJIT_LIBS
# as given when both are set (pkg.m4's precious variables) instead of asking pkg-config; on Linux
# sb_luajit.m4 adds -ldl to LUAJIT_LIBS and -rdynamic to LUAJIT_LDFLAGS itself. LUAJIT_LIBS names
# the static libluajit-5.1.a, as the bundled build does, so the binary needs no LuaJIT at run time.
#
# Steps: 1. LuaJIT: unpack, make, make install into DIR/luajit, smoke test (JIT on, FFI, a few MB of
# garbage collected in a JIT-compiled loop, several Lua states); --luajit-only stops here.
# 2. sysbench: unpack, ./autogen.sh when the tarball has no configure (GitHub's tag archives do
# not), ./configure --with-system-luajit ..., make, make install into DIR. 3. smoke test:
# `sysbench --version` is 1.0.x, a `sysbench cpu` run names the system LuaJIT and exits 0.
# Exit status: 0 installed, 2 usage error, 3 a step failed (message on stderr).
set -euo pipefail
export LC_ALL=C

readonly PROG=install-sysbench.sh
readonly USAGE="usage: $PROG --luajit-source SRC (--sysbench-source SRC | --luajit-only) [--prefix DIR] [--work DIR] [--jobs N]"
die_usage() { echo "$PROG: $*" >&2; echo "$USAGE" >&2; exit 2; }
die() { echo "$PROG: $*" >&2; exit 3; }
step() { echo "$PROG: $*"; }

luajit_source="" sysbench_source="" prefix="${AURORA_BENCH_HOME:-/opt/aurora-bench}/sysbench" work="" jobs="" luajit_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --luajit-source | --sysbench-source | --prefix | --work | --jobs)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      case "$1" in
        --luajit-source) luajit_source=$2 ;;
        --sysbench-source) sysbench_source=$2 ;;
        --prefix) prefix=$2 ;;
        --work) work=$2 ;;
        --jobs) jobs=$2 ;;
      esac
      shift 2
      ;;
    --luajit-only) luajit_only=1; shift ;;
    *) die_usage "unexpected argument '$1'" ;;
  esac
done
[ -n "$luajit_source" ] || die_usage "--luajit-source is required"
if [ $luajit_only = 0 ] && [ -z "$sysbench_source" ]; then die_usage "--sysbench-source is required (or --luajit-only)"; fi
[[ "$prefix" == /* ]] || die_usage "--prefix must be an absolute path, got '$prefix'"
if [ -n "$jobs" ] && ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then die_usage "--jobs must be a positive number, got '$jobs'"; fi
jobs=${jobs:-$(nproc 2>/dev/null || echo 2)}

own_work=0
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/aurora-bench-build.XXXXXX")
  own_work=1
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)
cleanup() { if [ $own_work = 1 ]; then rm -rf "$work"; fi; }
trap cleanup EXIT

# fetch SRC FILE: s3://, https:// or a local file.
fetch() {
  local src=$1 dest=$2
  case "$src" in
    s3://?*/?*) aws s3 cp --only-show-errors "$src" "$dest" || die "could not download $src" ;;
    https://?*) curl -fsSL --retry 5 --retry-delay 2 -o "$dest" "$src" || die "could not download $src" ;;
    s3://* | http://* | ftp://*) die "source $src: use s3://bucket/key, https://... or a local file" ;;
    *) [ -f "$src" ] || die "source $src is not a file"; cp "$src" "$dest" ;;
  esac
}

# unpack NAME SRC: prints the source tree's directory. Tarballs with one top directory (GitHub
# archives: LuaJIT-<commit>/, sysbench-1.0.20/) and without one (Debian .orig tarballs) both work.
unpack() {
  local name=$1 src=$2 dir="$work/$1"
  rm -rf "$dir" "$work/$name.tar"
  mkdir -p "$dir"
  fetch "$src" "$work/$name.tar"
  tar -xf "$work/$name.tar" -C "$dir" || die "$src is not a tarball tar can unpack"
  rm -f "$work/$name.tar"
  local entries=("$dir"/*)
  if [ ${#entries[@]} -eq 1 ] && [ -d "${entries[0]}" ]; then printf '%s\n' "${entries[0]}"; else printf '%s\n' "$dir"; fi
}

# ------------------------------------------------------------------ 1. LuaJIT
luajit_prefix="$prefix/luajit"
step "building LuaJIT from $luajit_source into $luajit_prefix ($jobs jobs)"
luajit_dir=$(unpack luajit "$luajit_source")
[ -f "$luajit_dir/src/lj_obj.h" ] || die "$luajit_source does not look like LuaJIT's source (no src/lj_obj.h)"
# The version string cannot tell a fixed 2.1 from an old one (2.1.0-beta3 stayed the name from 2017
# to 2023): look for the fix itself. LuaJIT e9af1abec542 added LJ_LIGHTUD_BITS_SEG to src/lj_obj.h.
grep -q 'define LJ_LIGHTUD_BITS_SEG' "$luajit_dir/src/lj_obj.h" ||
  die "$luajit_source predates LuaJIT's full-range 64 bit lightuserdata support (commit e9af1abec542, 2020), without which sysbench crashes on aarch64: use a current LuaJIT 2.1"
# PREFIX at build and install time: LuaJIT compiles its module search path from it.
make -C "$luajit_dir" -j "$jobs" PREFIX="$luajit_prefix" >"$work/luajit-build.log" 2>&1 ||
  die "LuaJIT build failed; last lines: $(tail -n 15 "$work/luajit-build.log")"
make -C "$luajit_dir" install PREFIX="$luajit_prefix" >"$work/luajit-install.log" 2>&1 ||
  die "LuaJIT install failed; last lines: $(tail -n 15 "$work/luajit-install.log")"
# Releases install bin/luajit; development snapshots only bin/luajit-<version>.
luajit_bin=""
for candidate in "$luajit_prefix/bin/luajit" "$luajit_prefix"/bin/luajit-*; do
  if [ -x "$candidate" ]; then luajit_bin=$candidate; break; fi
done
[ -n "$luajit_bin" ] || die "LuaJIT installed no interpreter in $luajit_prefix/bin"
luajit_include=$(find "$luajit_prefix/include" -mindepth 1 -maxdepth 1 -type d -name 'luajit-2.*' | head -n 1)
luajit_static="$luajit_prefix/lib/libluajit-5.1.a"
[ -n "$luajit_include" ] && [ -f "$luajit_include/luajit.h" ] || die "LuaJIT installed no headers under $luajit_prefix/include/luajit-2.*"
[ -f "$luajit_static" ] || die "LuaJIT installed no static library $luajit_static"

# Smoke test: the JIT is on for this CPU, FFI calls into libc work, a JIT-compiled loop allocates
# and collects a few MB (the allocator's addresses are what the old 47-bit limit tripped over), and
# several independent Lua states can be made, as sysbench makes one per thread.
luajit_report=$("$luajit_bin" -e '
  local ffi = require("ffi")
  ffi.cdef("size_t strlen(const char *s);")
  assert(jit.status(), "the JIT compiler is off on " .. jit.arch)
  assert(tonumber(ffi.C.strlen("aurora-bench")) == 12, "FFI call into libc gave a wrong answer")
  local keep = {}
  for i = 1, 200000 do
    local t = { i, tostring(i), ffi.new("char[?]", 32) }
    if i % 1000 == 0 then keep[#keep + 1] = t end
  end
  collectgarbage()
  assert(#keep == 200 and keep[200][1] == 200000, "tables made in a JIT-compiled loop were lost")
  io.write(jit.version, " ", jit.arch, " JIT on")
' 2>&1) || die "LuaJIT smoke test failed: $luajit_report"
case "$luajit_report" in
  "LuaJIT 2.1.0-beta2"*) die "$luajit_source is LuaJIT 2.1.0-beta2, the version that crashes on aarch64: use a current LuaJIT 2.1" ;;
  "LuaJIT 2.1"*) ;;
  *) die "$luajit_source is $luajit_report; sysbench 1.0.20 needs LuaJIT 2.1" ;;
esac
step "LuaJIT ok: $luajit_report ($luajit_bin)"
if [ $luajit_only = 1 ]; then
  step "--luajit-only: sysbench not built"
  exit 0
fi

# ------------------------------------------------------------------ 2. sysbench
step "building sysbench from $sysbench_source into $prefix against $luajit_report"
sysbench_dir=$(unpack sysbench "$sysbench_source")
[ -f "$sysbench_dir/configure.ac" ] || die "$sysbench_source does not look like sysbench's source (no configure.ac)"
if [ ! -x "$sysbench_dir/configure" ]; then
  (cd "$sysbench_dir" && ./autogen.sh) >"$work/sysbench-autogen.log" 2>&1 ||
    die "sysbench autogen.sh failed; last lines: $(tail -n 15 "$work/sysbench-autogen.log")"
fi
# --with-pgsql: the pgsql driver for the PostgreSQL engines (Aurora PostgreSQL, RDS for PostgreSQL);
# sysbench's m4/ac_check_pgsql.m4 finds libpq through pg_config (AL2023: libpq-devel). Without
# pg_config the build goes on without it: the MySQL engines need only the mysql driver.
pgsql_option=--without-pgsql
if command -v pg_config >/dev/null 2>&1; then pgsql_option=--with-pgsql; else echo "$PROG: pg_config not found: sysbench is built without its pgsql driver" >&2; fi
(cd "$sysbench_dir" && ./configure --prefix="$prefix" --with-mysql "$pgsql_option" --with-system-luajit \
  LUAJIT_CFLAGS="-I$luajit_include" LUAJIT_LIBS="$luajit_static") >"$work/sysbench-configure.log" 2>&1 ||
  die "sysbench configure failed; last lines: $(tail -n 15 "$work/sysbench-configure.log")"
make -C "$sysbench_dir" -j "$jobs" >"$work/sysbench-build.log" 2>&1 ||
  die "sysbench build failed; last lines: $(tail -n 15 "$work/sysbench-build.log")"
make -C "$sysbench_dir" install >"$work/sysbench-install.log" 2>&1 ||
  die "sysbench install failed; last lines: $(tail -n 15 "$work/sysbench-install.log")"

# ------------------------------------------------------------------ 3. sysbench smoke test
sysbench_bin="$prefix/bin/sysbench"
version_line=$("$sysbench_bin" --version 2>&1) || die "$sysbench_bin --version failed: $version_line"
[[ "$version_line" == "sysbench 1.0."* ]] || die "$sysbench_bin --version says '$version_line', not sysbench 1.0.x"
cpu_log=$(cd "$work" && "$sysbench_bin" cpu --time=1 run 2>&1) || die "sysbench cpu smoke run failed: $(tail -n 10 <<<"$cpu_log")"
banner=$(head -n 1 <<<"$cpu_log")
[[ "$banner" == *"system LuaJIT"* ]] || die "sysbench was not linked with the LuaJIT just built: '$banner'"
step "sysbench ok: $banner ($sysbench_bin)"
