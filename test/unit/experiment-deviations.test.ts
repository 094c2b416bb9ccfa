/**
 * Where a study experiment departs from the original study (docs/studies.md lists each deviation and
 * why), the experiment file does what that deviation says: checked on what the file runs, not on how
 * its description words it.
 */
import { join, resolve } from 'node:path';
import { loadSpecFile } from '../../core/experiment/validate';

const repoRoot = resolve(__dirname, '../..');
const load = (file: string) =>
  loadSpecFile(join(repoRoot, 'experiments', file), join(repoRoot, 'client', 'workloads')).spec;

describe('experiment deviations from the original studies (docs/studies.md)', () => {
  it('S3 (write-forwarding.json) keeps two readers in every variant, throughout the run', () => {
    // Act
    const spec = load('write-forwarding.json');

    // Assert
    expect(spec.variants.map((v) => v.readers)).toEqual([2]);
  });

  it('S1 (graviton-vs-intel.json) gives each cluster its own c5.2xlarge client instead of one shared per AZ', () => {
    // Act
    const spec = load('graviton-vs-intel.json');

    // Assert
    expect(spec.variants.map((v) => v.clients.count)).toEqual([1, 1, 1, 1]);
    expect(new Set(spec.variants.map((v) => v.clients.instanceType))).toEqual(new Set(['c5.2xlarge']));
  });

  it('S1 (graviton-vs-intel.json) runs Aurora MySQL 3 (MySQL 8.0 compatible), not the retired 2.10.0', () => {
    // Act
    const spec = load('graviton-vs-intel.json');

    // Assert: a 3.x version in either accepted spelling ("3.10.4" or "8.0.mysql_aurora.3.10.4").
    expect(spec.engine.version).toMatch(/^3\.|^8\.0\.mysql_aurora\.3\./);
  });
});
