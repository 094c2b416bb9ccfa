/** A range of rounds reads as one number when its fewest and most are the same ("2 rounds", not "2-2 rounds"). */
import { join } from 'node:path';
import { repeatsText, roundsSpan } from '../../core/experiment/rounds';
import { scaleSpec } from '../../core/experiment/scale';
import { loadSpecFile } from '../../core/experiment/validate';

const repoRoot = join(__dirname, '..', '..');

describe('roundsSpan', () => {
  it('gives a range only where the rounds can differ', () => {
    expect(roundsSpan(2, 3)).toBe('2-3');
    expect(roundsSpan(2, 2)).toBe('2');
    expect(repeatsText({ repeats: { min: 1, max: 1 } })).toBe('1 round');
  });

  it('says the rounds --scale small keeps without a range of one', () => {
    // Arrange: the study asks for 2-3 rounds; the small scale keeps at most 2.
    const { spec } = loadSpecFile(
      join(repoRoot, 'experiments', 'graviton-vs-intel.json'),
      join(repoRoot, 'client', 'workloads'),
    );

    // Act
    const { notes } = scaleSpec(spec, 'small');

    // Assert
    expect(notes.find((n) => n.path === 'repeats')?.message).toBe(
      'scaled for a local rehearsal: 2-3 rounds -> 2 rounds',
    );
  });
});
