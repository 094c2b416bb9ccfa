/**
 * A run id is claimed in the lake itself (lakeKeys.runClaim, LakeStore.createOnce): of any number
 * of runs claiming one id in one local lake at once, from whatever run root, exactly one gets it,
 * and the claim stays, so a later run with that id is refused too.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalLakeStore } from '../../core/backends/local/local-lake';
import { lakeKeys } from '../../core/lake/rows';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ab-run-claim-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('run id claims in the lake', () => {
  it('gives one id to exactly one of eight claims made at once, through separate stores of one lake', async () => {
    // Arrange: a store per run, as two run roots sharing a lake each open their own
    const stores = Array.from({ length: 8 }, () => new LocalLakeStore(join(root, 'lake')));
    const key = lakeKeys.runClaim('fixed-1');

    // Act
    const got = await Promise.all(stores.map((s, i) => s.createOnce(key, `{"claimant":${i}}\n`)));
    const later = await stores[0]!.createOnce(key, '{"claimant":"later"}\n');

    // Assert
    expect(got.filter(Boolean)).toHaveLength(1);
    expect(later).toBe(false);
    const winner = got.indexOf(true);
    expect(readFileSync(join(root, 'lake', key), 'utf8')).toBe(`{"claimant":${winner}}\n`);
  });
});
