/** Where a study experiment departs from shared/STUDIES.md, its description says so. */
import { join, resolve } from 'node:path';
import { loadSpecFile } from '../../core/spec/validate';

const repoRoot = resolve(__dirname, '../..');

describe('experiment deviations from STUDIES.md are named in the description', () => {
  it('S3 (write-forwarding.json) says it keeps two readers throughout where the study has 1 writer + 1 reader', () => {
    // Act
    const { spec } = loadSpecFile(join(repoRoot, 'experiments', 'write-forwarding.json'), join(repoRoot, 'client', 'workloads'));

    // Assert: the description names the deviation, and the file does what it says.
    expect(spec.description).toMatch(/Deviation from STUDIES\.md S3, which has 1 writer \+ 1 reader and a second reader only for the scale-out: this cluster keeps two readers throughout/);
    expect(spec.variants.map((v) => v.readers)).toEqual([2]);
  });
});
