import { AuroraBenchError, formatError, isUserFacingError, UsageError } from '../../core/errors';
import { PlanError } from '../../core/plan/plan';
import { SpecError } from '../../core/experiment/validate';
import { TransientBackendError } from '../../core/backend';

describe('formatError', () => {
  it('prints a user-facing error as its message and its cause chain, without a stack', () => {
    // Arrange
    const root = new Error('connect ECONNREFUSED 127.0.0.1:3306');
    const middle = new TransientBackendError('writer not reachable', { cause: root });
    const error = new AuroraBenchError('the cell could not be provisioned', {
      cause: middle,
      source: 'exp.json',
      jsonPath: 'variants[0]',
    });

    // Act
    const text = formatError(error);

    // Assert
    expect(text).toBe(
      'the cell could not be provisioned\n  caused by: writer not reachable\n  caused by: Error: connect ' +
        'ECONNREFUSED 127.0.0.1:3306',
    );
    expect(error.source).toBe('exp.json');
    expect(error.jsonPath).toBe('variants[0]');
  });

  it('prints an unexpected error with its stack', () => {
    // Arrange
    const error = new TypeError('x is undefined');

    // Act
    const text = formatError(error);

    // Assert
    expect(text).toBe(error.stack);
    expect(text).toMatch(/^TypeError: x is undefined\n\s+at /);
  });

  it('prints a cause whose message the wrapper already carries once', () => {
    // Arrange: a Task error keeps its cause's text in its message (only name and message cross a Lambda).
    const root = new Error('Throttling: Rate exceeded');
    const error = new TransientBackendError(`DescribeDBClusters: Throttling: ${root.message}`, { cause: root });

    // Act
    const text = formatError(error);

    // Assert
    expect(text).toBe('DescribeDBClusters: Throttling: Throttling: Rate exceeded');
  });

  it('prints an unexpected error with its stack, then its cause chain', () => {
    // Arrange
    const root = new Error('EACCES: permission denied');
    const error = new Error('unreadable run registry /runs/r1/resources.json', { cause: root });

    // Act
    const text = formatError(error);

    // Assert
    expect(text).toBe(`${error.stack}\n  caused by: Error: EACCES: permission denied`);
  });

  it('prints a thrown non-Error as its string', () => {
    expect(formatError('plain string')).toBe('plain string');
  });

  it('keeps the names the state machine and the tests match, and marks them user-facing', () => {
    // Arrange
    const errors = [
      new UsageError('u'),
      new PlanError([{ level: 'refused', path: 'workloads', message: 'none' }], 'exp.json'),
      new SpecError('exp.json', []),
      new TransientBackendError('t'),
    ];

    // Act
    const names = errors.map((e) => e.name);

    // Assert
    expect(names).toEqual(['UsageError', 'PlanError', 'SpecError', 'TransientBackendError']);
    expect(errors.every(isUserFacingError)).toBe(true);
    expect((errors[1] as PlanError).source).toBe('exp.json');
    expect(isUserFacingError(new Error('e'))).toBe(false);
  });
});
