/** Questions and a repeats range: what validation refuses, by JSON path, and what it accepts. */
import { SpecError, validateSpec, type SpecProblem } from '../../core/experiment/validate';
import type { SpecInput } from '../../core/experiment/schema';
import { repeatRange } from '../../core/experiment/rounds';

function base(): SpecInput {
  return {
    name: 'q',
    engine: { version: '3.04.0' },
    variants: [
      { name: 'a', instanceClass: 'db.r6g.large' },
      { name: 'b', instanceClass: 'db.r5.large' },
    ],
    data: { tables: 1, tableSize: 100 },
    workloads: [{ name: 'rw', test: 'oltp_read_write' }],
    repeats: { min: 2, max: 6 },
    questions: [{ baseline: 'a', candidate: 'b', metric: 'tps', horizons: [5] }],
  };
}

function problemsOf(doc: unknown): SpecProblem[] {
  try {
    validateSpec(doc, 'x.json');
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    expect((e as Error).message).toMatch(/^x\.json: invalid experiment spec/);
    return [...(e as SpecError).problems];
  }
  throw new Error('expected the spec to be invalid');
}

describe('questions', () => {
  it('accepts a question on two variants with a repeats range', () => {
    const spec = validateSpec(base(), 'x.json');
    expect(repeatRange(spec)).toEqual({ min: 2, max: 6 });
  });

  it.each([
    ['baseline', { baseline: 'nope' }, 'questions[0].baseline', /no variant "nope"/],
    ['candidate', { candidate: 'zz' }, 'questions[0].candidate', /no variant "zz"/],
    ['workload', { workload: 'other' }, 'questions[0].workload', /no workload "other"/],
    ['metric', { metric: 'latency' }, 'questions[0].metric', /expected one of "tps"/],
    ['horizon', { horizons: [0] }, 'questions[0].horizons[0]', /.+/],
    ['itself', { candidate: 'a' }, 'questions[0].candidate', /itself/],
  ])('refuses a question naming no %s of the experiment, at its path', (_what, change, path, message) => {
    // A bad metric is not a SpecInput: the document is what a user could write.
    const doc: Record<string, unknown> = { ...base() };
    doc.questions = [{ ...base().questions![0]!, ...change }];
    const problems = problemsOf(doc);
    expect(problems).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it('refuses a range without questions, a min above max and order sequential', () => {
    expect(problemsOf({ ...base(), questions: undefined }).map((p) => p.path)).toEqual(['repeats']);
    expect(problemsOf({ ...base(), repeats: { min: 5, max: 3 } }).map((p) => p.path)).toEqual(['repeats.min']);
    expect(problemsOf({ ...base(), order: 'sequential' }).map((p) => p.path)).toEqual(['order']);
  });

  it('refuses two questions with the same id', () => {
    const doc = base();
    doc.questions = [doc.questions![0]!, doc.questions![0]!];
    expect(problemsOf(doc).map((p) => p.path)).toEqual(['questions[1].id']);
  });

  it('keeps a fixed repeat count as it was', () => {
    const spec = validateSpec({ ...base(), repeats: 3, questions: undefined }, 'x.json');
    expect(spec.repeats).toBe(3);
    expect(repeatRange(spec)).toEqual({ min: 3, max: 3 });
  });
});
