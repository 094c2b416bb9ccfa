/**
 * Rounds: a spec's repeats as a range and the questions that decide when to stop. A round is one
 * repeat of every variant, in the experiment's order. Type-only imports: schema.ts calls roundsIssues.
 */
import type { Question, QuestionMetric, Spec } from './schema';

type RoundsSpec = Pick<Spec, 'repeats' | 'questions' | 'order' | 'variants' | 'workloads'>;

/** The fewest and most rounds a run may have: a fixed repeat count is both. */
export function repeatRange(spec: Pick<Spec, 'repeats'>): { readonly min: number; readonly max: number } {
  // A spec read back from a lake may predate the default (no repeats: one).
  const repeats = (spec.repeats as Spec['repeats'] | undefined) ?? 1;
  return typeof repeats === 'number' ? { min: repeats, max: repeats } : repeats;
}

/** The repeats the plan expands to: every round the run may need. */
export function maxRepeats(spec: Pick<Spec, 'repeats'>): number {
  return repeatRange(spec).max;
}

/** "3 repeats", or "2-10 rounds, 1 question" for a range. */
export function repeatsText(spec: Pick<Spec, 'repeats' | 'questions'>): string {
  const q = spec.questions?.length ?? 0;
  const asked = q > 0 ? `, ${q} question${q === 1 ? '' : 's'}` : '';
  if (typeof spec.repeats === 'number') return `${spec.repeats} repeat${spec.repeats === 1 ? '' : 's'}${asked}`;
  return `${spec.repeats.min}-${spec.repeats.max} rounds${asked}`;
}

/** The path of the run manifest's note that says how many rounds ran and why they stopped. */
export const ROUNDS_NOTE_PATH = 'rounds';

/** A question with its id given or defaulted. */
export interface NamedQuestion extends Question {
  readonly id: string;
}

function questionId(q: Pick<Question, 'id' | 'baseline' | 'candidate' | 'metric'>): string {
  return q.id ?? `${q.candidate}-vs-${q.baseline}-${q.metric}`;
}

export function namedQuestions(spec: Pick<Spec, 'questions'>): NamedQuestion[] {
  return (spec.questions ?? []).map((q) => ({ ...q, id: questionId(q) }));
}

/** Whether a metric is better when lower (latency), so a ratio above 1 is worse. */
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
  spec.questions.forEach((q, i) => {
    for (const key of ['baseline', 'candidate'] as const) {
      if (!variants.includes(q[key]))
        issues.push({
          message: `no variant "${q[key]}" in this experiment (variants: ${variants.join(', ')})`,
          path: ['questions', i, key],
        });
    }
    if (q.baseline === q.candidate)
      issues.push({ message: `compares "${q.baseline}" with itself`, path: ['questions', i, 'candidate'] });
    if (q.workload !== undefined && !workloads.includes(q.workload))
      issues.push({
        message: `no workload "${q.workload}" in this experiment (workloads: ${workloads.join(', ')})`,
        path: ['questions', i, 'workload'],
      });
    const id = questionId(q);
    if (seen.has(id))
      issues.push({ message: `duplicate question id "${id}": give each an "id"`, path: ['questions', i, 'id'] });
    seen.add(id);
  });
  return issues;
}
