/**
 * Rounds: a spec's repeats as a range, and the questions that decide when to stop.
 * Imports are type-only, since schema.ts calls roundsIssues.
 */
import type { HistoryQuestion, HorizonQuestion, Question, QuestionMetric, Spec } from './schema';

type RoundsSpec = Pick<Spec, 'repeats' | 'questions' | 'order' | 'variants' | 'workloads'>;

/** The fewest and most rounds a run may have. A fixed repeat count is both. */
export function repeatRange(spec: Pick<Spec, 'repeats'>): { readonly min: number; readonly max: number } {
  // A spec read back from a lake may predate the default, so no repeats means one.
  const repeats = (spec.repeats as Spec['repeats'] | undefined) ?? 1;
  return typeof repeats === 'number' ? { min: repeats, max: repeats } : repeats;
}

/** The repeats the plan expands to, every round the run may need. */
export function maxRepeats(spec: Pick<Spec, 'repeats'>): number {
  return repeatRange(spec).max;
}

/** e.g. "3 repeats", or "2-10 rounds, 1 question" for a range. */
/** A range of rounds as a reader reads it. It is one number when the fewest and the most agree. */
export const roundsSpan = (min: number, max: number): string => (min === max ? `${min}` : `${min}-${max}`);

export function repeatsText(spec: Pick<Spec, 'repeats' | 'questions'>): string {
  const q = spec.questions?.length ?? 0;
  const asked = q > 0 ? `, ${q} question${q === 1 ? '' : 's'}` : '';
  if (typeof spec.repeats === 'number') return `${spec.repeats} repeat${spec.repeats === 1 ? '' : 's'}${asked}`;
  const { min, max } = spec.repeats;
  return `${roundsSpan(min, max)} round${max === 1 ? '' : 's'}${asked}`;
}

/** The path of the manifest note that says how many rounds ran and why they stopped. */
export const ROUNDS_NOTE_PATH = 'rounds';

/** A question with its id given or defaulted. */
export type NamedQuestion = Question & { readonly id: string };
export type NamedHorizonQuestion = HorizonQuestion & { readonly id: string };
export type NamedHistoryQuestion = HistoryQuestion & { readonly id: string };

export const isHistoryQuestion = <Q extends Question>(q: Q): q is Q & HistoryQuestion => q.against === 'history';

function questionId(q: Question): string {
  if (isHistoryQuestion(q))
    return q.id ?? [q.variant, q.workload, q.metric].filter((x) => x !== undefined).join('-') + '-vs-history';
  return q.id ?? `${q.candidate}-vs-${q.baseline}-${q.metric}`;
}

export function namedQuestions(spec: Pick<Spec, 'questions'>): NamedQuestion[] {
  return (spec.questions ?? []).map((q) => ({ ...q, id: questionId(q) }));
}

/** Whether a metric is better when lower, so a ratio above 1 is worse. */
export function lowerIsBetter(metric: QuestionMetric): boolean {
  return /^p\d+$/.test(metric);
}

interface Issue {
  readonly message: string;
  readonly path: (string | number)[];
}

/** What the schema refuses about repeats and questions, with their JSON paths. */
export function roundsIssues(spec: RoundsSpec): Issue[] {
  const issues: Issue[] = [];
  const range = repeatRange(spec);
  if (typeof spec.repeats !== 'number') {
    if (range.min > range.max)
      issues.push({ message: `min ${range.min} is more than max ${range.max}`, path: ['repeats', 'min'] });
    if (spec.questions === undefined)
      issues.push({
        message:
          'a range of repeats needs questions: they decide when the run stops between min and max; add ' +
          '"questions", or give repeats as a number',
        path: ['repeats'],
      });
  }
  if (spec.questions === undefined) return issues;
  if (spec.order === 'sequential')
    issues.push({
      message:
        'questions are judged after each round of every variant, but order "sequential" runs all repeats of ' +
        'a variant first: use order "interleaved", "randomized" or "duet"',
      path: ['order'],
    });
  const variants = spec.variants.map((v) => v.name);
  const workloads = spec.workloads.map((w) => w.name);
  const seen = new Set<string>();
  const history = isHistoryQuestion(spec.questions[0]!);
  spec.questions.forEach((q, i) => {
    const id = questionId(q);
    if (seen.has(id))
      issues.push({ message: `duplicate question id "${id}": give each an "id"`, path: ['questions', i, 'id'] });
    seen.add(id);
    if (q.workload !== undefined && !workloads.includes(q.workload))
      issues.push({
        message: `no workload "${q.workload}" in this experiment (workloads: ${workloads.join(', ')})`,
        path: ['questions', i, 'workload'],
      });
    // One stop rule a run, since the history test and the horizons judge rounds differently.
    if (isHistoryQuestion(q) !== history)
      issues.push({
        message: 'questions against history and between variants do not mix in one experiment: use one kind',
        path: ['questions', i, 'against'],
      });
    if (isHistoryQuestion(q)) {
      if (q.variant !== undefined && !variants.includes(q.variant))
        issues.push({
          message: `no variant "${q.variant}" in this experiment (variants: ${variants.join(', ')})`,
          path: ['questions', i, 'variant'],
        });
      return;
    }
    for (const key of ['baseline', 'candidate'] as const) {
      if (!variants.includes(q[key]))
        issues.push({
          message: `no variant "${q[key]}" in this experiment (variants: ${variants.join(', ')})`,
          path: ['questions', i, key],
        });
    }
    if (q.baseline === q.candidate)
      issues.push({ message: `compares "${q.baseline}" with itself`, path: ['questions', i, 'candidate'] });
  });
  return issues;
}
