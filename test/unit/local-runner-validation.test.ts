/**
 * The local runner validates a definition with asl-validator (through aws-local-stepfunctions) once:
 * an invalid one is refused as before; a valid one is recorded under validatedDefinitionsDir, so a
 * later process does not compile the ASL schema again for it.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executeLocally } from '../../core/workflow/local-runner';
import { NO_TASK_DEPS } from '../helpers/no-task-deps';

// No Task state below calls a handler.
const deps = NO_TASK_DEPS;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ab-validated-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('executeLocally validates a definition once', () => {
  it('records a valid definition once, however many executions run it', async () => {
    // Arrange
    const definition = {
      StartAt: 'Done',
      States: { Done: { Type: 'Pass', Result: { runId: 'valid-once' }, End: true } },
    };
    const run = () =>
      executeLocally({
        deps,
        input: { spec: {} },
        resolvedDefinition: { definition, taskByArn: new Map() },
        validatedDefinitionsDir: dir,
      });
    // Act
    const first = await run();
    const second = await run();
    // Assert
    expect([first.status, second.status]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(readdirSync(dir)).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/) as string]);
  });

  it('refuses an invalid definition naming the error, and records nothing', async () => {
    // Arrange: Next names a state that does not exist
    const definition = { StartAt: 'Start', States: { Start: { Type: 'Pass', Next: 'Nowhere' } } };
    // Act
    const run = executeLocally({
      deps,
      input: { spec: {} },
      resolvedDefinition: { definition, taskByArn: new Map() },
      validatedDefinitionsDir: dir,
    });
    // Assert
    await expect(run).rejects.toThrow(/State machine definition is invalid/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
