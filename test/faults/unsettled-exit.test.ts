/**
 * "The process ended with the command unsettled" is an error everywhere: the AWS rehearsal with its
 * moto server killed mid-step must exit 1 with a FAILED line and one line saying the control plane
 * died (core/rehearsal/moto-server.ts controlPlaneDied), no stack trace, and leave nothing; and the
 * guard every command of the built CLI runs under (core/cli/unsettled-exit.ts) turns a process that runs out of work
 * with its command pending into exit 70 with a message, where Node alone exits 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitForExit } from '../../core/backends/local/processes';
import { processesMentioning } from '../../core/backends/local/registry';
import { CLI, REPO, sleep } from '../helpers/fault-cli';
import { writeInterruptibleRehearsalSpec } from '../helpers/interruptible-rehearsal';

const GUARD = join(REPO, 'dist', 'core', 'cli', 'unsettled-exit.js');
let work: string;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'ab-unsettled-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** A command whose promise waits on the exit event of an unref'd child: nothing keeps the loop alive. */
function pendingCommand(guarded: boolean): string {
  const file = join(work, `pending-${guarded ? 'guarded' : 'bare'}.js`);
  writeFileSync(
    file,
    [
      "const { spawn } = require('node:child_process');",
      `const { failIfUnsettledAtExit } = require(${JSON.stringify(GUARD)});`,
      "const child = spawn('sleep', ['1'], { detached: true, stdio: 'ignore' });",
      'child.unref();',
      "const main = new Promise((resolve) => child.once('exit', resolve)).then(() => " +
        "process.stdout.write('finished\\n'));",
      guarded ? "failIfUnsettledAtExit(main, 'aurora-bench');" : '',
    ].join('\n'),
  );
  return file;
}

describe('a command that ends unsettled', () => {
  it('exits 0 without the guard (what Node does) and 70 with a message under it', () => {
    // Act
    const bare = spawnSync(process.execPath, [pendingCommand(false)], { encoding: 'utf8' });
    const guarded = spawnSync(process.execPath, [pendingCommand(true)], { encoding: 'utf8' });
    // Assert: the bug the guard is for is real, and the guard turns it into a failure
    expect([bare.status, bare.stdout]).toEqual([0, '']);
    expect(guarded.status).toBe(70);
    expect(guarded.stdout).toBe('');
    expect(guarded.stderr).toMatch(
      new RegExp(
        /^aurora-bench: the process ran out of work with the command still unfinished .*: it did not/.source +
          / complete, whatever it printed; exit 70$/.source,
        'm',
      ),
    );
  });

  it('AWS rehearsal, moto killed mid-step: exit 1, FAILED, one line on the dead control plane, none left', async () => {
    // Arrange
    const spec = writeInterruptibleRehearsalSpec(work, 'moto-killed');
    const child = spawn(process.execPath, [CLI, 'run', spec, '--aws-rehearsal'], {
      cwd: work,
      env: { ...process.env, AURORA_BENCH_LAKE: join(work, 'lake') },
    });
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const stepStarted = new Promise<void>((resolve) =>
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        if (/step 1\/1 rw-t2/.test(stdout)) resolve();
      }),
    );
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    await Promise.race([stepStarted, closed]);
    const m = /moto server on \S+ \(pid (\d+)\); rehearsal files in (\S+)/.exec(stdout);
    if (!m) throw new Error(`the rehearsal printed no moto/directory line:\n${stdout}\n${stderr}`);
    await sleep(3000);
    // Act
    process.kill(Number(m[1]), 'SIGKILL');
    const code = await closed;
    // Assert: exit 1 with the FAILED line and one line naming the
    // dead control plane and what the run was doing, no stack
    const [motoPid, dir] = [m[1]!, m[2]!];
    expect(code).toBe(1);
    const failed = stdout
      .split('\n')
      .findIndex((l) => /^rehearsal of run moto-killed-\S+ FAILED \(ControlPlaneDiedError\):$/.test(l));
    expect(failed).toBeGreaterThan(0);
    expect(stdout.split('\n')[failed + 1]).toMatch(
      new RegExp(
        `^the control plane died: the moto server at http://127\\.0\\.0\\.1:\\d+ \\(pid ${motoPid}\\) stopped ` +
          `answering \\(connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+\\) ` +
          'while the workflow ran \\(its last progress: "\\[1/1 one-r1\\] step 1/1 rw-t2: .+"\\), when \\[1/1 ' +
          'one-r1\\] \\w+ failed; no AWS call of the run can succeed$',
      ),
    );
    expect(stdout).toMatch(
      new RegExp(
        /^nothing left running: every MariaDB server, emulated client and the moto server stopped;/.source +
          / the rehearsal directory removed/.source,
        'm',
      ),
    );
    for (const out of [stdout, stderr]) expect(out).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    expect(stderr).not.toMatch(/ECONNREFUSED/);
    // Nothing left: moto, the MariaDB servers and emulated clients (all run under the directory), mounts, the directory
    expect(await waitForExit(Number(motoPid), 10_000)).toBe(true);
    expect(existsSync(dir)).toBe(false);
    expect(processesMentioning(dir)).toEqual([]);
    expect(
      readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .filter((l) => l.includes(dir)),
    ).toEqual([]);
  }, 600_000);
});
