/**
 * The mapping of `aurora-bench import` (core/cli/import-mapping.ts): which step each hand-run log
 * is, from flags, a mapping file's defaults and its file-name patterns, and the log's own header.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  assignFiles,
  headerFacts,
  ImportAssignmentError,
  ImportMappingError,
  resolveMapping,
  type LogFacts,
} from '../../core/cli/import-mapping';

const FIXTURES = join(__dirname, '..', 'fixtures', 'sysbench');
const log = (relativePath: string, extra: Partial<LogFacts> = {}): LogFacts => ({
  path: `logs/${relativePath}`,
  relativePath,
  modifiedAt: '2026-01-02T03:04:05.000Z',
  ...extra,
});

describe('resolveMapping', () => {
  it('applies flags over the mapping file and appends --variant-pattern entries after its files entries', () => {
    // Arrange
    const doc = {
      experiment: 'from-file',
      defaults: { workload: 'rw', threads: 8 },
      files: [{ match: 'a-*', variant: 'a' }],
    };
    // Act
    const m = resolveMapping(doc, 'map.yaml', { experiment: 'from-flag', threads: '16', variantPattern: ['b=b-*'] });
    // Assert
    expect(m.experiment).toBe('from-flag');
    expect(m.defaults).toEqual({ workload: 'rw', threads: 16 });
    expect(m.files).toEqual([
      { match: 'a-*', variant: 'a' },
      { match: 'b-*', variant: 'b' },
    ]);
  });

  it("names the mapping file and every bad entry's JSON path", () => {
    // Arrange
    const doc = {
      experiment: 'x',
      defaults: { threads: 'many' },
      files: [{ match: 'ok-*' }, { match: '{variant}-{host}.log', rate: -1 }],
      extra: 1,
    };
    // Act
    const error = catchError(() => resolveMapping(doc, 'map.yaml', {}));
    // Assert
    expect(error).toBeInstanceOf(ImportMappingError);
    expect(error.message).toMatch(/^map\.yaml: invalid import mapping/);
    expect(error.message).toMatch(/- \(root\): unknown field "extra"/);
    expect(error.message).toMatch(/- defaults\.threads: expected number, got "many"/);
    expect(error.message).toMatch(/- files\[1\]\.rate: /);
  });

  it('names an unknown placeholder of a pattern by its JSON path', () => {
    // Act
    const error = catchError(() =>
      resolveMapping({ experiment: 'x', files: [{ match: '{variant}-{host}.log' }] }, 'map.json', {}),
    );
    // Assert
    expect(error.message).toMatch(
      /map\.json: invalid import mapping\n {2}- files\[0\]\.match: unknown placeholder \{host\}/,
    );
  });

  it('names the flag, not a JSON path, for a bad flag value or a missing experiment', () => {
    // Act
    const badThreads = catchError(() =>
      resolveMapping(undefined, undefined, { experiment: 'x', threads: 'lots', variantPattern: ['novalue'] }),
    );
    const noExperiment = catchError(() => resolveMapping(undefined, undefined, { workload: 'rw' }));
    // Assert
    expect(badThreads.message).toMatch(/^command line: invalid import mapping/);
    expect(badThreads.message).toMatch(/- --variant-pattern: expected NAME=PATTERN/);
    expect(badThreads.message).toMatch(/- --threads: expected number, got "lots"/);
    expect(noExperiment.message).toMatch(/- --experiment: the experiment's name is required/);
  });
});

describe('assignFiles', () => {
  it('captures fields from file-name patterns, later entries over earlier ones, over the defaults', () => {
    // Arrange
    const m = resolveMapping(
      {
        experiment: 'x',
        defaults: { workload: 'rw', instanceClass: 'db.r5.large' },
        files: [
          { match: '{variant}_t{threads}_{date}.log' },
          { match: 'r6g_*', instanceClass: 'db.r6g.large', workload: 'ro' },
        ],
      },
      'map.yaml',
      {},
    );
    // Act
    const [r5, r6g] = assignFiles(m, [
      log('r5_t8_20240301.log', { threads: 8 }),
      log('r6g_t8_2024-03-02.log', { threads: 8 }),
    ]);
    // Assert
    expect(r5).toMatchObject({
      variant: 'r5',
      workload: 'rw',
      threads: 8,
      rate: 0,
      repeat: 1,
      startedAt: '2024-03-01T00:00:00.000Z',
      dateFrom: 'file-name',
      instanceClass: 'db.r5.large',
    });
    expect(r6g).toMatchObject({
      variant: 'r6g',
      workload: 'ro',
      threads: 8,
      startedAt: '2024-03-02T00:00:00.000Z',
      instanceClass: 'db.r6g.large',
    });
  });

  it("takes threads and rate from the log's header when not given, and the file time when no date is", () => {
    // Arrange
    const m = resolveMapping(undefined, undefined, { experiment: 'x', variant: 'a', workload: 'w' });
    // Act
    const [a] = assignFiles(m, [log('one.log', { threads: 4, rate: 100 })]);
    // Assert
    expect(a).toMatchObject({ threads: 4, rate: 100, startedAt: '2026-01-02T03:04:05.000Z', dateFrom: 'mtime' });
  });

  it('numbers repeats per step in date order around the ones given, and refuses two logs of one repeat', () => {
    // Arrange
    const m = resolveMapping(
      {
        experiment: 'x',
        defaults: { variant: 'a', workload: 'w' },
        files: [{ match: 'run-{date}.log' }, { match: 'run-2024-01-03.log', repeat: 1 }],
      },
      'm.yaml',
      {},
    );
    const dup = resolveMapping({ experiment: 'x', defaults: { variant: 'a', workload: 'w', repeat: 2 } }, 'm.yaml', {});
    // Act
    const repeats = assignFiles(m, [
      log('run-2024-01-02.log', { threads: 2 }),
      log('run-2024-01-01.log', { threads: 2 }),
      log('run-2024-01-03.log', { threads: 2 }),
    ]).map((a) => [a.path, a.repeat]);
    const error = catchError(() => assignFiles(dup, [log('p.log', { threads: 2 }), log('q.log', { threads: 2 })]));
    // Assert
    expect(repeats).toEqual([
      ['logs/run-2024-01-02.log', 3],
      ['logs/run-2024-01-01.log', 2],
      ['logs/run-2024-01-03.log', 1],
    ]);
    expect(error).toBeInstanceOf(ImportAssignmentError);
    expect(error.message).toMatch(/logs\/q\.log: repeat 2 of a w t2 is also logs\/p\.log/);
  });

  it('lists every log it cannot place, each by its path: missing fields, threads that disagree with the log', () => {
    // Arrange
    const m = resolveMapping(
      { experiment: 'x', defaults: { workload: 'w', threads: 64 }, files: [{ match: 'r5-*', variant: 'r5' }] },
      'm.yaml',
      {},
    );
    // Act
    const error = catchError(() =>
      assignFiles(m, [log('r5-a.log', { threads: 2 }), log('other.log', { threads: 64 })]),
    );
    // Assert
    expect(error.message).toMatch(/cannot import: 2 problems .*nothing was imported/);
    expect(error.message).toMatch(
      /logs\/r5-a\.log: the mapping says threads 64, the log ran with 2 \("Number of threads: 2"/,
    );
    expect(error.message).toMatch(/logs\/other\.log: no variant \(--variant NAME, --variant-pattern NAME=PATTERN/);
  });
});

describe('headerFacts', () => {
  it('reads threads, rate and report interval from the header sysbench 1.0 and 1.1 print', () => {
    // Act
    const rate10 = headerFacts(readFileSync(join(FIXTURES, 'plain_rate.log'), 'utf8'));
    const plain11 = headerFacts(readFileSync(join(FIXTURES, 'versions', 'v1_1_mysql_read_write.log'), 'utf8'));
    // Assert
    expect(rate10).toEqual({ threads: 2, rate: 100, reportIntervalS: 1 });
    expect(plain11).toEqual({ threads: 2, reportIntervalS: 1 });
  });
});

function catchError(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}
