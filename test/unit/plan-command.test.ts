/**
 * `plan`'s command (core/cli/plan-command.ts): the nightly schedule's cost comes from the config bin
 * reads from cdk.json and passes in, asked for only on AWS, and printed only for the experiment it names.
 */
import { join, resolve } from 'node:path';
import { planAction } from '../../core/cli/plan-command';

const repoRoot = resolve(__dirname, '../..');
const context = { repoRoot, builtinWorkloads: join(repoRoot, 'client', 'workloads'), runRoot: undefined };
const schedule = { enabled: true, cron: 'cron(0 2 * * ? *)', timeZone: 'UTC' };

async function planText(file: string, aws: boolean, nightly: () => Promise<typeof schedule & { experiment: string }>) {
  const out: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const code = await planAction(file, { backend: aws ? 'aws' : 'local', scale: 'full' }, { ...context, nightly });
    return { code, text: out.join('') };
  } finally {
    write.mockRestore();
  }
}

describe('planAction', () => {
  it('on AWS prints the monthly cost of the schedule passed in, for the experiment it names', async () => {
    // Arrange
    const nightly = jest.fn(() => Promise.resolve({ ...schedule, experiment: 'experiments/quickstart.json' }));

    // Act
    const { code, text } = await planText(join(repoRoot, 'experiments', 'quickstart.json'), true, nightly);

    // Assert
    expect(code).toBe(0);
    expect(nightly).toHaveBeenCalledTimes(1);
    expect(text).toMatch(/Nightly schedule cron\(0 2 \* \* \? \*\) UTC \(cdk\.json aurora-bench\.nightly, on\): /);
  });

  it('prints no nightly line for another experiment, and a local plan does not ask for the schedule', async () => {
    // Arrange
    const nightly = jest.fn(() => Promise.resolve({ ...schedule, experiment: 'experiments/nightly-regression.json' }));
    const file = join(repoRoot, 'experiments', 'quickstart.json');

    // Act
    const onAws = await planText(file, true, nightly);
    const local = await planText(file, false, nightly);

    // Assert
    expect(onAws.text).not.toContain('Nightly schedule');
    expect(nightly).toHaveBeenCalledTimes(1);
    expect(local.text).not.toContain('Nightly schedule');
  });
});
