/**
 * An AWS rehearsal that ends without its own teardown, through the built CLI: killed with SIGKILL
 * (no exit hook runs), under a TMPDIR the user made private (mode 0700, which the Lambda functions,
 * run as nobody, cannot enter), `cleanup` settles it as it settles a killed local run: its moto
 * server, MariaDB servers and emulated client stopped, its mounts and folders gone, the run recorded
 * aborted in the lake it was to be copied into. SIGTERM stops it as it stops a local run: "stopped by
 * SIGTERM", exit 143. One small cell (a writer, one client) and one step a minute long each.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, waitForExit } from '../../core/backends/local/processes';
import { processesMentioning } from '../../core/backends/local/registry';
import { CLI, FaultWorld, sleep, type BackgroundRun } from '../helpers/fault-cli';
import { writeInterruptibleRehearsalSpec } from '../helpers/interruptible-rehearsal';

let world: FaultWorld | undefined;
let privateTmp: string | undefined;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
afterEach(() => {
  world?.tearDown();
  if (world) rmSync(world.work, { recursive: true, force: true });
  world = undefined;
  if (privateTmp) rmSync(privateTmp, { recursive: true, force: true });
  privateTmp = undefined;
});

const mountsUnder = (dir: string): string[] =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => l.includes(dir));

/** Starts the rehearsal and waits until its step has run a moment: its moto pid and folder. */
async function rehearsalMidStep(
  w: FaultWorld,
  name: string,
): Promise<{ run: BackgroundRun; motoPid: number; dir: string }> {
  const run = w.background(['run', writeInterruptibleRehearsalSpec(w.work, name, 0), '--aws-rehearsal']);
  await run.waitFor(/step 1\/1 rw-t2/);
  const m = /moto server on \S+ \(pid (\d+)\); rehearsal files in (\S+)/.exec(run.output().stdout);
  if (!m) throw new Error(`the rehearsal printed no moto/directory line:\n${run.output().stdout}`);
  await sleep(2000);
  return { run, motoPid: Number(m[1]), dir: m[2]! };
}

describe('an AWS rehearsal that ends without its teardown', () => {
  it('kill -9 under a private TMPDIR: cleanup stops, unmounts and removes all of it, records it aborted', async () => {
    // Arrange: a TMPDIR others cannot enter, as `mktemp -d` makes it (mode 0700)
    privateTmp = mkdtempSync(join(tmpdir(), 'ab-private-tmp-'));
    chmodSync(privateTmp, 0o700);
    world = new FaultWorld('ab-rehearsal-killed-', {}, { TMPDIR: privateTmp });
    const { run, motoPid, dir } = await rehearsalMidStep(world, 'killed');
    const { stderr } = run.output();
    run.child.kill('SIGKILL');
    await run.exited;
    const left = {
      moto: isAlive(motoPid),
      processes: processesMentioning(dir).length,
      mounts: mountsUnder(dir).length,
    };
    // Act
    const cleanup = world.cli(['cleanup']);
    // Assert: it started (no stack trace), and a kill -9 left its processes and mounts for cleanup
    expect(stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    expect(left).toEqual({ moto: true, processes: expect.any(Number) as number, mounts: expect.any(Number) as number });
    expect(left.processes * left.mounts).toBeGreaterThan(0);
    // Assert: cleanup settled it: the run aborted in the lake, nothing of it left
    expect(cleanup.code).toBe(0);
    expect(cleanup.stdout).toMatch(/recorded as aborted in the lake \(they were still marked running\): killed-/);
    expect(world.lakeQuery<{ status: string; backend: string }>('select status, backend from runs')).toEqual([
      { status: 'aborted', backend: 'aws-rehearsal' },
    ]);
    expect(await waitForExit(motoPid, 10_000)).toBe(true);
    for (const pid of processesMentioning(dir))
      expect({ pid, exited: await waitForExit(pid, 10_000) }).toEqual({ pid, exited: true });
    expect(mountsUnder(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(privateTmp).filter((f) => /^(abr-|moto-server)/.test(f))).toEqual([]);
    expect(existsSync(world.runRoot) ? readdirSync(world.runRoot) : []).toEqual([]);
  }, 600_000);

  it('SIGTERM mid-step: stopped by SIGTERM as a local run is, exit 143, nothing left', async () => {
    // Arrange
    world = new FaultWorld('ab-rehearsal-term-');
    const { run, motoPid, dir } = await rehearsalMidStep(world, 'term');
    // Act
    run.child.kill('SIGTERM');
    const { code } = await run.exited;
    // Assert
    const { stdout, stderr } = run.output();
    expect(code).toBe(143);
    expect(stderr).toMatch(/^SIGTERM: stopping the rehearsal: nothing new starts/m);
    expect(stdout).toMatch(/step rw-t2 recorded as failed: stopped by SIGTERM .* while the step ran/);
    expect(stdout).toMatch(
      /^rehearsal of run term-\S+ aborted \(stopped by SIGTERM .*\); everything was torn down\.$/m,
    );
    expect(stdout + stderr).not.toMatch(/Ctrl-C/);
    expect(world.lakeQuery<{ status: string; error: string }>('select status, error from runs')).toEqual([
      {
        status: 'aborted',
        error: expect.stringMatching(/^stopped by SIGTERM .*; everything was torn down$/) as string,
      },
    ]);
    expect(await waitForExit(motoPid, 10_000)).toBe(true);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(world.runRoot) ? readdirSync(world.runRoot) : []).toEqual([]);
  }, 600_000);
});
