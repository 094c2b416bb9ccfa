/** Questions and a repeats range: what validation refuses, by JSON path, and what it accepts. */
import { SpecError, validateSpec, type SpecProblem } from '../../core/experiment/validate';
import type { SpecInput } from '../../core/experiment/schema';
import { namedQuestions, repeatRange } from '../../core/experiment/rounds';

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

describe('questions against history', () => {
  const nightly = (question: Record<string, unknown>): Record<string, unknown> => ({
    ...base(),
    repeats: { min: 1, max: 3 },
    questions: [{ against: 'history', metric: 'tps', ...question }],
  });

  it('accepts one on every variant or on one variant and workload, with a default id', () => {
    // Act
    const every = validateSpec(nightly({}), 'x.json');
    const one = validateSpec(nightly({ variant: 'a', workload: 'rw', metric: 'latency' }), 'x.json');
    // Assert
    expect(namedQuestions(every).map((q) => q.id)).toEqual(['tps-vs-history']);
    expect(namedQuestions(one).map((q) => q.id)).toEqual(['a-rw-latency-vs-history']);
  });

  it.each([
    ['variant', { variant: 'nope' }, 'questions[0].variant', /no variant "nope"/],
    ['workload', { workload: 'other' }, 'questions[0].workload', /no workload "other"/],
    ['metric', { metric: 'p95' }, 'questions[0].metric', /expected one of "tps", "qps", "latency"/],
    ['horizons', { horizons: [5] }, 'questions[0]', /unknown field "horizons"/],
    ['kind', { against: 'yesterday' }, 'questions[0].against', /.+/],
  ])('refuses a bad %s, at its path', (_what, change, path, message) => {
    // Act
    const problems = problemsOf(nightly(change));
    // Assert
    expect(problems).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it('refuses mixing them with questions between variants', () => {
    // Arrange
    const doc = nightly({});
    doc.questions = [...(doc.questions as object[]), base().questions![0]!];
    // Act / Assert
    expect(problemsOf(doc)).toEqual([{ path: 'questions[1].against', message: expect.stringMatching(/do not mix/) }]);
  });
});
