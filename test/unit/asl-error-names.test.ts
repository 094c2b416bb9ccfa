/**
 * The state machine's Retry clauses match errors by name, and a Lambda Task reports a thrown error
 * under its `name` (errorType). Step Functions error names are case-sensitive strings; `States.*` are
 * the service's own, `Lambda.*` the Lambda service's exceptions (Step Functions Developer Guide,
 * "Handling errors in Step Functions workflows", Error names). So a renamed class or a misspelt
 * ErrorEquals silently turns a retry into a failed cell: these tests keep both sides in step.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as backendModule from '../../core/backend';
import * as workflowErrors from '../../core/workflow/errors';

const repoRoot = join(__dirname, '..', '..');

interface AslState {
  readonly Type: string;
  readonly Resource?: string;
  readonly Retry?: readonly { readonly ErrorEquals: readonly string[] }[];
  readonly Catch?: readonly { readonly ErrorEquals: readonly string[] }[];
  readonly Iterator?: { readonly States: Record<string, AslState> };
  readonly ItemProcessor?: { readonly States: Record<string, AslState> };
  readonly Branches?: readonly { readonly States: Record<string, AslState> }[];
}

function allStates(states: Record<string, AslState>): [string, AslState][] {
  return Object.entries(states).flatMap(([name, s]) => [
    [name, s] as [string, AslState],
    ...(s.Iterator ? allStates(s.Iterator.States) : []),
    ...(s.ItemProcessor ? allStates(s.ItemProcessor.States) : []),
    ...(s.Branches ?? []).flatMap((b) => allStates(b.States)),
  ]);
}

const asl = JSON.parse(readFileSync(join(repoRoot, 'state-machines', 'benchmark.asl.json'), 'utf8')) as {
  States: Record<string, AslState>;
};
const states = allStates(asl.States);
const tasks = states.filter(([, s]) => s.Type === 'Task');
const retried = (s: AslState) => (s.Retry ?? []).flatMap((r) => r.ErrorEquals);
const serviceName = (name: string) => name.startsWith('States.') || name.startsWith('Lambda.');

/** The errors backends and Tasks throw into the workflow, by name. */
const taskErrorClasses = new Map<string, new (message: string) => Error>(
  Object.values<unknown>({ ...backendModule, ...workflowErrors })
    .filter((v): v is new (message: string) => Error => typeof v === 'function' && v.prototype instanceof Error)
    .map((c) => [new c('x').name, c]),
);

/** What each of those errors makes the state machine do; a new error class must be placed here. */
const RETRIED_ON_EVERY_TASK = ['TransientBackendError'];
const RETRIED_ON_TEARDOWN = ['ResourceStillInUseError'];
const NOT_RETRIED = [
  'InvalidSpecError',
  'InvalidTaskInputError',
  'NotReadyInTimeError',
  'DataPrepareFailedError',
  'ConfigurationNotInEffectError',
  'UnsupportedOnBackendError',
  'MissingDependencyError',
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('ASL error names and error classes', () => {
  it('every error name the ASL matches (but States.* and Lambda.*) names an error class that is thrown', () => {
    // Arrange
    const matched = new Set(
      states
        .flatMap(([, s]) => [...retried(s), ...(s.Catch ?? []).flatMap((c) => c.ErrorEquals)])
        .filter((n) => !serviceName(n)),
    );
    const code = [...sourceFiles(join(repoRoot, 'core')), ...sourceFiles(join(repoRoot, 'lambdas'))]
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');

    // Act
    const withoutClass = [...matched].filter((n) => !taskErrorClasses.has(n));
    // A class's identifier (Function.name) is what `throw new X(...)` writes; its error name may differ.
    const neverThrown = [...matched].filter(
      (n) => taskErrorClasses.has(n) && !code.includes(`new ${taskErrorClasses.get(n)!.name}(`),
    );

    // Assert
    expect(matched.size).toBeGreaterThan(0);
    expect(withoutClass).toEqual([]);
    expect(neverThrown).toEqual([]);
  });

  it('every error class a Task throws is either retried where it should be or deliberately left to the Catch', () => {
    // Arrange
    const placed = [...RETRIED_ON_EVERY_TASK, ...RETRIED_ON_TEARDOWN, ...NOT_RETRIED];

    // Act
    const unplaced = [...taskErrorClasses.keys()].filter((n) => !placed.includes(n));
    const unknown = placed.filter((n) => !taskErrorClasses.has(n));

    // Assert
    expect(unplaced).toEqual([]);
    expect(unknown).toEqual([]);
  });

  it(
    'every Lambda Task retries the transient errors, teardowns also retry resources still in use, RunStep ' +
      'nothing else (a step not done yet is a value)',
    () => {
      // Arrange
      const teardowns = tasks.filter(([, s]) => s.Resource?.includes('TeardownCell'));
      const runSteps = tasks.filter(([, s]) => s.Resource?.includes('RunStep'));

      // Act
      const missingTransient = tasks
        .filter(([, s]) => !RETRIED_ON_EVERY_TASK.every((n) => retried(s).includes(n)))
        .map(([name]) => name);
      const missingInUse = teardowns
        .filter(([, s]) => !RETRIED_ON_TEARDOWN.every((n) => retried(s).includes(n)))
        .map(([name]) => name);
      const runStepOthers = runSteps.flatMap(([, s]) =>
        retried(s).filter((n) => !serviceName(n) && !RETRIED_ON_EVERY_TASK.includes(n)),
      );
      const notRetriedButMatched = NOT_RETRIED.filter((n) => tasks.some(([, s]) => retried(s).includes(n)));

      // Assert
      expect(tasks.length).toBeGreaterThan(0);
      expect(teardowns.map(([name]) => name)).toEqual(['TeardownCell', 'TeardownCellOnError']);
      expect(missingTransient).toEqual([]);
      expect(missingInUse).toEqual([]);
      expect(runSteps.map(([name]) => name)).toEqual(['RunStep']);
      expect(runStepOthers).toEqual([]);
      expect(notRetriedButMatched).toEqual([]);
    },
  );
});
