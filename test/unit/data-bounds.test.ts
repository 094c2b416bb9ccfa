/**
 * core/plan/data-bounds.ts and core/plan/step-looks.ts: a data set is bounded by what its backend can
 * hold (the run root's free space locally, the engine's storage on AWS), refused at data.tableSize
 * before anything starts; and counting a step's looks is not proportional to its deadline, so a huge
 * data set costs the plan no loop of billions of turns.
 */
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { localDataRefusals } from '../../core/plan/data-bounds';
import { PlanError } from '../../core/plan/plan';
import { preparePlan } from '../../core/plan/prepare';
import { lookAgainAfterS, looksUntil } from '../../core/plan/step-looks';

const NOW = new Date('2026-01-01T00:00:00Z');

function spec(tableSize: number, kind: 'aurora-mysql' | 'rds-mysql' = 'aurora-mysql'): SpecInput {
  return {
    name: 'big',
    engine: kind === 'aurora-mysql' ? { version: '3.04.0' } : { kind, version: '8.0.36' },
    variants: [{ name: 'v', instanceClass: 'db.r6g.large', readers: 1 }],
    data: { tables: 1, tableSize },
    defaults: { durationS: 5, warmupS: 0, reportIntervalS: 1 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1] }],
  };
}

/** The loop looksUntil replaced: one turn per look. */
function looksByLoop(deadlineS: number): number {
  let waited = 0;
  let looks = 0;
  while (waited <= deadlineS) {
    looks++;
    waited += lookAgainAfterS(looks);
  }
  return looks;
}

describe('data bounds', () => {
  it('counts looks as the loop does, for every deadline up to 3 h', () => {
    // Act
    const differing = Array.from({ length: 10_801 }, (_, s) => s).filter((s) => looksUntil(s) !== looksByLoop(s));

    // Assert
    expect(differing).toEqual([]);
  });

  it("counts the looks of the schema's largest data set without a turn per look", () => {
    // Arrange: the prepare deadline of Number.MAX_SAFE_INTEGER rows, 1 s per 2,000 rows.
    const deadlineS = Math.ceil(Number.MAX_SAFE_INTEGER / 2000);

    // Act
    const looks = looksUntil(deadlineS);

    // Assert: nine looks back off over 751 s (10 + 15 + ... + 257); every later one is 300 s after the one before.
    expect(looks).toBe(9 + Math.floor((deadlineS - 751) / 300) + 1);
  });

  it("refuses on AWS, at data.tableSize, more rows than the engine's storage holds, before planning", () => {
    // Arrange
    const loaded = { spec: validateSpec(spec(Number.MAX_SAFE_INTEGER)), scripts: {} };

    // Act
    const refusal = (() => {
      try {
        preparePlan(loaded, { backend: 'aws', now: NOW, source: 'big.json' });
        return undefined;
      } catch (e) {
        return e;
      }
    })();

    // Assert
    expect(refusal).toBeInstanceOf(PlanError);
    expect((refusal as PlanError).message).toMatch(/data\.tableSize.*more than what Aurora MySQL .* holds on AWS/s);
  });

  it('refuses on RDS what one instance cannot hold, and plans what it can', () => {
    // Arrange: 100 TiB of rows at 500 bytes each; then 100,000,000 rows (47 GiB).
    const over = validateSpec(spec(Math.ceil((100 * 2 ** 40) / 500), 'rds-mysql'));
    const under = validateSpec(spec(100_000_000, 'rds-mysql'));

    // Act
    const shown = preparePlan({ spec: over, scripts: {} }, { backend: 'aws', now: NOW, refusals: 'show' });
    const fits = preparePlan({ spec: under, scripts: {} }, { backend: 'aws', now: NOW, refusals: 'show' });

    // Assert
    expect(shown.notes.filter((n) => n.level === 'refused').map((n) => n.path)).toContain('data.tableSize');
    expect(fits.notes.filter((n) => n.path === 'data.tableSize' && n.level === 'refused')).toEqual([]);
  });

  it("refuses locally a data set the run root's free space cannot hold, a copy per server", () => {
    // Arrange: 1 GiB free; 2 servers (a writer and a reader) of 1,000,000 rows at 500 bytes each need 0.93 GiB.
    const room = { bytes: 2 ** 30, what: 'the space free under the run root /r' };

    // Act
    const fits = localDataRefusals(validateSpec(spec(1_000_000)), room);
    const over = localDataRefusals(validateSpec(spec(2_000_000)), room);

    // Assert
    expect(fits).toEqual([]);
    expect(over.map((n) => [n.level, n.path])).toEqual([['refused', 'data.tableSize']]);
    expect(over[0]!.message).toMatch(/run root \/r/);
  });
});
