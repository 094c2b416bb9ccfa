/**
 * Fault injection: the built CLI (dist/bin/aurora-bench.js) runs small experiments on real MariaDB
 * servers and the real sysbench while this suite injects faults with real signals, a killed server,
 * a full disk, a reused run id, a broken lake file and a planted registry. For each fault it asserts
 * the run's final status in the lake, the rows kept, that no mariadbd, port or run directory is
 * left, and the message the user sees.
 *
 * The full disk is a real one: a 3 MiB tmpfs mounted over the lake (this suite runs as root on the
 * project's machine; without the privilege to mount, that one test says so and fails). A file-size
 * limit (ulimit -f) was not used: it raises SIGXFSZ, which ends the process rather than failing the
 * write with ENOSPC.
 *
 * Kept lean for CI: one tiny table, 1-thread steps of a few seconds, one cell per run where the fault
 * allows; the whole file takes about 3 minutes on the 2-core development machine.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_SPEC, CLI, FaultWorld, sleep } from '../helpers/fault-cli';
import { serverProcessesUnder } from '../helpers/server-processes';

const base = BASE_SPEC;
/** Two cells in sequence, the first with a long step: a stop during it must not start the second. */
const twoCells = {
  ...base,
  variants: [...base.variants, { name: 'b', instanceClass: 'db.t3.medium', readers: 1 }],
  defaults: { ...base.defaults, durationS: 30 },
};

let world: FaultWorld;
let work: string;
let runRoot: string;
let lake: string;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
beforeEach(() => {
  world = new FaultWorld();
  ({ work, runRoot, lake } = world);
});
afterEach(() => {
  world.tearDown();
  rmSync(work, { recursive: true, force: true });
});

const cli = (args: string[]) => world.cli(args);
const writeSpec = (name: string, spec: object) => world.writeSpec(name, spec);
const background = (args: string[]) => world.background(args);
const registeredServers = () => world.registeredServers();
const expectNothingLeft = (ports: readonly number[]) => world.expectNothingLeft(ports);
const lakeQuery = <T>(sql: string): T[] => world.lakeQuery<T>(sql);
const mariadbdUnder = (dir: string): string[] => serverProcessesUnder('mariadbd', dir);

