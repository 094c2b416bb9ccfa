/**
 * client/install-sysbench.sh, the build the client user data runs, on this machine.
 *
 * What this covers: the LuaJIT half for real. LuaJIT's source comes from Debian's source package
 * (`apt-get source --download-only luajit` through a private deb-src list made from this machine's
 * apt sources, test/helpers/debian-source.ts): its upstream .orig tarball is a 2022 snapshot of
 * LuaJIT's v2.1 branch, so it carries the 64-bit lightuserdata fix sysbench needs on arm64. The
 * script unpacks, builds and installs it and runs its smoke test; then a C program is built with
 * exactly the LUAJIT_CFLAGS / LUAJIT_LIBS the script hands to sysbench's configure (plus the -ldl
 * and -rdynamic sysbench 1.0.20's m4/sb_luajit.m4 adds on Linux) and runs Lua that calls back into
 * the program through FFI, which is how sysbench's Lua code reaches its C functions.
 *
 * What it cannot cover: the sysbench half (autogen, configure --with-system-luajit, make, the
 * sysbench smoke test). This machine reaches package registries only, and none serves the sysbench
 * 1.0.20 release source (Debian's mirror here answers 404 for the sysbench source package). That
 * half is the same autotools build Debian runs for its sysbench 1.0.20 package against its own
 * LuaJIT (Build-Depends libluajit2-5.1-dev, --with-system-luajit); on AWS it runs in every client's
 * user data, and a client whose build fails reports it through its ready marker. Nor does x86_64
 * show the aarch64 crash itself: the script checks the LuaJIT source for the fix instead.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { downloadDebianSource, type DebianSourceDownload } from '../helpers/debian-source';

const SCRIPT = join(__dirname, '..', '..', 'client', 'install-sysbench.sh');

function runScript(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe("client/install-sysbench.sh: LuaJIT from Debian's source package, built and linked as sysbench would be", () => {
  let work: string;
  let source: DebianSourceDownload;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'install-sysbench-test-'));
    source = downloadDebianSource('luajit', join(work, 'source'));
  }, 600_000);

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it('builds and installs LuaJIT, and its smoke test passes', async () => {
    // Arrange
    const prefix = join(work, 'home', 'sysbench');

    // Act
    const r = await runScript(['--luajit-source', source.origTarball, '--luajit-only', '--prefix', prefix, '--work', join(work, 'build')]);

    // Assert
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/install-sysbench\.sh: LuaJIT ok: LuaJIT 2\.1\S* \w+ JIT on \(/);
    expect(r.stdout).toContain('--luajit-only: sysbench not built');
    expect(existsSync(join(prefix, 'luajit', 'include', 'luajit-2.1', 'luajit.h'))).toBe(true);
    expect(existsSync(join(prefix, 'luajit', 'lib', 'libluajit-5.1.a'))).toBe(true);
    expect(existsSync(join(prefix, 'bin'))).toBe(false);
  }, 600_000);

  it("the installed static LuaJIT links into a program that Lua code calls back through FFI, as sysbench's does", () => {
    // Arrange: the flags install-sysbench.sh gives sysbench's configure, plus what sb_luajit.m4 adds on Linux.
    const luajit = join(work, 'home', 'sysbench', 'luajit');
    const program = join(work, 'embed');
    mkdirSync(program, { recursive: true });
    writeFileSync(
      join(program, 'embed.c'),
      [
        '#include <stdio.h>',
        '#include "lua.h"',
        '#include "lauxlib.h"',
        '#include "lualib.h"',
        "/* Exported by -rdynamic, found by ffi.C like sysbench's sb_rand_* functions. */",
        'int host_add(int a, int b) { return a + b; }',
        'int main(void) {',
        '  lua_State *L = luaL_newstate();',
        '  luaL_openlibs(L);',
        '  const char *code = "local ffi = require(\\"ffi\\") ffi.cdef(\\"int host_add(int, int);\\") ' +
          'local s = 0 for i = 1, 100000 do s = ffi.C.host_add(s, 1) end assert(s == 100000) print(jit.version .. \\" ok \\" .. s)";',
        '  if (luaL_dostring(L, code) != 0) { fprintf(stderr, "%s\\n", lua_tostring(L, -1)); return 1; }',
        '  lua_close(L);',
        '  return 0;',
        '}',
      ].join('\n'),
    );
    const cflags = `-I${join(luajit, 'include', 'luajit-2.1')}`;
    const libs = join(luajit, 'lib', 'libluajit-5.1.a');

    // Act
    execFileSync('cc', ['-O2', cflags, '-o', join(program, 'embed'), join(program, 'embed.c'), libs, '-ldl', '-lm', '-rdynamic'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = execFileSync(join(program, 'embed'), { encoding: 'utf8' });

    // Assert
    expect(out).toMatch(/^LuaJIT 2\.1\S* ok 100000\n$/);
    // Linked statically: the program needs no libluajit at run time.
    expect(execFileSync('ldd', [join(program, 'embed')], { encoding: 'utf8' })).not.toContain('libluajit');
  });

  it('refuses a LuaJIT source without the full-range 64-bit lightuserdata change, before building', async () => {
    // Arrange: the same tree with the change's marker taken out, as a pre-2020 LuaJIT 2.1 has it.
    const old = join(work, 'old-luajit');
    mkdirSync(old, { recursive: true });
    execFileSync('tar', ['-xf', source.origTarball, '-C', old]);
    const objH = join(old, 'src', 'lj_obj.h');
    writeFileSync(objH, readFileSync(objH, 'utf8').replace(/#define LJ_LIGHTUD_BITS_SEG.*\n/, ''));
    execFileSync('tar', ['-czf', join(work, 'old-luajit.tar.gz'), '-C', old, '.']);

    // Act
    const r = await runScript(['--luajit-source', join(work, 'old-luajit.tar.gz'), '--luajit-only', '--prefix', join(work, 'old-home'), '--work', join(work, 'old-build')]);

    // Assert
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("predates LuaJIT's full-range 64 bit lightuserdata support (commit e9af1abec542, 2020), without which sysbench crashes on aarch64");
    expect(existsSync(join(work, 'old-home', 'luajit'))).toBe(false);
  });

  it('says what is missing on bad usage', async () => {
    // Arrange
    cpSync(source.origTarball, join(work, 'luajit.tar.gz'));

    // Act
    const noSysbench = await runScript(['--luajit-source', join(work, 'luajit.tar.gz')]);
    const relative = await runScript(['--luajit-source', join(work, 'luajit.tar.gz'), '--luajit-only', '--prefix', 'opt/x']);
    const http = await runScript([
      '--luajit-source',
      'http://example.invalid/luajit.tar.gz',
      '--luajit-only',
      '--prefix',
      join(work, 'http-home'),
      '--work',
      join(work, 'http-build'),
    ]);

    // Assert
    expect([noSysbench.code, noSysbench.stderr.split('\n')[0]]).toEqual([2, 'install-sysbench.sh: --sysbench-source is required (or --luajit-only)']);
    expect([relative.code, relative.stderr.split('\n')[0]]).toEqual([2, "install-sysbench.sh: --prefix must be an absolute path, got 'opt/x'"]);
    expect([http.code, http.stderr.trim()]).toEqual([3, 'install-sysbench.sh: source http://example.invalid/luajit.tar.gz: use s3://bucket/key, https://... or a local file']);
  });
});
