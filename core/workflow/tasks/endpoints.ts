import type { CellResources } from '../../backend';
import type { StepPlan } from '../../plan/types';
import { InvalidTaskInputError } from '../errors';

/** Which endpoint the i-th client of a step connects to. */
export function endpointFor(step: StepPlan, resources: CellResources, clientIndex: number) {
  if (step.target === 'writer') {
    if (!resources.writer) throw new InvalidTaskInputError(`cell ${resources.cellId} has no writer endpoint yet`);
    return resources.writer;
  }
  if (resources.readers.length === 0)
    throw new InvalidTaskInputError(
      `step ${step.stepId} targets ${step.target} but cell ${resources.cellId} has no readers`,
    );
  return step.target === 'reader' ? resources.readers[0]! : resources.readers[clientIndex % resources.readers.length]!;
}
