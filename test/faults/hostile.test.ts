/**
 * Faults a hostile environment brings, through the built CLI on real MariaDB servers and the real
 * sysbench: a server that hangs (SIGSTOP) mid-step, Ctrl-C while it hangs, a lake that turns
 * read-only during a step or is read-only before it, a lake whose tables folder is a link to `/`, a
 * lake the user may not write, a run root that fills up during the prepare, and two runs at once.
 * For each: the run's final status in the lake, the rows kept, the exit code, the message, and that
 * nothing is left running.
 *
 * Mounting tmpfs (the read-only and full disks) and running a command as another user (nobody)
 * need root, as the rest of this layer does. Steps are short; a hang is detected by the server's
 * process state, not by waiting out a deadline, so each test takes seconds of steps, not minutes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { BASE_SPEC, CLI, FaultWorld, sleep } from '../helpers/fault-cli';

let world: FaultWorld;
const mounts: string[] = [];

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
beforeEach(() => {
  world = new FaultWorld();
});
afterEach(() => {
  world.tearDown();
  for (const m of mounts.splice(0)) execFileSync('umount', ['-l', m]);
  rmSync(world.work, { recursive: true, force: true });
});

/** The sysbench processes whose command line names a path under `dir` (the runner's --config-file is in its cell). */
function sysbenchPidsUnder(dir: string): number[] {
  try {
    return execFileSync('pgrep', ['-af', '^sysbench '], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(dir))
      .map((l) => Number(l.split(' ')[0]));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** A tmpfs at `dir` (this layer runs as root; without the privilege the test says so). */
function mountTmpfs(dir: string, options: string): void {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (e) {
    throw new Error(`this test mounts a tmpfs and needs the privilege to (root): ${(e as Error).message}`, {
      cause: e,
    });
  }
  mounts.push(dir);
}

/** A step on the writer, long enough to be interrupted (its deadline is 30 + 60 s). */
const writerStep = {
  ...BASE_SPEC,
  defaults: { ...BASE_SPEC.defaults, durationS: 30 },
  workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1], target: 'writer' }],
};

describe('a server that hangs', () => {
  it('kill -STOP on the writer mid-step: step fails in seconds naming it, teardown kills it, exit 1', async () => {
    // Arrange
    const run = world.background(['run', world.writeSpec('hung.json', writerStep)]);
    await run.waitFor(/ a-r1\] step 1\/1 rw-t1/);
    await sleep(1000);
    const servers = world.registeredServers();
    const writer = servers.find((s) => s.role === 'writer')!;
    // Act
    process.kill(writer.pid, 'SIGSTOP');
    const { code } = await run.exited;
    // Assert: the exit and the message name the server, not the step's deadline
    const { stdout } = run.output();
    const named = new RegExp(
      `the writer a-r1-w \\(pid ${writer.pid}, port ${writer.port}\\) is stopped \\(process state T, ` +
        `SIGSTOP\\) and answers nothing: the step was stopped`,
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(new RegExp(`FAILED[\\s\\S]*${named.source}`));
    expect(stdout).not.toMatch(/still running after \d+ s/);
    // Assert: the lake keeps the step, failed for that reason, and the run failed
    expect(world.lakeQuery('select step_id, status, error from steps')).toEqual([
      { step_id: 'rw-t1', status: 'failed', error: expect.stringMatching(named) as string },
    ]);
    expect(world.lakeQuery<{ status: string }>('select status from runs')).toEqual([{ status: 'failed' }]);
    // Assert: the stopped writer was killed with the rest
    expect(existsSync(`/proc/${writer.pid}`)).toBe(false);
    await world.expectNothingLeft(servers.map((s) => s.port));
  }, 240_000);

  it('the first Ctrl-C while the writer hangs wins in seconds, exit 130, step row kept, nothing left', async () => {
    // Arrange
    const run = world.background(['run', world.writeSpec('hung-int.json', writerStep)]);
    await run.waitFor(/ a-r1\] step 1\/1 rw-t1/);
    await sleep(1000);
    const servers = world.registeredServers();
    process.kill(servers.find((s) => s.role === 'writer')!.pid, 'SIGSTOP');
    // Act: one Ctrl-C, before the hang is detected
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    // Assert
    const { stdout, stderr } = run.output();
    expect(code).toBe(130);
    expect(stderr).not.toMatch(/forced exit/);
    expect(stdout).toMatch(
      /\[a-r1\] step rw-t1 recorded as failed: interrupted by the user \(Ctrl-C, SIGINT\) while the step ran/,
    );
    expect(world.lakeQuery('select step_id, status, error from steps')).toEqual([
      { step_id: 'rw-t1', status: 'failed', error: 'interrupted by the user (Ctrl-C, SIGINT) while the step ran' },
    ]);
    expect(world.lakeQuery<{ status: string }>('select status from runs')).toEqual([{ status: 'aborted' }]);
    await world.expectNothingLeft(servers.map((s) => s.port));
  }, 240_000);
});

