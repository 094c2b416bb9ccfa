/**
 * The names of the outputs the aurora-bench stack (lib/aurora-bench-stack.ts) exports and the CLI
 * reads (core/cli/aws-stack.ts): one list both sides import, kept apart from the CLI so the stack
 * does not depend on CLI code.
 */

/** Output keys that find the deployment: state machine, results lake. */
export const STACK_OUTPUTS = {
  stateMachineArn: 'StateMachineArn',
  resultsBucket: 'ResultsBucketName',
  athenaWorkGroup: 'AthenaWorkGroupName',
  glueDatabase: 'GlueDatabaseName',
} as const;

/**
 * The output holding the workflow's backend configuration (the Lambdas' environment as JSON, the
 * names of config.ts AWS_CONFIG_ENV): what the preflight checks the account against. Read apart
 * from STACK_OUTPUTS so `results --aws` keeps working on stacks deployed before it.
 */
export const BACKEND_CONFIG_OUTPUT = 'BackendConfig';
