/**
 * state-machines/benchmark.asl.json against what the code assumes of it: the state names code
 * refers to (core/workflow/state-names.ts), the tasks it binds (core/workflow/task-registry.ts), and
 * the Retry blocks it has to repeat on every Task state (ASL cannot define a retrier once).
 */
import { allStates, loadDefinition } from '../../core/workflow/asl';
import { localFunctionArn } from '../../core/workflow/local-runner';
import { STATE } from '../../core/workflow/state-names';
import { TASKS } from '../../core/workflow/task-registry';
import { TASK_NAMES } from '../../core/workflow/task-names';

const definition = loadDefinition(localFunctionArn);
const states = allStates(definition);

describe('state-machines/benchmark.asl.json', () => {
  it('has exactly the states of STATE, each named as its key', () => {
    // Act
    const names = [...states.keys()].sort();

    // Assert
    expect(names).toEqual(Object.values(STATE).sort());
    for (const [key, name] of Object.entries(STATE)) expect(key).toBe(name);
  });

  it('has a Task state for every registered task and no other task', () => {
    // Act
    const resources = [...states.values()].filter((s) => s.Type === 'Task').map((s) => s.Resource);

    // Assert
    expect(new Set(resources)).toEqual(new Set(TASK_NAMES.map(localFunctionArn)));
    expect(Object.keys(TASKS).sort()).toEqual([...TASK_NAMES].sort());
  });

  it(
    'gives every Task state the same transient-error retrier, both teardown states the same ' +
      'ResourceStillInUseError retrier after it, RunStep no other (a step not done yet is a value)',
    () => {
      // Arrange
      const tasks = [...states].filter(([, s]) => s.Type === 'Task');
      const [first] = tasks;

      // Act
      const transient = tasks.map(([name, s]) => [name, s.Retry?.[0]] as const);
      const stillInUse = tasks
        .filter(([name, s]) => name !== STATE.RunStep && (s.Retry?.length ?? 0) > 1)
        .map(([name, s]) => [name, s.Retry!.slice(1)] as const);
      const runStep = states.get(STATE.RunStep);

      // Assert
      expect((first![1].Retry?.[0] as { ErrorEquals?: string[] } | undefined)?.ErrorEquals).toContain(
        'TransientBackendError',
      );
      for (const [name, retrier] of transient)
        expect({ name, retrier }).toEqual({ name, retrier: first![1].Retry![0] });
      expect(stillInUse.map(([name]) => name).sort()).toEqual([STATE.TeardownCell, STATE.TeardownCellOnError]);
      expect(stillInUse[0]![1]).toEqual(stillInUse[1]![1]);
      expect(stillInUse[0]![1]).toMatchObject([{ ErrorEquals: ['ResourceStillInUseError'] }]);
      expect(runStep?.Retry).toHaveLength(1);
    },
  );

  it('says in its Comment why the Retry blocks are copies and which test keeps them equal', () => {
    expect(definition['Comment']).toMatch(/ASL has no way to define a retrier once[\s\S]*test\/unit\/asl\.test\.ts/);
  });
});