describe('a sysbench that hangs', () => {
  it('kill -STOP on sysbench: stopped at the step deadline, step failed saying so despite result.json', async () => {
    // Arrange: a 1-s step, so its deadline is the minimum (1 + 60 s, core/plan/step-looks.ts jobDeadlineS)
    const run = world.background([
      'run',
      world.writeSpec('sysbench-hung.json', { ...BASE_SPEC, defaults: { ...BASE_SPEC.defaults, durationS: 1 } }),
    ]);
    await run.waitFor(/ a-r1\] step 1\/1 ro-t1/);
    const servers = world.registeredServers();
    let sysbench: number | undefined;
    for (let i = 0; i < 100 && sysbench === undefined; i++) {
      sysbench = sysbenchPidsUnder(world.work)[0];
      if (sysbench === undefined) await sleep(50);
    }
    if (sysbench === undefined) throw new Error(`no sysbench of the run found under ${world.work}`);
    // Act
    process.kill(sysbench, 'SIGSTOP');
    const { code } = await run.exited;
    // Assert
    expect(code).toBe(1);
    const [step] = world.lakeQuery<{ status: string; error: string }>('select status, error from steps');
    expect(step).toEqual({
      status: 'failed',
      error: expect.stringMatching(/^still running after 61 s: stopped( \(.+\))?$/) as string,
    });
    expect(world.lakeQuery<{ status: string }>('select status from runs')).toEqual([{ status: 'failed' }]);
    await world.expectNothingLeft(servers.map((s) => s.port));
  }, 300_000);
});

/**
 * remount,ro fails with "mount point is busy" (EBUSY) while a file on it is open for writing
 * (mount(8), remount); the run writes its lake in short bursts, so the remount is tried again.
 */
