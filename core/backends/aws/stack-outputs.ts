/**
 * The names of the outputs the aurora-bench stack exports and the CLI reads.
 * Both sides import this one list, kept apart from the CLI so the stack does not depend on CLI code.
 */

/** Output keys that find the deployment. */
export const STACK_OUTPUTS = {
  stateMachineArn: 'StateMachineArn',
  resultsBucket: 'ResultsBucketName',
  athenaWorkGroup: 'AthenaWorkGroupName',
  glueDatabase: 'GlueDatabaseName',
} as const;

/**
 * The output holding the workflow's backend configuration, which the preflight checks the account against.
 * It is read apart from STACK_OUTPUTS, so `results --aws` keeps working on stacks deployed before it.
 */
export const BACKEND_CONFIG_OUTPUT = 'BackendConfig';
