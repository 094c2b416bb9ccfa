/**
 * `plan --aws` says how many On-Demand vCPUs an experiment runs at once on the quota the preflight
 * checks, offline, so the quota can be asked for before a first run.
 */
import { join } from 'node:path';
import { instanceSizeVcpus, planVcpuLine } from '../../core/backends/aws/vcpu-quota';
import { preparePlanFromFile } from '../../core/plan/prepare';

const ROOT = join(__dirname, '..', '..');
const planOf = (file: string) =>
  preparePlanFromFile(join(ROOT, 'experiments', file), join(ROOT, 'client', 'workloads'), { backend: 'aws' }).plan;

test('an instance size gives its default vCPUs; a T type or metal is not guessed', () => {
  expect(['c6g.medium', 'c5.large', 'c7g.xlarge', 'c5.2xlarge', 'r6g.16xlarge'].map(instanceSizeVcpus)).toEqual([
    1, 2, 4, 8, 64,
  ]);
  expect(['t3.micro', 't4g.large', 'c6g.metal', 'm7i.metal-24xl'].map(instanceSizeVcpus)).toEqual([
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
});

test.each([
  ['graviton4-vs-graviton3-vs-graviton2.json', 48],
  ['graviton-vs-intel.json', 32],
])('%s needs %i vCPUs at once on L-1216C47A', (file, vcpus) => {
  const line = planVcpuLine(planOf(file));

  expect(line).toMatch(new RegExp(`^On-Demand vCPUs at once: ${vcpus} \\(`));
  expect(line).toContain('L-1216C47A');
});
