/**
 * experiments/nightly-regression.json, the default nightly input: it validates, passes the Aurora
 * parameter catalogue, plans on AWS within its budget, and is what a nightly history needs (the
 * three OLTP mixes, steps long enough to be stable, interleaved rounds judged against its history).
 */
import { join, resolve } from 'node:path';
import { auroraParameterProblems } from '../../core/experiment/aurora-parameters';
import { planRun } from '../../core/plan/plan';
import { maxRepeats } from '../../core/experiment/rounds';
import { checkBudget, loadPrices } from '../../core/plan/cost';
import { loadSpecFile } from '../../core/experiment/validate';
import { parseAppConfig } from '../../lib/config';

const repoRoot = resolve(__dirname, '../..');
const file = join(repoRoot, 'experiments', 'nightly-regression.json');

describe('the nightly regression experiment', () => {
  it('validates, has no Aurora parameter problem, and plans on AWS within its budget', () => {
    // Act
    const { spec, scripts } = loadSpecFile(file, join(repoRoot, 'client', 'workloads'));
    const plan = planRun(spec, { backend: 'aws', scripts, source: file });
    const cost = checkBudget(plan, spec.budget, loadPrices(repoRoot));
    // Assert
    expect(auroraParameterProblems(spec)).toEqual([]);
    expect(plan.cells).toHaveLength(spec.variants.length * maxRepeats(spec));
    expect(plan.notes.filter((n) => n.level === 'refused')).toEqual([]);
    expect(cost.total).not.toBeNull();
    expect(cost.total!).toBeLessThanOrEqual(spec.budget!.maxUsd);
  });

  it('runs the three OLTP mixes on small classes in long, warmed-up steps with interleaved rounds', () => {
    // Act
    const { spec } = loadSpecFile(file, join(repoRoot, 'client', 'workloads'));
    const plan = planRun(spec, { backend: 'aws' });
    // Assert
    expect(spec.workloads.map((w) => w.test).sort()).toEqual(['oltp_read_only', 'oltp_read_write', 'oltp_write_only']);
    expect(spec.variants.every((v) => /^db\.[a-z0-9]+\.large$/.test(v.instanceClass))).toBe(true);
    expect(plan.cells.flatMap((c) => c.steps).every((s) => s.durationS >= 300 && s.warmupS >= 60)).toBe(true);
    expect(spec.repeats).toEqual({ min: 1, max: 3 });
    expect(spec.order).toBe('interleaved');
    expect(plan.cells.map((c) => c.variant.name)).toEqual([
      'r6g-large',
      'r7g-large',
      'r7g-large',
      'r6g-large',
      'r6g-large',
      'r7g-large',
    ]);
  });

  it('stops on its history: one question against history on every step of every variant', () => {
    // Act
    const { spec } = loadSpecFile(file, join(repoRoot, 'client', 'workloads'));
    // Assert
    expect(spec.questions).toEqual([{ id: 'tps-vs-history', against: 'history', metric: 'tps' }]);
  });

  it('is the nightly input by default', () => {
    // Act
    const config = parseAppConfig({ nightly: { enabled: true } });
    // Assert
    expect(config.nightly.experiment).toBe('experiments/nightly-regression.json');
  });
});
