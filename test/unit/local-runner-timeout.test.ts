/**
 * The local runner and the definition's TimeoutSeconds (aws-local-stepfunctions enforces it with
 * one timer): a short one ends the execution TIMED_OUT; one longer than a Node timer can hold is
 * left to AWS instead of firing at once.
 */
import { executeLocally } from '../../core/workflow/local-runner';
import { NO_TASK_DEPS } from '../helpers/no-task-deps';

// No Task state below calls a handler.
const deps = NO_TASK_DEPS;

/** A definition without Task states: nothing to bind. */
function waitThenPass(timeoutSeconds: number) {
  const definition = {
    StartAt: 'Wait',
    TimeoutSeconds: timeoutSeconds,
    States: {
      Wait: { Type: 'Wait', Seconds: 1, Next: 'Done' },
      Done: { Type: 'Pass', Result: { runId: 'r' }, End: true },
    },
  };
  return { definition, taskByArn: new Map() };
}

describe('executeLocally and TimeoutSeconds', () => {
  it("a year (a Standard workflow's most) does not end the run at once", async () => {
    // Act: the Wait lasts pollMs; a timer of 31,536,000,000 ms would fire after 1 ms.
    const result = await executeLocally({
      deps,
      input: { spec: {} },
      resolvedDefinition: waitThenPass(365 * 24 * 3600),
      pollMs: 200,
    });

    // Assert
    expect(result.status).toBe('SUCCEEDED');
  });

  it('an override shorter than the run ends it TIMED_OUT with States.Timeout', async () => {
    // Act: the Wait lasts 3 s, the execution may run 1 s.
    const result = await executeLocally({
      deps,
      input: { spec: {} },
      resolvedDefinition: waitThenPass(3600),
      pollMs: 3000,
      executionTimeoutS: 1,
    });

    // Assert
    expect(result.status).toBe('TIMED_OUT');
    expect(result.error).toBe('States.Timeout');
    expect(result.events.map((e) => e.type)).toContain('ExecutionTimeout');
  });

  it('refuses an override that is not a whole number of seconds', async () => {
    await expect(
      executeLocally({ deps, input: { spec: {} }, resolvedDefinition: waitThenPass(3600), executionTimeoutS: 0.5 }),
    ).rejects.toThrow(/executionTimeoutS must be a whole number of seconds >= 1/);
  });
});