describe('faults injected into local runs', () => {
  it('SIGTERM during a step: nothing new starts, step and run recorded as stopped by SIGTERM, none left', async () => {
    // Arrange
    const run = background(['run', writeSpec('term.json', twoCells)]);
    await run.waitFor(/ a-r1\] step 1\/1 ro-t1/);
    await sleep(1500);
    const ports = registeredServers().map((s) => s.port);
    // Act
    run.child.kill('SIGTERM');
    const { code } = await run.exited;
    // Assert: the message
    const { stdout, stderr } = run.output();
    expect(code).toBe(143);
    expect(stderr).toMatch(/^SIGTERM: stopping the run: nothing new starts/m);
    expect(stdout).toMatch(/aborted \(stopped by SIGTERM .* during \w+ \(cell a-r1\)\); everything was torn down/);
    expect(stdout + stderr).not.toMatch(/Ctrl-C/);
    // Assert: nothing of cell b started after the stop
    expect(stdout).not.toMatch(/ b-r1\]/);
    // Assert: the lake
    expect(lakeQuery<{ status: string; error: string }>('select status, error from runs')).toEqual([
      {
        status: 'aborted',
        error: expect.stringMatching(/^stopped by SIGTERM .*; everything was torn down$/) as string,
      },
    ]);
    expect(lakeQuery('select cell_id, step_id, status, error from steps')).toEqual([
      {
        cell_id: 'a-r1',
        step_id: 'ro-t1',
        status: 'failed',
        error: expect.stringMatching(/^stopped by SIGTERM .* while the step ran$/) as string,
      },
    ]);
    // An aborted run has ended too: its step rows are compacted to Parquet (core/cli/run-local.ts).
    expect(
      readdirSync(join(lake, 'tables', 'steps'), { recursive: true, encoding: 'utf8' }).filter((f) =>
        /\.(jsonl|parquet)$/.test(f),
      ),
    ).toEqual([expect.stringMatching(/^dt=[\d-]+\/faults-\S+\.parquet$/) as string]);
    expect(ports.length).toBe(2);
    await expectNothingLeft(ports);
  }, 180_000);

  it('the terminal closed mid-step (SIGHUP): torn down and recorded as SIGTERM is, exit 129, none left', async () => {
    // Act
    const { output, code } = world.inClosedTerminal(
      ['run', writeSpec('hup.json', twoCells)],
      / a-r1\] step 1\/1 ro-t1/,
      1500,
    );
    // Assert: 128 + SIGHUP's number, the run and its step stopped by SIGHUP, nothing of cell b, nothing left
    expect({ code, output: output.slice(-300) }).toEqual({ code: 129, output: expect.any(String) as string });
    expect(output).not.toMatch(/ b-r1\]/);
    expect(lakeQuery<{ status: string; error: string }>('select status, error from runs')).toEqual([
      { status: 'aborted', error: expect.stringMatching(/^stopped by SIGHUP .*; everything was torn down$/) as string },
    ]);
    expect(lakeQuery('select step_id, status, error from steps')).toEqual([
      {
        step_id: 'ro-t1',
        status: 'failed',
        error: expect.stringMatching(/^stopped by SIGHUP .* while the step ran$/) as string,
      },
    ]);
    await expectNothingLeft([]);
  }, 180_000);

  it('SIGTERM while a cell is being provisioned: the provisioning in flight is waited for and torn down', async () => {
    // Arrange
    const run = background(['run', writeSpec('term-provision.json', twoCells)]);
    await run.waitFor(/ a-r1\] provisioning/);
    // Act
    run.child.kill('SIGTERM');
    const { code } = await run.exited;
    // Assert
    const { stdout } = run.output();
    expect(code).toBe(143);
    expect(stdout).toMatch(/aborted \(stopped by SIGTERM .*\); everything was torn down/);
    expect(stdout).not.toMatch(/ b-r1\]/);
    expect(lakeQuery<{ status: string }>('select status from runs')).toEqual([{ status: 'aborted' }]);
    await expectNothingLeft([]);
  }, 180_000);

  it('kill -9 mid-step: results and report say the owner is gone; cleanup aborts the run, leaves nothing', async () => {
    // Arrange
    const run = background(['run', writeSpec('killed.json', twoCells)]);
    await run.waitFor(/ a-r1\] step 1\/1 ro-t1/);
    const ports = registeredServers().map((s) => s.port);
    run.child.kill('SIGKILL');
    await run.exited;
    // Act
    const results = cli(['results']);
    const report = cli(['report']);
    const cleanup = cli(['cleanup']);
    // Assert: before cleanup the status is shown for what it is
    expect(results.stdout).toMatch(
      /^warning: run faults-\S+ is marked running, but its aurora-bench \(pid \d+\) is gone/,
    );
    expect(report.stdout).toMatch(
      /^warning: run faults-\S+ is marked running, but its aurora-bench \(pid \d+\) is gone/,
    );
    // Assert: cleanup settles it
    expect(cleanup.code).toBe(0);
    expect(cleanup.stdout).toMatch(/recorded as aborted in the lake \(they were still marked running\): faults-/);
    expect(lakeQuery<{ status: string; error: string }>('select status, error from runs')).toEqual([
      {
        status: 'aborted',
        error: expect.stringMatching(/ended without finishing the run .*settled by `aurora-bench cleanup`/) as string,
      },
    ]);
    expect(cli(['results']).stdout).not.toMatch(/warning: run/);
    await expectNothingLeft(ports);
  }, 180_000);

  it('a double Ctrl-C forces the exit; cleanup then settles the run and removes everything', async () => {
    // Arrange
    const run = background(['run', writeSpec('double.json', twoCells)]);
    await run.waitFor(/ a-r1\] step 1\/1 ro-t1/);
    const ports = registeredServers().map((s) => s.port);
    // Act
    run.child.kill('SIGINT');
    await sleep(50);
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    const cleanup = cli(['cleanup']);
    // Assert
    expect(code).toBe(130);
    expect(run.output().stderr).toMatch(/forced exit: run `aurora-bench cleanup`/);
    expect(cleanup.code).toBe(0);
    expect(lakeQuery<{ status: string }>('select status from runs')).toEqual([{ status: 'aborted' }]);
    await expectNothingLeft(ports);
  }, 180_000);

  it('run ids: an existing or live one is refused; a bad lake file is named, other runs served', async () => {
    // Arrange: a finished run with a fixed id
    const spec = writeSpec('ids.json', base);
    expect(cli(['run', spec, '--run-id', 'fixed-1']).code).toBe(0);
    // A run's step rows are compacted to Parquet once it has
    // ended (core/lake/compact.ts); its run row stays JSON Lines.
    const fileOf = (table: string, runId: string, ext: string) =>
      readdirSync(join(lake, 'tables', table), { recursive: true, encoding: 'utf8' }).find(
        (f) => f.includes(runId) && f.endsWith(ext),
      )!;
    const stepFile = fileOf('steps', 'fixed-1', '.parquet');
    const before = readFileSync(join(lake, 'tables', 'steps', stepFile));
    // Act: the same id again
    const again = cli(['run', spec, '--run-id', 'fixed-1']);
    // Assert
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/run id "fixed-1" already has results in file:\/\/.*: choose another --run-id/);
    expect(readFileSync(join(lake, 'tables', 'steps', stepFile)).equals(before)).toBe(true);
    expect(lakeQuery('select run_id, status from runs')).toEqual([{ run_id: 'fixed-1', status: 'succeeded' }]);

    // Arrange: a live run with another id
    const live = background([
      'run',
      writeSpec('live.json', { ...base, defaults: { ...base.defaults, durationS: 30 } }),
      '--run-id',
      'live-1',
    ]);
    await live.waitFor(/ a-r1\] step 1\/1 ro-t1/);
    const servers = registeredServers();
    // Act: a second run with the live id
    const clash = cli(['run', spec, '--run-id', 'live-1']);
    // Assert: refused, and the live run's servers untouched
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(
      /run id "live-1" is in use by a running aurora-bench \(pid \d+\): choose another --run-id/,
    );
    expect(servers.map((s) => existsSync(`/proc/${s.pid}`))).toEqual([true, true]);
    // Act: cleanup while it runs
    const during = cli(['cleanup']);
    // Assert: the live run is left alone and said to be kept, exit 75 (not 0: not everything is settled)
    expect(during.code).toBe(75);
    expect(during.stdout.trim().split('\n')).toEqual([
      'nothing removed',
      'left alone (their aurora-bench is still running): live-1',
      'not settled, kept for a later cleanup (exit 75): live-1: its aurora-bench is still running',
    ]);
    expect(servers.map((s) => existsSync(`/proc/${s.pid}`))).toEqual([true, true]);
    live.child.kill('SIGINT');
    expect((await live.exited).code).toBe(130);
    expect(cli(['cleanup'])).toMatchObject({ code: 0, stdout: 'nothing left behind by a finished aurora-bench\n' });

    // Act: the aborted run's row (JSON Lines) truncated mid-line
    const badFile = join(lake, 'tables', 'runs', fileOf('runs', 'live-1', '.jsonl'));
    const text = readFileSync(badFile, 'utf8');
    writeFileSync(badFile, text.slice(0, Math.floor(text.length / 2)));
    const results = cli(['results', '--run', 'fixed-1']);
    const report = cli(['report', 'fixed-1']);
    // Assert: the other run is served, the bad file named
    expect(results.code).toBe(0);
    expect(results.stdout).toMatch(/^Run fixed-1 /m);
    expect(results.stdout).toContain(`warning: lake file ${badFile} left out (Malformed JSON`);
    expect(report.code).toBe(0);
    expect(report.stdout).toContain(`warning: lake file ${badFile} left out`);
    await expectNothingLeft(servers.map((s) => s.port));
  }, 240_000);

  it('full disk under the lake: ENOSPC names it, the run stops, earlier runs intact, cleanup records end', async () => {
    // Arrange: the lake on a 3 MiB tmpfs, an earlier run already in it
    mkdirSync(lake, { recursive: true });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', lake], { stdio: 'pipe' });
    } catch (e) {
      throw new Error(
        `this test mounts a 3 MiB tmpfs as the full disk and needs the privilege to (root): ${(e as Error).message}`,
        { cause: e },
      );
    }
    try {
      const earlier = join(lake, 'tables', 'runs', 'dt=2024-05-01');
      mkdirSync(earlier, { recursive: true });
      const earlierRow =
        JSON.stringify({
          run_id: 'earlier',
          spec_name: 'faults',
          status: 'succeeded',
          started_at: '2024-05-01T09:00:00.000Z',
        }) + '\n';
      writeFileSync(join(earlier, 'earlier.jsonl'), earlierRow);
      const run = background([
        'run',
        writeSpec('full.json', { ...twoCells, defaults: { ...base.defaults, durationS: 4 } }),
      ]);
      await run.waitFor(/ a-r1\] step 1\/1 ro-t1/);
      const ports = registeredServers().map((s) => s.port);
      // Act: the disk fills up while the step runs
      const filler = join(lake, 'filler');
      try {
        writeFileSync(filler, Buffer.alloc(4 * 1024 * 1024));
      } catch {
        // ENOSPC: the filler took what was left
      }
      const { code } = await run.exited;
      // Assert: the message names the lake and ENOSPC; the second cell never started
      const { stdout, stderr } = run.output();
      expect(code).toBe(1);
      expect(stdout + stderr).toMatch(new RegExp(`the results lake file://${lake}/? has no room \\(ENOSPC\\)`));
      expect(stdout).not.toMatch(/ b-r1\]/);
      expect(readFileSync(join(earlier, 'earlier.jsonl'), 'utf8')).toBe(earlierRow);
      expect(mariadbdUnder(work)).toEqual([]);
      // The run row could not be rewritten: only the run's claim is left, for cleanup to record the end.
      const left = readdirSync(runRoot);
      expect(left.map((d) => readdirSync(join(runRoot, d)).sort())).toEqual([['.aurora-bench-run', 'run.json']]);
      // Act: room again, then cleanup records how the run ended
      rmSync(filler, { force: true });
      const cleanup = cli(['cleanup']);
      // Assert
      expect(cleanup.code).toBe(0);
      await expectNothingLeft(ports);
      const runs = lakeQuery<{ run_id: string; status: string; error: string | null }>(
        "select run_id, status, error from runs where run_id <> 'earlier'",
      );
      expect(runs).toEqual([
        {
          run_id: expect.stringMatching(/^faults-/) as string,
          status: expect.stringMatching(/^(failed|aborted)$/) as string,
          error: expect.stringMatching(/has no room \(ENOSPC\)/) as string,
        },
      ]);
    } finally {
      execFileSync('umount', ['-l', lake]);
    }
  }, 180_000);

  it('writer killed during a reader step: the step fails for broken replication, everything torn down', async () => {
    // Arrange
    const run = background([
      'run',
      writeSpec('replication.json', { ...base, defaults: { ...base.defaults, durationS: 6 } }),
    ]);
    await run.waitFor(/ a-r1\] step 1\/1 ro-t1/);
    await sleep(1000);
    const servers = registeredServers();
    const writer = servers.find((s) => s.role === 'writer')!;
    // Act
    process.kill(writer.pid, 'SIGKILL');
    const { code } = await run.exited;
    // Assert
    expect(code).toBe(1);
    expect(lakeQuery('select step_id, status, error from steps')).toEqual([
      {
        step_id: 'ro-t1',
        status: 'failed',
        error: expect.stringMatching(/replication broke during the step: .*its writer .* is not running/) as string,
      },
    ]);
    expect(run.output().stdout).toMatch(/FAILED: .*replication broke during the step/);
    await expectNothingLeft(servers.map((s) => s.port));
  }, 180_000);

  it('cleanup touches only what it can prove it started, and refuses a run root others may write into', () => {
    // Arrange: a planted run whose registry names a process and a directory aurora-bench did not make
    mkdirSync(runRoot, { recursive: true, mode: 0o700 });
    chmodSync(runRoot, 0o700);
    const outside = join(work, 'precious');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep.txt'), 'keep\n');
    const bystander = spawn('sleep', ['300']);
    world.adopt(bystander);
    const planted = join(runRoot, 'planted');
    mkdirSync(planted);
    // Marked as a run directory: the registry in it is what is planted.
    writeFileSync(join(planted, '.aurora-bench-run'), JSON.stringify({ madeBy: 'aurora-bench', runId: 'planted' }));
    const server = {
      instanceId: 'w',
      role: 'writer',
      pid: bystander.pid,
      port: 1,
      dir: outside,
      defaultsFile: join(outside, 'my.cnf'),
      socket: join(outside, 's.sock'),
      errorLog: join(outside, 'e.log'),
    };
    writeFileSync(
      join(planted, 'resources.json'),
      JSON.stringify({
        runId: 'planted',
        ownerPid: 999_999_999,
        ownerStartTime: null,
        updatedAt: new Date().toISOString(),
        cells: {
          c: {
            cellId: 'c',
            clusterId: 'c',
            dir: outside,
            servers: [server],
            jobs: [{ jobId: 'j', pid: bystander.pid, marker: outside, startedAt: '' }],
            createdAt: '',
          },
        },
      }),
    );
    // Act
    const cleanup = cli(['cleanup']);
    // Assert: the planted run directory is gone; the bystander process and the outside directory are not
    expect(cleanup.code).toBe(0);
    expect(existsSync(planted)).toBe(false);
    expect(bystander.exitCode).toBeNull();
    expect(existsSync(`/proc/${bystander.pid}`)).toBe(true);
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('keep\n');

    // Arrange: a run root anyone may write into
    chmodSync(runRoot, 0o777);
    // Act
    const refused = cli(['cleanup']);
    // Assert
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the local run root .* is writable by other users \(mode 777\)/);
    expect(statSync(runRoot).isDirectory()).toBe(true);
    chmodSync(runRoot, 0o700);
  });
});
