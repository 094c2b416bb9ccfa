/**
 * The CLI (built dist/bin/aurora-bench.js) against the Aurora parameter catalogue: a parameter
 * Aurora refuses is refused by validate, plan and run on both backends, by file and JSON path,
 * before anything starts; a local-only what-if is planned locally and refused by an AWS plan.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverProcessesUnder } from '../helpers/server-processes';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');

let work: string;
let runRoot: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'ab-cli-params-'));
  runRoot = mkdtempSync(join(tmpdir(), 'ab-cli-params-runs-'));
  env = { ...process.env, AURORA_BENCH_LAKE: join(work, 'lake'), AURORA_BENCH_RUN_ROOT: runRoot };
});
afterEach(() => {
  spawnSync(process.execPath, [CLI, 'cleanup'], { env });
  rmSync(work, { recursive: true, force: true });
  rmSync(runRoot, { recursive: true, force: true });
});

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: work, env, encoding: 'utf8', timeout: 300_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function writeSpec(name: string, spec: object): string {
  const file = join(work, name);
  writeFileSync(file, JSON.stringify(spec, null, 2));
  return file;
}

const mariadbdUnder = (dir: string): string[] => serverProcessesUnder('mariadbd', dir);

const base = {
  name: 'params-e2e',
  engine: { version: '3.10.4' },
  data: { tables: 1, tableSize: 100 },
  defaults: { durationS: 2, warmupS: 0, reportIntervalS: 1 },
  workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [2] }],
};

describe('aurora-bench CLI and the Aurora parameter catalogue', () => {
  it(
    'refuses thread_handling on Aurora in validate, plan (local and AWS) and run, naming the file and the ' +
      'JSON path, starting nothing',
    () => {
      // Arrange
      const spec = writeSpec('pool.json', {
        ...base,
        variants: [
          { name: 'ok', instanceClass: 'db.r6g.large' },
          { name: 'pool', instanceClass: 'db.r6g.large', instanceParameters: { thread_handling: 'pool-of-threads' } },
        ],
      });
      const expected =
        `${spec}: invalid experiment spec\n  - variants[1].instanceParameters.thread_handling: ` +
        `not modifiable on Aurora MySQL 3 at the instance level; remove it, or keep it for a MariaDB-only what-if ` +
        `on the local backend in variants[1].localOnlyParameters`;
      // Act
      const results = {
        validate: cli(['validate', spec]),
        plan: cli(['plan', spec]),
        planAws: cli(['plan', spec, '--aws']),
        run: cli(['run', spec]),
      };
      // Assert
      for (const [command, r] of Object.entries(results)) {
        expect({ command, code: r.code }).toEqual({ command, code: 1 });
        expect(r.stderr).toContain(expected);
      }
      expect(existsSync(join(work, 'lake'))).toBe(false);
      expect(readdirSync(runRoot)).toEqual([]);
      expect(mariadbdUnder(runRoot)).toEqual([]);
    },
  );

  it('plans a local-only what-if locally, marked "local only"; the AWS plan refuses it with its JSON path', () => {
    // Arrange
    const spec = writeSpec('whatif.json', {
      ...base,
      variants: [
        { name: 'aurora', instanceClass: 'db.r6g.large' },
        { name: 'whatif', instanceClass: 'db.r6g.large', localOnlyParameters: { thread_handling: 'pool-of-threads' } },
      ],
    });
    // Act
    const validate = cli(['validate', spec]);
    const local = cli(['plan', spec]);
    const aws = cli(['plan', spec, '--aws']);
    // Assert
    expect(validate.code).toBe(0);
    expect(validate.stdout).toContain('local-only what-if: whatif (an AWS plan refuses it)');
    expect(local.code).toBe(0);
    expect(local.stdout).toMatch(/whatif-r1 \(local-only what-if\)/);
    expect(local.stdout).toContain(
      '[info] variants[1].localOnlyParameters: local only: thread_handling=pool-of-threads applied to the ' +
        'local MariaDB servers of "whatif"',
    );
    expect(aws.code).toBe(1);
    expect(aws.stdout).toContain(
      '[refused] variants[1].localOnlyParameters: variant "whatif" is a local-only what-if: thread_handling ' +
        'exist only in the local rehearsal on MariaDB',
    );
    expect(aws.stdout).toMatch(/aurora-r1/);
    expect(aws.stdout).not.toMatch(/whatif-r1/);
  });

  it('refuses an AWS plan of a spec that is only a local-only what-if, naming the file and the JSON path', () => {
    // Arrange
    const spec = writeSpec('only-whatif.json', {
      ...base,
      variants: [
        { name: 'whatif', instanceClass: 'db.r6g.large', localOnlyParameters: { thread_handling: 'pool-of-threads' } },
      ],
    });
    // Act
    const aws = cli(['plan', spec, '--aws']);
    const validate = cli(['validate', spec]);
    // Assert
    expect(aws.code).toBe(1);
    expect(aws.stderr).toContain(
      `${spec}: the experiment cannot run as specified:\n  - variants[0].localOnlyParameters: variant "whatif" ` +
        `is a local-only what-if`,
    );
    expect(validate.code).toBe(0);
  });
});

describe('plan --aws of the nightly experiment', () => {
  it('prints what the cdk.json schedule costs a month (a quiet night, at most every run), shipped off', () => {
    // Act
    const nightly = cli(['plan', join(REPO, 'experiments', 'nightly-regression.json'), '--aws']);
    const other = cli(['plan', join(REPO, 'experiments', 'quickstart.json'), '--aws']);
    // Assert: the nightly stops after its first round when nothing moved; the plan's figure is its maximum.
    expect(nightly.code).toBe(0);
    const perRun = /Estimated AWS cost: \$([0-9.,]+) /.exec(nightly.stdout)![1]!;
    const line = new RegExp(
      /Nightly schedule cron\(0 2 \* \* \? \*\) Europe\/Berlin \(cdk\.json aurora-bench\.nightly,/.source +
        / off in cdk\.json[^)]*\)\): 30\.4 runs a month x \$([0-9.,]+) a run when nothing moved = about/.source +
        / \$([0-9.,]+) a month \(at most \$([0-9.,]+), every run at its maximum rounds; USD/.source,
    ).exec(nightly.stdout);
    expect(line).not.toBeNull();
    const [quiet, month, most] = [line![1]!, line![2]!, line![3]!].map((x) => Number(x.replace(/,/g, '')));
    const max = Number(perRun.replace(/,/g, ''));
    expect(quiet!).toBeLessThan(max / 2);
    expect(month!).toBeCloseTo(quiet! * 30.436875, 0);
    expect(most!).toBeCloseTo(max * 30.436875, 0);
    expect(other.stdout).not.toContain('Nightly schedule');
  });
});
