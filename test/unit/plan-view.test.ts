/**
 * How `plan` prints a plan: counts in words, the rate a step offers, what the figures do not cover,
 * and a text table whose work is linear in its rows (counted, not timed: each cell is measured
 * once, so a table of 2N rows does exactly twice the measuring of one of N, plus the head).
 */
import { planNotesLine, rateText, renderPlan } from '../../core/cli/plan-view';
import { validateSpec } from '../../core/experiment/validate';
import type { SpecInput } from '../../core/experiment/schema';
import { textTable } from '../../core/format';
import { planRun } from '../../core/plan/plan';

const NOW = new Date('2026-11-21T10:20:30Z');

function planOf(over: Partial<SpecInput> = {}) {
  return planRun(
    validateSpec({
      name: 'plan-view-test',
      engine: { version: '3.04.0' },
      variants: [{ name: 'r5', instanceClass: 'db.r5.large' }],
      data: { tables: 2, tableSize: 1000 },
      defaults: { durationS: 10, warmupS: 2 },
      workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [4] }],
      repeats: 1,
      ...over,
    }),
    { backend: 'local', now: NOW },
  );
}

describe('plan text', () => {
  it('says "1 cell", not "1 cells", and "2 cells" for two', () => {
    expect(renderPlan(planOf())).toMatch(/, 1 cell, max/);
    expect(renderPlan(planOf({ repeats: 2 }))).toMatch(/, 2 cells, max/);
  });

  it('shows the multiple of capacity a step offers instead of "max", and "max" only for the unlimited probe', () => {
    // Arrange
    const plan = planOf({
      workloads: [
        { name: 'ins', test: 'oltp_insert', threads: [8], rates: [0], ratesOfCapacity: [0.5, 6], stopAtOverload: true },
      ],
    });
    // Act
    const text = renderPlan(plan);
    const rates = plan.cells[0]!.steps.map(rateText);
    // Assert
    expect(rates).toEqual(['max', '0.5× capacity', '6× capacity']);
    expect(text).toMatch(/ins-t8-c50 .*0\.5× capacity/);
    expect(text).toMatch(/ins-t8-c600 .*6× capacity/);
    expect(rateText({ rate: 2000 })).toBe('2,000');
  });

  it('says that stopAtOverload makes the time and cost an upper bound', () => {
    const plan = planOf({
      workloads: [{ name: 'ins', test: 'oltp_insert', threads: [8], rates: [1000, 2000, 0], stopAtOverload: true }],
    });
    expect(renderPlan(plan, ['On AWS the same experiment would cost about $1.00'])).toMatch(
      new RegExp(
        /upper bound: \d+ steps with stopAtOverload are skipped when a lower rate of their sweep/.source +
          / overloads; the time and cost below count every one as if it ran/.source,
      ),
    );
    expect(renderPlan(planOf())).not.toMatch(/upper bound/);
  });

  it('says that one repeat measures no run-to-run noise, and says nothing of it with two', () => {
    expect(renderPlan(planOf())).toMatch(/one repeat per variant: the run measures no run-to-run noise/);
    expect(renderPlan(planOf({ repeats: 2 }))).not.toMatch(/run-to-run noise/);
  });

  it('lists every step of a 10,000-step cell', () => {
    // Arrange: 100 workloads x 100 thread counts
    const workloads = Array.from({ length: 100 }, (_, w) => ({
      name: `w${w}`,
      test: 'oltp_read_write' as const,
      threads: Array.from({ length: 100 }, (_, k) => k + 1),
    }));
    // Act
    const text = renderPlan(planOf({ workloads }));
    // Assert
    expect(text.split('\n').filter((l) => /^│ w\d+-t\d+ /.test(l))).toHaveLength(10_000);
    expect(text).toMatch(/│ w99-t100 +│ oltp_read_write │ +100 │/);
  });

  it.each([2_500, 5_000, 10_000])('measures each cell of a %i-row table exactly once (linear work)', (rows) => {
    // Arrange
    let measured = 0;
    const measure = (s: string) => {
      measured++;
      return s.length;
    };
    const body = Array.from({ length: rows }, (_, i) => [`step-${i}`, i, 'writer']);
    // Act
    const text = textTable(['step', 'threads', 'target'], body, { measure });
    // Assert: (rows + head) x 3 columns, and one line per row plus the head and three rules
    expect(measured).toBe((rows + 1) * 3);
    expect(text.split('\n')).toHaveLength(rows + 4);
  });

  it('escapes control characters and line breaks in a cell, so a row stays one line', () => {
    const text = textTable(['name'], [['a\u001b]0;title\u0007\nb']]);
    expect(text).toContain('a\\x1b]0;title\\x07\\nb');
    expect(text.split('\n')).toHaveLength(5);
  });

  it('collapses the notes before a run into one line that says how to list them', () => {
    const line = planNotesLine(
      [
        { level: 'info', path: 'data', message: 'scaled' },
        { level: 'info', path: 'defaults', message: 'scaled' },
        { level: 'warning', path: 'variants[*]', message: 'emulated' },
      ],
      ['my study.json', '--scale', 'small'],
    );
    expect(line).toBe('3 plan notes (2 info, 1 warning): `aurora-bench plan "my study.json" --scale small` lists them');
    expect(planNotesLine([], ['x.json'])).toBeNull();
    // quoted for a shell: double quotes around a quote, single quotes around $ and backslashes
    expect(planNotesLine([{ level: 'info', path: 'data', message: 'scaled' }], ["it's.json"])).toContain(
      '`aurora-bench plan "it\'s.json"`',
    );
    expect(planNotesLine([{ level: 'info', path: 'data', message: 'scaled' }], ["$HOME's.json"])).toContain(
      "`aurora-bench plan '$HOME'\\''s.json'`",
    );
  });
});
