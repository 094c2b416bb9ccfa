/**
 * Every class of bad experiment file through the built CLI, as a user meets it: `validate`, `plan`
 * and `run` each exit non-zero, name the file and the JSON path, print no stack trace, and create
 * nothing (no lake, no run directory). The messages themselves are checked class by class in
 * test/unit/spec-bad-input.test.ts; here it is the command's behaviour.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');

const good = {
  name: 'bad-input',
  engine: { version: '3.04.0' },
  variants: [{ name: 'a', instanceClass: 'db.r6g.large' }],
  data: { tables: 1, tableSize: 100 },
  defaults: { durationS: 2 },
  workloads: [{ name: 'rw', test: 'oltp_read_write' }],
};
const json = (o: object) => JSON.stringify(o, null, 2);

/** [class, file name, content, the JSON path the message must name ('' for the whole file)]. */
const CASES: [string, string, string | Buffer, string][] = [
  [
    'instance class typo',
    'class.json',
    json({ ...good, variants: [{ name: 'a', instanceClass: 'db.r6g.2xlargee' }] }),
    'variants[0].instanceClass',
  ],
  [
    'client type typo',
    'client.json',
    json({ ...good, variants: [{ name: 'a', instanceClass: 'db.r6g.large', clients: { instanceType: 'c6i.larg' } }] }),
    'variants[0].clients.instanceType',
  ],
  ['unknown region', 'region.json', json({ ...good, region: 'us-east-9' }), 'region'],
  [
    'unknown AZ letter',
    'az.json',
    json({ ...good, variants: [{ name: 'a', instanceClass: 'db.r6g.large', az: 'q' }] }),
    'variants[0].az',
  ],
  [
    'write forwarding on 2.x',
    'wf.json',
    json({
      ...good,
      engine: { version: '5.7.mysql_aurora.2.12.5' },
      variants: [{ name: 'a', instanceClass: 'db.r6g.large', readers: 1, writeForwarding: { enabled: true } }],
    }),
    'variants[0].writeForwarding.enabled',
  ],
  [
    'unknown parameter',
    'param.json',
    json({ ...good, variants: [{ name: 'a', instanceClass: 'db.r6g.large', clusterParameters: { innodb_bogus: 1 } }] }),
    'variants[0].clusterParameters.innodb_bogus',
  ],
  [
    'script leaving the folder',
    'script.json',
    json({ ...good, workloads: [{ name: 'lua', script: '../../etc/passwd.lua' }] }),
    'workloads[0].script',
  ],
  [
    'duplicate threads',
    'threads.json',
    json({ ...good, workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [2, 2] }] }),
    'workloads[0].threads[1]',
  ],
  ['duplicate JSON key', 'dupkey.json', '{"name": "a", "name": "b"}', 'name'],
  [
    'interval past duration',
    'interval.json',
    json({ ...good, workloads: [{ name: 'rw', test: 'oltp_read_write', durationS: 2, reportIntervalS: 5 }] }),
    'workloads[0].reportIntervalS',
  ],
  [
    'millions of steps',
    'huge.json',
    json({
      ...good,
      repeats: 100,
      workloads: [
        {
          name: 'rw',
          test: 'oltp_read_write',
          threads: Array.from({ length: 100 }, (_, i) => i + 1),
          rates: Array.from({ length: 100 }, (_, i) => i),
        },
      ],
    }),
    'workloads',
  ],
  ['syntax error', 'syntax.json', '{\n  "name": "a",\n  "data": }\n', ''],
  ['binary file', 'binary.json', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x1b, 0x5b, 0x32, 0x4a]), ''],
  [
    'null parameter value',
    'null.json',
    json({
      ...good,
      variants: [{ name: 'a', instanceClass: 'db.r6g.large', instanceParameters: { max_connections: null } }],
    }),
    'variants[0].instanceParameters.max_connections',
  ],
  ['comments in JSON', 'comments.json', `// tuned\n${json(good)}`, ''],
];

/**
 * Whether text holds a control character other than tab, newline and carriage return (what a terminal would act on).
 */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

let work: string;
let runRoot: string;
let lake: string;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
  work = mkdtempSync(join(tmpdir(), 'ab-bad-cli-'));
  runRoot = join(work, 'runs');
  lake = join(work, 'lake');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: work,
    env: { ...process.env, AURORA_BENCH_LAKE: lake, AURORA_BENCH_RUN_ROOT: runRoot },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.each(CASES)('a spec with %s', (_class, name, content, jsonPath) => {
  it.each(['validate', 'plan', 'run'])(
    'is refused by %s: exit 1, file and JSON path named, no stack, nothing created',
    (command) => {
      // Arrange
      const file = join(work, name);
      writeFileSync(file, content);
      // Act
      const r = cli([command, file]);
      // Assert
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(file);
      expect(r.stderr).toContain(jsonPath === '' ? '(root): ' : `- ${jsonPath}: `);
      expect(r.stderr).not.toMatch(/^\s+at .+\(.*:\d+:\d+\)$/m);
      expect(hasControlCharacter(r.stderr + r.stdout)).toBe(false);
      expect(existsSync(lake)).toBe(false);
      expect(existsSync(runRoot) ? readdirSync(runRoot) : []).toEqual([]);
    },
  );
});