async function remountReadOnly(dir: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync('mount', ['-o', 'remount,ro', dir], { stdio: 'pipe' });
      return;
    } catch (e) {
      if (attempt >= 100) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('a lake that cannot be written', () => {
  it('turns read-only during a step: the run stops naming it; cleanup records the end once writable', async () => {
    // Arrange
    mountTmpfs(world.lake, 'size=16m');
    const run = world.background([
      'run',
      world.writeSpec('ro.json', { ...BASE_SPEC, defaults: { ...BASE_SPEC.defaults, durationS: 4 } }),
    ]);
    await run.waitFor(/ a-r1\] step 1\/1 ro-t1/);
    const ports = world.registeredServers().map((s) => s.port);
    // Act
    await remountReadOnly(world.lake);
    const { code } = await run.exited;
    // Assert: exit 1, the lake named read-only, nothing running, the claim kept for cleanup
    const { stdout, stderr } = run.output();
    expect(code).toBe(1);
    expect(stdout + stderr).toMatch(new RegExp(`the results lake file://${world.lake}/? is read-only \\(EROFS`));
    expect(world.registeredServers()).toEqual([]);
    const claims = readdirSync(world.runRoot);
    // The run directory keeps its end record beside the marker that proves aurora-bench made it.
    expect(claims.map((d) => readdirSync(join(world.runRoot, d)).sort())).toEqual([['.aurora-bench-run', 'run.json']]);
    expect(JSON.parse(readFileSync(join(world.runRoot, claims[0]!, 'run.json'), 'utf8'))).toMatchObject({
      endReason: expect.stringMatching(/is read-only \(EROFS/) as string,
    });
    // Act: cleanup while the lake is still read-only keeps the claim and says so
    const early = world.cli(['cleanup']);
    // Assert: exit 75, the last line naming the run kept and why
    expect(early.code).toBe(75);
    expect(early.stdout).toMatch(
      new RegExp(
        /still marked running: the lake refused the write, so their claims are kept for the next/.source +
          / cleanup: faults-\S+ \(.*read-only/.source,
      ),
    );
    expect(early.stdout.trim().split('\n').at(-1)).toMatch(
      new RegExp(
        /^not settled, kept for a later cleanup \(exit 75\): faults-\S+: the lake refused to record/.source +
          / its end \(.*is read-only \(EROFS/.source,
      ),
    );
    expect(readdirSync(world.runRoot)).toEqual(claims);
    // Act: writable again, cleanup records the end
    execFileSync('mount', ['-o', 'remount,rw', world.lake]);
    const cleanup = world.cli(['cleanup']);
    // Assert
    expect(cleanup.code).toBe(0);
    expect(cleanup.stdout).toMatch(/recorded as aborted in the lake \(they were still marked running\): faults-/);
    expect(world.lakeQuery<{ status: string; error: string }>('select status, error from runs')).toEqual([
      {
        status: 'aborted',
        error: expect.stringMatching(/is read-only \(EROFS.*recorded by `aurora-bench cleanup`$/) as string,
      },
    ]);
    expect(world.cli(['results']).stdout).not.toMatch(/warning: run/);
    await world.expectNothingLeft(ports);
  }, 240_000);

  it('read-only before the run: refused saying "read-only" before anything starts', async () => {
    // Arrange
    mountTmpfs(world.lake, 'size=1m,ro');
    // Act
    const r = world.cli(['run', world.writeSpec('ro-before.json', BASE_SPEC)]);
    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^aurora-bench: the results lake file://${world.lake}/? is read-only \\(EROFS: a read-only file system\\)`,
        'm',
      ),
    );
    expect(r.stderr).not.toMatch(/ENOENT|\n\s+at /);
    await world.expectNothingLeft([]);
  });

  it('import into a lake the user may not write: a clear message, no stack trace, nothing written', () => {
    // Arrange: a lake of root's, the logs readable by all, the CLI run as nobody
    mkdirSync(world.lake, { recursive: true });
    const logs = join(world.work, 'logs');
    mkdirSync(logs);
    writeFileSync(
      join(logs, 'r5.log'),
      readFileSync(join(__dirname, '..', 'fixtures', 'sysbench', 'versions', 'v1_0_pgsql_read_write.log')),
    );
    chmodSync(world.work, 0o755);
    // Act
    const r = world.cli(['import', logs, '--experiment', 'imported', '--variant', 'r5', '--workload', 'rw'], {
      prefix: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'],
    });
    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^aurora-bench: the results lake file://${world.lake}/? is not writable by you \\(EACCES: permission ` +
          `denied\\) writing \\S+`,
        'm',
      ),
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readdirSync(world.lake)).toEqual([]);
  });

  it('<lake>/tables as a link to /: every lake read is refused, naming the link; nothing outside is read', () => {
    // Arrange
    mkdirSync(world.lake, { recursive: true });
    symlinkSync('/', join(world.lake, 'tables'));
    // Act
    const r = world.cli(['results', '--json', '--sql', "select content from read_text('/etc/shadow')"]);
    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `the lake's tables folder ${join(world.lake, 'tables')} is not a directory (a symbolic link to /)`,
    );
    expect(r.stdout).toBe('');
    expect(r.stdout + r.stderr).not.toMatch(/root:/);
  });
});

