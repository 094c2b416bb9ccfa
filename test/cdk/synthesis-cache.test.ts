/**
 * The synthesis cache of `run --aws-rehearsal` (lib/synthesized-workflow.ts synthesizeWorkflowCached):
 * a second process reuses the first one's synthesis, and anything the synthesis depends on gives
 * another cache entry; old entries are pruned when a new one is written. Processes that miss the
 * same bundled entry at once write it once (lockSynthesis), with real processes holding the lock.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  lockSynthesis,
  pruneSynthesisCache,
  synthesisDigest,
  synthesizeWorkflowCached,
} from '../../lib/synthesized-workflow';
import { PROJECT_ROOT } from './cdk-fixture';

describe('synthesizeWorkflowCached', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'ab-synth-cache-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('synthesizes once into the cache, then answers from it', () => {
    // Arrange
    const cacheDir = join(work, 'cache');
    const options = { projectRoot: PROJECT_ROOT, region: 'eu-west-1' };

    // Act
    const first = synthesizeWorkflowCached(options, cacheDir);
    const entries = readdirSync(cacheDir);
    // What the next process reads: marked, so the answer can only have come from the file.
    const file = join(cacheDir, entries[0]!);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as {
      definition: Record<string, unknown>;
      taskByArn: [string, string][];
    };
    writeFileSync(
      file,
      JSON.stringify({ ...stored, definition: { ...stored.definition, Comment: 'read from the cache' } }),
    );
    const second = synthesizeWorkflowCached(options, cacheDir);

    // Assert
    expect(entries).toEqual([`workflow-${synthesisDigest(options)}.json`]);
    expect(first.definition['States']).toBeDefined();
    expect([...first.taskByArn.keys()].every((arn) => arn.startsWith('arn:aws:lambda:eu-west-1:'))).toBe(true);
    expect(second.definition['Comment']).toBe('read from the cache');
    expect([...second.taskByArn]).toEqual([...first.taskByArn]);
  });

  it('keys the entry on the region, the account and the checkout the synthesis reads', () => {
    // Arrange: a checkout whose state machine differs from the repository's by one byte.
    const checkout = join(work, 'checkout');
    cpSync(join(PROJECT_ROOT, 'cdk.json'), join(checkout, 'cdk.json'));
    cpSync(join(PROJECT_ROOT, 'state-machines'), join(checkout, 'state-machines'), { recursive: true });
    const base = { projectRoot: checkout, region: 'eu-west-1' };
    const before = synthesisDigest(base);
    const asl = join(checkout, 'state-machines', 'benchmark.asl.json');

    // Act
    writeFileSync(asl, `${readFileSync(asl, 'utf8')} `);
    const afterEdit = synthesisDigest(base);

    // Assert
    expect(synthesisDigest({ ...base, region: 'us-east-1' })).not.toBe(before);
    expect(synthesisDigest({ ...base, account: '210987654321' })).not.toBe(before);
    expect(afterEdit).not.toBe(before);
    expect(synthesisDigest(base)).toBe(afterEdit);
  });
  /** A cache entry name of the given kind, its digest made of `n`; its modification time `ageS` seconds ago. */
  function oldEntry(cacheDir: string, kind: 'bundled' | 'workflow', n: number, ageS: number): string {
    const name =
      kind === 'bundled' ? `bundled-${String(n).padStart(32, '0')}` : `workflow-${String(n).padStart(32, '0')}.json`;
    const path = join(cacheDir, name);
    if (kind === 'bundled') {
      mkdirSync(path, { recursive: true });
      writeFileSync(join(path, 'synthesis.json'), '{}');
    } else {
      writeFileSync(path, '{}');
    }
    const at = new Date(Date.now() - ageS * 1000);
    utimesSync(path, at, at);
    return name;
  }

  it('prunes the older workflow entries when it writes a new one, and leaves what is not an entry alone', () => {
    // Arrange: twelve entries of earlier checkouts, a write under way, and a bundled synthesis.
    const cacheDir = join(work, 'pruned');
    mkdirSync(cacheDir, { recursive: true });
    const earlier = Array.from({ length: 12 }, (_, i) => oldEntry(cacheDir, 'workflow', i, 1000 - i * 10));
    writeFileSync(join(cacheDir, `workflow-${'f'.repeat(32)}.json.123.tmp`), '{}');
    const bundled = oldEntry(cacheDir, 'bundled', 1, 5000);
    const options = { projectRoot: PROJECT_ROOT, region: 'eu-west-1' };

    // Act
    synthesizeWorkflowCached(options, cacheDir);

    // Assert: the new entry and the nine most recent earlier ones (ten in all), the rest untouched.
    expect(readdirSync(cacheDir).sort()).toEqual(
      [
        `workflow-${synthesisDigest(options)}.json`,
        ...earlier.slice(3),
        `workflow-${'f'.repeat(32)}.json.123.tmp`,
        bundled,
      ].sort(),
    );
  });

  it('keeps the most recently used bundled syntheses: one read since is kept over one written later', () => {
    // Arrange: five bundled syntheses; the oldest written was read a moment ago.
    const cacheDir = join(work, 'bundled');
    mkdirSync(cacheDir, { recursive: true });
    const entries = [0, 1, 2, 3, 4].map((n) => oldEntry(cacheDir, 'bundled', n, 100 + n * 100));
    const now = new Date();
    utimesSync(join(cacheDir, entries[4]!), now, now);

    // Act
    const removed = pruneSynthesisCache(cacheDir, 'bundled', 3);

    // Assert
    expect(removed.sort()).toEqual([entries[2], entries[3]].sort());
    expect(readdirSync(cacheDir).sort()).toEqual([entries[0], entries[1], entries[4]].sort());
  });
});

