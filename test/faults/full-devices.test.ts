/**
 * Full devices through the built CLI: a run root too small for a server's datadir copy, and a report
 * written onto a full disk. Each says so in one line, with no stack; the run row keeps a one-line
 * reason and nothing is left running. Mounts a tmpfs, so it runs as root as the rest of this layer does.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_SPEC, CLI, FaultWorld, REPO } from '../helpers/fault-cli';

let world: FaultWorld;
const mounts: string[] = [];

/** A tmpfs of `size` at `dir`, unmounted after the test. */
function mountTmpfs(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=700`, 'tmpfs', dir], { stdio: 'pipe' });
  mounts.push(dir);
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
beforeEach(() => {
  world = new FaultWorld('ab-faults-full-');
});
afterEach(() => {
  world.tearDown();
  for (const m of mounts.splice(0)) execFileSync('umount', ['-l', m]);
  rmSync(world.work, { recursive: true, force: true });
});

describe('a run root too small for the datadir copy', () => {
  it('fails the run in one line, and the run row keeps that one line', async () => {
    // Arrange: a server template is tens of MB; the run root holds 2 MiB
    mountTmpfs(world.runRoot, '2m');
    const spec = world.writeSpec('small-root.json', BASE_SPEC);

    // Act
    const r = world.cli(['run', spec, '--run-id', 'small-root-1']);

    // Assert: a short output and a one-line reason in the run row, then what they say
    expect(r.code).toBe(1);
    const out = r.stdout + r.stderr;
    expect(out.length).toBeLessThan(4_000);
    expect(out).not.toMatch(/^\s+at /m);
    const [row] = world.lakeQuery<{ status: string; error: string }>('select status, error from runs');
    expect(row!.status).toBe('failed');
    expect(row!.error).not.toMatch(/\n/);
    expect(row!.error.length).toBeLessThan(500);
    expect(row!.error).toMatch(/no space left on device copying the server template to \S+: \d+ MB needed/);
    expect(out).toMatch(/^\[1\/1 a-r1\] ProvisionCell failed: DatadirCopyError: no space left on device copying /m);
    await world.expectNothingLeft([]);
  }, 120_000);
});

describe('report --html onto a full disk', () => {
  it('fails in one line without a stack, exit 1, and leaves no file there', () => {
    // Arrange: a run imported from a recorded sysbench output; a tmpfs filled to its last byte
    mkdirSync(join(world.work, 'logs'));
    copyFileSync(
      join(REPO, 'test', 'fixtures', 'sysbench', 'versions', 'v1_1_mysql_read_write.log'),
      join(world.work, 'logs', 'a.log'),
    );
    const imported = world.cli([
      'import',
      join(world.work, 'logs'),
      ...['--experiment', 'full', '--variant', 'a', '--workload', 'rw', '--instance-class', 'db.r5.large'],
      ...['--run-id', 'full-1'],
    ]);
    const disk = join(world.work, 'disk');
    mountTmpfs(disk, '256k');
    // dd writes until ENOSPC (and then exits 1): the filler takes what was left.
    spawnSync('dd', ['if=/dev/zero', `of=${join(disk, 'filler')}`, 'bs=4k'], { stdio: 'ignore' });

    // Act
    const r = world.cli(['report', 'full-1', '--html', join(disk, 'report.html')]);

    // Assert
    expect(imported.code).toBe(0);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/report\.html: cannot write it: no space left on device \(ENOSPC\)/),
    ]);
    expect(r.stdout + r.stderr).not.toMatch(/^\s+at /m);
    expect(readdirSync(disk)).toEqual(['filler']);
  });
});