describe('a run root that fills up during the prepare', () => {
  it('the cell fails with a short reason in the lake and a short message; nothing is left', async () => {
    // Arrange: the run root on a tmpfs private to this user, filled up while the prepare runs
    mountTmpfs(world.runRoot, 'size=600m,mode=0700');
    // Rows the plan's disk check lets through (two copies of about 0.2 GiB each), so the filler is what ends it.
    const spec = { ...BASE_SPEC, data: { tables: 1, tableSize: 400_000, prepareThreads: 1 } };
    const run = world.background(['run', world.writeSpec('full-root.json', spec)]);
    await run.waitFor(/ a-r1\] preparing/);
    const ports = world.registeredServers().map((s) => s.port);
    // Act
    // dd writes until ENOSPC (and then exits 1): the filler takes what was left.
    spawnSync('dd', ['if=/dev/zero', `of=${join(world.runRoot, 'filler')}`, 'bs=1M', 'count=600'], { stdio: 'ignore' });
    const { code } = await run.exited;
    rmSync(join(world.runRoot, 'filler'), { force: true });
    // Assert: a short message, a short reason in the lake
    const { stdout, stderr } = run.output();
    expect(code).toBe(1);
    expect(stdout).toMatch(/FAILED/);
    expect((stdout + stderr).length).toBeLessThan(8_000);
    const [runRow] = world.lakeQuery<{ status: string; error: string }>('select status, error from runs');
    expect(runRow!.status).toBe('failed');
    expect(runRow!.error.length).toBeLessThan(1_500);
    expect(runRow!.error).toMatch(/prepare .*failed/);
    expect(runRow!.error).not.toMatch(/VALUES\([^)]*\),\s*\(/);
    await world.expectNothingLeft(ports);
  }, 300_000);
});

describe('two runs at once on one machine', () => {
  it('both succeed, and each says in its output and its manifest that the other shared the host', async () => {
    // Arrange
    // The runs overlap from their start (both are started at once), whatever their steps' length.
    const spec = world.writeSpec('together.json', { ...BASE_SPEC, defaults: { ...BASE_SPEC.defaults, durationS: 1 } });
    // Act
    const a = world.background(['run', spec, '--run-id', 'together-a']);
    const b = world.background(['run', spec, '--run-id', 'together-b']);
    const [ea, eb] = await Promise.all([a.exited, b.exited]);
    // Assert: on a failure, the end of what each printed says why
    const ending = (r: typeof a, code: number | null) =>
      code === 0 ? '' : (r.output().stdout + r.output().stderr).split('\n').slice(-12).join('\n');
    expect([ea.code, eb.code, ending(a, ea.code), ending(b, eb.code)]).toEqual([0, 0, '', '']);
    for (const [run, other, self] of [
      [a, 'together-b', 'together-a'],
      [b, 'together-a', 'together-b'],
    ] as const) {
      expect(run.output().stdout).toMatch(
        new RegExp(`^warning: run ${self} shared \\S+ with .*${other} \\(pid \\d+, `, 'm'),
      );
    }
    const rows = world.lakeQuery<{ run_id: string; notes: string }>('select run_id, notes from runs order by run_id');
    // Assert: both runs and their steps are kept as they ended
    expect(rows.map((r) => r.run_id)).toEqual(['together-a', 'together-b']);
    expect(world.lakeQuery('select run_id, status from runs order by run_id')).toEqual([
      { run_id: 'together-a', status: 'succeeded' },
      { run_id: 'together-b', status: 'succeeded' },
    ]);
    expect(world.lakeQuery('select run_id, status from steps order by run_id')).toEqual([
      { run_id: 'together-a', status: 'ok' },
      { run_id: 'together-b', status: 'ok' },
    ]);
    for (const row of rows) {
      const other = row.run_id === 'together-a' ? 'together-b' : 'together-a';
      const notes = JSON.parse(row.notes) as { level: string; path: string; message: string }[];
      expect(notes.filter((n) => n.path === 'host')).toEqual([
        { level: 'warning', path: 'host', message: expect.stringContaining(`${other} (pid `) as string },
      ]);
    }
    // The report prints the manifest's notes.
    expect(world.cli(['report', 'together-a']).stdout).toMatch(/Co-tenant load: run together-a shared .*together-b/);
    await world.expectNothingLeft([]);
  }, 300_000);
});
