/**
 * `aurora-bench run SPEC --aws-rehearsal` as a user runs it (the built dist/bin/aurora-bench.js):
 * quickstart at --scale small end to end (one repeat instead of its two: the second round makes the
 * same calls again and doubled this test's time), and Ctrl-C in the middle of a run. Each time the command
 * itself says what it left (nothing), and the test checks that its moto server, its servers and
 * its directory are really gone.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitForExit } from '../../core/backends/local/processes';
import { processesMentioning } from '../../core/backends/local/registry';
import { writeInterruptibleRehearsalSpec } from '../helpers/interruptible-rehearsal';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');
let work: string;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
  work = mkdtempSync(join(tmpdir(), 'ab-cli-rehearsal-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The moto pid and the rehearsal directory the command printed; both must be gone afterwards. */
function startedResources(stdout: string): { motoPid: number; dir: string } {
  const m = /moto server on \S+ \(pid (\d+)\); rehearsal files in (\S+)/.exec(stdout);
  if (!m) throw new Error(`the rehearsal printed no moto/directory line:\n${stdout}`);
  return { motoPid: Number(m[1]), dir: m[2]! };
}

/** The shipped quickstart with one repeat: both cells, both workloads, every kind of call once. */
function quickstartOnce(): string {
  const spec = join(work, 'quickstart.json');
  const quickstart = JSON.parse(readFileSync(join(REPO, 'experiments', 'quickstart.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  delete quickstart['$schema'];
  // 2-s steps without warm-up: what is checked here is what the command says and leaves, not the numbers.
  writeFileSync(
    spec,
    JSON.stringify({
      ...quickstart,
      repeats: 1,
      defaults: { ...(quickstart['defaults'] as object), durationS: 2, warmupS: 0 },
    }),
  );
  return spec;
}

/** A one-cell experiment with a step long enough to be interrupted; no reader: the teardown is the same. */
function stopMeSpec(name: string): string {
  return writeInterruptibleRehearsalSpec(work, name, 0);
}

/**
 * Runs the CLI on `spec` and sends it SIGINT `times` times (300 ms apart) once `when` shows in its
 * output, 5 s later (for the step: its line comes as it starts, its job a moment later).
 */
async function interruptedRun(
  spec: string,
  times: number,
  when: RegExp,
): Promise<{ code: number | null; stdout: string; stderr: string; interrupted: boolean }> {
  const child = spawn(process.execPath, [CLI, 'run', spec, '--aws-rehearsal'], {
    cwd: work,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let interrupted = false;
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    if (!interrupted && when.test(stdout)) {
      interrupted = true;
      for (let k = 0; k < times; k++) setTimeout(() => child.kill('SIGINT'), 5_000 + 300 * k);
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr, interrupted };
}

describe('aurora-bench run --aws-rehearsal', () => {
  it('rehearses quickstart --scale small: says what it skips, steps ok, run kept in --lake, none left', async () => {
    // Arrange
    const lake = join(work, 'kept-lake');
    // Act
    const r = spawnSync(
      process.execPath,
      [CLI, 'run', quickstartOnce(), '--aws-rehearsal', '--scale', 'small', '--lake', lake],
      {
        cwd: work,
        encoding: 'utf8',
        timeout: 900_000,
      },
    );

    // Assert
    // On a failure the end of what it printed says why (what it left, or the cause).
    const ending = r.status === 0 ? '' : r.stdout.split('\n').slice(-15).join('\n');
    expect({
      code: r.status,
      // Nothing on stderr: on the functions' Node.js major the AWS SDK warns of no unsupported Node.js.
      stderr: r.stderr,
      ending,
    }).toEqual({ code: 0, stderr: '', ending: '' });
    // From its first line, or after CDK's bundling progress when the synthesis was not cached yet
    // (bin/aws-rehearsal.ts): which one depends on what ran before on this machine, not on the command.
    expect(r.stdout.replace(/^(Bundling asset \S+\.\.\.\n)+/, '')).toMatch(/^AWS rehearsal: /);
    expect(r.stdout).toContain('Not rehearsed:');
    expect(r.stdout).toContain('Performance Insights: not emulated');
    // The plan's notes (the scaling, the emulated instance classes) as one line, as a local run says them.
    expect(r.stdout).toMatch(
      /^2 plan notes \(1 info, 1 warning\): `aurora-bench plan \S*quickstart\.json --aws --scale small` lists them$/m,
    );
    expect(r.stdout).not.toMatch(/^\[(info|warning)\] /m);
    expect(r.stdout.match(/\] {3}ok: [0-9,.]+ tps/g)).toHaveLength(4);
    expect(r.stdout).toMatch(/Run quickstart-small-\S+ \(quickstart-small\) on aws-rehearsal: succeeded/);
    expect(r.stdout).toContain(`copied into ${lake} with the run marked aws-rehearsal`);
    // --lake keeps the run where results, report and history find it, marked as a rehearsal.
    const runId = /rehearsal of run (\S+) succeeded/.exec(r.stdout)![1]!;
    const results = spawnSync(process.execPath, [CLI, 'results', '--run', runId, '--lake', lake], {
      cwd: work,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(results.status).toBe(0);
    expect(results.stdout).toMatch(new RegExp(`Run ${runId} \\(quickstart-small\\) on aws-rehearsal: succeeded`));
    expect(r.stdout).toMatch(/rehearsal of run quickstart-small-\S+ succeeded: 4 steps\./);
    expect(r.stdout).toContain('nothing left behind:');
    const { motoPid, dir } = startedResources(r.stdout);
    // SIGKILL is delivered at once but a loaded machine may take a moment to finish the exit.
    expect(await waitForExit(motoPid, 10_000)).toBe(true);
    expect(existsSync(dir)).toBe(false);
    expect(processesMentioning(dir)).toEqual([]);
  }, 900_000);

  it('on Ctrl-C stops the workflow, tears the cell down via the safety net, exits 130, leaves nothing', async () => {
    // Act
    const { code, stdout, interrupted } = await interruptedRun(stopMeSpec('stop-me'), 1, /step 1\/1 rw-t2/);

    // Assert
    expect(interrupted).toBe(true);
    expect(code).toBe(130);
    expect(stdout).toMatch(/safety net \(teardownRun\) deleted: .*rds-cluster:ab-[0-9a-f]{8}-one-r1/);
    expect(stdout).toContain(
      'step rw-t2 recorded as failed: interrupted by the user (Ctrl-C, SIGINT) while the step ran',
    );
    expect(stdout).toContain('nothing left behind:');
    expect(stdout).toMatch(
      /rehearsal of run stop-me-\S+ aborted \(interrupted by the user \(Ctrl-C, SIGINT\)\); everything was torn down\./,
    );
    const { motoPid, dir } = startedResources(stdout);
    // SIGKILL is delivered at once but a loaded machine may take a moment to finish the exit.
    expect(await waitForExit(motoPid, 10_000)).toBe(true);
    expect(existsSync(dir)).toBe(false);
    expect(processesMentioning(dir)).toEqual([]);
  }, 300_000);

  it('on a second Ctrl-C exits at once, and still leaves no process and no directory', async () => {
    // Act
    const { code, stdout, stderr, interrupted } = await interruptedRun(
      stopMeSpec('force-me'),
      2,
      /\[rehearsal ssm\] i-\S+: launched/,
    );

    // Assert: the exit hooks killed the servers, the client's shells and the moto server, and removed the directory.
    expect(interrupted).toBe(true);
    expect(code).toBe(130);
    expect(stderr).toContain('forced exit: every process of the rehearsal is killed');
    const { motoPid, dir } = startedResources(stdout);
    // SIGKILL is delivered at once but a loaded machine may take a moment to finish the exit.
    expect(await waitForExit(motoPid, 10_000)).toBe(true);
    expect(existsSync(dir)).toBe(false);
    // Killed with SIGKILL on the way out: each finishes exiting within moments.
    for (const pid of processesMentioning(dir))
      expect({ pid, exited: await waitForExit(pid, 10_000) }).toEqual({ pid, exited: true });
  }, 300_000);
});
