/**
 * `cleanup` removes only what it can prove is a run directory aurora-bench made, whatever the run
 * root is: here the run root is ./.aurora-bench, which also holds the default lake
 * (./.aurora-bench/lake) and a folder of the user's. Through the built CLI, on real MariaDB servers
 * and the real sysbench for the run it must still clean up after a kill -9.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_SPEC, CLI, FaultWorld } from '../helpers/fault-cli';
import { serverProcessesUnder } from '../helpers/server-processes';
import { DT, runRow, writeRun } from '../helpers/lake-fixtures';

let world: FaultWorld;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
beforeEach(() => {
  world = new FaultWorld('ab-cleanup-proof-', { runRoot: '.aurora-bench', lake: join('.aurora-bench', 'lake') });
  mkdirSync(world.runRoot, { mode: 0o700 });
});
afterEach(() => {
  world.tearDown();
  rmSync(world.work, { recursive: true, force: true });
});

/** Makes a path two minutes old: older than any grace cleanup gives a directory being created. */
const age = (path: string) => {
  const past = new Date(Date.now() - 120_000);
  utimesSync(path, past, past);
};

/** A folder of the user's in the run root, with a file in it, two minutes old. */
function userFolder(name: string): string {
  const dir = join(world.runRoot, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'notes.txt'), 'mine\n');
  age(dir);
  return dir;
}

/** A directory with a registry whose owner is gone, as an older aurora-bench (no marker) or a planter leaves it. */
function unmarkedRun(name: string): string {
  const dir = join(world.runRoot, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'resources.json'),
    JSON.stringify({ runId: name, ownerPid: 999_999_999, ownerStartTime: null, cells: {}, updatedAt: '' }),
  );
  age(dir);
  return dir;
}

describe('cleanup with a run root that holds the lake and the user’s folders', () => {
  it('keeps the lake, a user’s folder and an unmarked run, naming the run; a linked marker is not trusted', () => {
    // Arrange
    writeRun(world.lake, runRow({ run_id: 'earlier', status: 'succeeded' }));
    age(world.lake);
    const mine = userFolder('mine');
    const older = unmarkedRun('older-run');
    const linked = userFolder('linked');
    mkdirSync(join(world.runRoot, 'marked-elsewhere'));
    writeFileSync(join(world.runRoot, 'marked-elsewhere', '.aurora-bench-run'), '{"madeBy":"aurora-bench"}\n');
    symlinkSync(join(world.runRoot, 'marked-elsewhere', '.aurora-bench-run'), join(linked, '.aurora-bench-run'));
    age(linked);
    // Act
    const cleanup = world.cli(['cleanup']);
    // Assert
    expect(cleanup.code).toBe(0);
    expect(cleanup.stdout.split('\n')[0]).toBe('nothing removed');
    expect(cleanup.stdout).toContain(`not proven to be run directories (no aurora-bench run marker`);
    expect(cleanup.stdout).toContain(older);
    expect(cleanup.stdout).not.toMatch(/\/(lake|mine|linked)\b/);
    expect(readFileSync(join(mine, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(linked, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(join(older, 'resources.json'))).toBe(true);
    expect(world.lakeQuery<{ run_id: string }>('select run_id from runs')).toEqual([{ run_id: 'earlier' }]);
  });

  it('a run killed with kill -9 is still cleaned up and settled; the lake and the user’s folder stay', async () => {
    // Arrange: an earlier run in the lake, a user's folder, then a run killed mid-step
    writeRun(world.lake, runRow({ run_id: 'earlier', status: 'succeeded', dt: DT }));
    const mine = userFolder('mine');
    const spec = { ...BASE_SPEC, defaults: { ...BASE_SPEC.defaults, durationS: 30 } };
    const run = world.background(['run', world.writeSpec('killed.json', spec)]);
    await run.waitFor(/ a-r1\] step 1\/1 ro-t1/);
    const runDirs = readdirSync(world.runRoot).filter((d) => d.startsWith('faults-'));
    run.child.kill('SIGKILL');
    await run.exited;
    age(world.lake);
    // Act
    const cleanup = world.cli(['cleanup']);
    // Assert: the run is gone and settled
    expect(cleanup.code).toBe(0);
    expect(runDirs).toHaveLength(1);
    expect(cleanup.stdout).toContain(`${runDirs[0]!}: ${join(world.runRoot, runDirs[0]!)}`);
    expect(cleanup.stdout).toMatch(/recorded as aborted in the lake \(they were still marked running\): faults-/);
    expect(serverProcessesUnder('mariadbd', world.work)).toEqual([]);
    expect(readdirSync(world.runRoot).sort()).toEqual(['lake', 'mine']);
    // Assert: the lake and the user's folder are intact
    expect(readFileSync(join(mine, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(
      world.lakeQuery<{ run_id: string; status: string }>('select run_id, status from runs order by run_id'),
    ).toEqual([
      { run_id: 'earlier', status: 'succeeded' },
      { run_id: runDirs[0]!, status: 'aborted' },
    ]);
  }, 180_000);

  it('a run id naming a folder that is not a run’s is refused, and the folder stays', () => {
    // Arrange
    const mine = userFolder('mine');
    // Act
    const r = world.cli(['run', '--run-id', 'mine', world.writeSpec('mine.json', BASE_SPEC)]);
    world.cli(['cleanup']);
    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`run id "mine" names ${mine}, which is not a run directory this aurora-bench made`);
    expect(readFileSync(join(mine, 'notes.txt'), 'utf8')).toBe('mine\n');
  });
});