describe('lockSynthesis', () => {
  let work: string;
  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'ab-synth-lock-'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  /** A process that holds `lock` (its pid inside), writes `entry` after `ms`, then releases the lock. */
  function holder(lock: string, entry: string | undefined, ms: number) {
    mkdirSync(lock);
    const script =
      `setTimeout(() => { ${entry ? `require('fs').writeFileSync(${JSON.stringify(entry)}, 'x'); ` : ''}` +
      `require('fs').rmSync(${JSON.stringify(lock)}, { recursive: true, force: true }); }, ${ms});`;
    const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    writeFileSync(join(lock, 'pid'), String(child.pid));
    return new Promise<void>((resolve) => child.on('exit', () => resolve()));
  }

  it('waits while a live process holds the lock, and takes no lock once that process wrote the entry', async () => {
    // Arrange
    const lock = join(work, 'bundled-x.lock');
    const entry = join(work, 'entry');
    const exited = holder(lock, entry, 800);
    const started = Date.now();

    // Act
    const release = lockSynthesis(lock, () => existsSync(entry));

    // Assert
    expect({ release, entryWritten: existsSync(entry) }).toEqual({ release: undefined, entryWritten: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    await exited;
  });

  it('takes the lock when its holder releases it without writing the entry, and releases it', async () => {
    // Arrange
    const lock = join(work, 'bundled-x.lock');
    const exited = holder(lock, undefined, 500);

    // Act
    const release = lockSynthesis(lock, () => false);

    // Assert
    expect(readFileSync(join(lock, 'pid'), 'utf8')).toBe(String(process.pid));
    release!();
    expect(existsSync(lock)).toBe(false);
    await exited;
  });

  it('takes over at once a lock whose holder died, and one left without a pid', () => {
    // Arrange: the pid of a process that has exited; a lock folder a minute old with no pid inside.
    const dead = join(work, 'dead.lock');
    mkdirSync(dead);
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dead, 'pid'), gone.stdout);
    const empty = join(work, 'empty.lock');
    mkdirSync(empty);
    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(empty, minuteAgo, minuteAgo);
    const started = Date.now();

    // Act
    const releases = [lockSynthesis(dead, () => false), lockSynthesis(empty, () => false)];

    // Assert
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(releases.map((r) => typeof r)).toEqual(['function', 'function']);
    expect([dead, empty].map((l) => readFileSync(join(l, 'pid'), 'utf8'))).toEqual([
      String(process.pid),
      String(process.pid),
    ]);
  });
});
