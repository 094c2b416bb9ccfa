/** Where a study experiment departs from the original study, its description says so. */
import { join, resolve } from 'node:path';
import { loadSpecFile } from '../../core/experiment/validate';

const repoRoot = resolve(__dirname, '../..');

describe('experiment deviations from the original studies are named in the description', () => {
  it('S3 (write-forwarding.json) says it keeps two readers throughout where the study has 1 writer + 1 reader', () => {
    // Act
    const { spec } = loadSpecFile(join(repoRoot, 'experiments', 'write-forwarding.json'), join(repoRoot, 'client', 'workloads'));

    // Assert: the description names the deviation, and the file does what it says.
    expect(spec.description).toMatch(/Deviation from the original study, which has 1 writer \+ 1 reader and a second reader only for the scale-out: this cluster keeps two readers throughout/);
    expect(spec.variants.map((v) => v.readers)).toEqual([2]);
  });

  it('S1 (graviton-vs-intel.json) says each cluster has its own client where the study shares one client per AZ', () => {
    const { spec } = loadSpecFile(join(repoRoot, 'experiments', 'graviton-vs-intel.json'), join(repoRoot, 'client', 'workloads'));
    expect(spec.description).toMatch(/Deviation from the original study, which has one c5\.2xlarge client per AZ serving both clusters of that AZ: here each cluster has its own c5\.2xlarge client/);
    expect(spec.variants.map((v) => v.clients.count)).toEqual([1, 1, 1, 1]);
    expect(new Set(spec.variants.map((v) => v.clients.instanceType))).toEqual(new Set(['c5.2xlarge']));
  });

  it('S1 (graviton-vs-intel.json) says it runs a current Aurora MySQL release instead of the retired 2.10.0', () => {
    // Act
    const { spec } = loadSpecFile(join(repoRoot, 'experiments', 'graviton-vs-intel.json'), join(repoRoot, 'client', 'workloads'));
    // Assert
    expect(spec.description).toMatch(/the study ran Aurora MySQL 2\.10\.0 \(MySQL 5\.7 compatible\), which RDS no longer offers/);
    expect(spec.description).toContain(`Aurora MySQL ${spec.engine.version}`);
  });
});
