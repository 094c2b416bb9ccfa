import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalLakeStore } from '../../core/backends/local/local-lake';

let root: string;
let lake: LocalLakeStore;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ab-lake-unit-'));
  lake = new LocalLakeStore(join(root, 'lake'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('LocalLakeStore', () => {
  it('puts under new directories and gets back what it put', async () => {
    // Act
    await lake.put('tables/steps/dt=2026-01-01/run__cell__step.jsonl', '{"a":1}\n');
    await lake.put('raw/dt=2026-01-01/run/cell/step/run/client-1/result.json', new TextEncoder().encode('{}'));

    // Assert
    expect(await lake.get('tables/steps/dt=2026-01-01/run__cell__step.jsonl')).toBe('{"a":1}\n');
    expect(await lake.get('raw/dt=2026-01-01/run/cell/step/run/client-1/result.json')).toBe('{}');
  });

  it('returns undefined for a missing key, also under a missing directory', async () => {
    // Act / Assert
    expect(await lake.get('tables/runs/dt=2026-01-01/nope.jsonl')).toBeUndefined();
    expect(await lake.get('nothing-here')).toBeUndefined();
  });

  it('replaces a file whole and leaves no temp file behind', async () => {
    // Act
    await lake.put('tables/runs/dt=2026-01-01/r.jsonl', 'first\n');
    await lake.put('tables/runs/dt=2026-01-01/r.jsonl', 'second\n');

    // Assert
    expect(await lake.get('tables/runs/dt=2026-01-01/r.jsonl')).toBe('second\n');
    expect(readdirSync(join(root, 'lake', 'tables', 'runs', 'dt=2026-01-01'))).toEqual(['r.jsonl']);
  });

  it('lists keys by string prefix, sorted, across directories', async () => {
    // Arrange
    for (const key of [
      'tables/steps/dt=2026-01-02/b.jsonl',
      'tables/steps/dt=2026-01-01/a.jsonl',
      'tables/intervals/dt=2026-01-01/a.jsonl',
      'tables/stepsX/other.jsonl',
    ]) {
      await lake.put(key, 'x');
    }

    // Act
    const steps = await lake.list('tables/steps/');
    const partial = await lake.list('tables/steps/dt=2026-01-0');
    const all = await lake.list('');
    const none = await lake.list('tables/missing/');

    // Assert
    expect(steps).toEqual(['tables/steps/dt=2026-01-01/a.jsonl', 'tables/steps/dt=2026-01-02/b.jsonl']);
    expect(partial).toEqual(steps);
    expect(all).toHaveLength(4);
    expect(none).toEqual([]);
  });

  it('refuses keys that would leave the lake', async () => {
    // Act / Assert
    await expect(lake.put('../escape.txt', 'x')).rejects.toThrow(/invalid lake key/);
    await expect(lake.get('/etc/passwd')).rejects.toThrow(/invalid lake key/);
  });

  it('describes itself as a file URL', () => {
    // Act / Assert
    expect(lake.describe()).toBe(`file://${join(root, 'lake')}`);
  });
});
