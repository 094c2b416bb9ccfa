/** The AWS backend: config, clients, the Backend implementation, preflight, lake, sweeper. */
export { AwsBackend, type AwsBackendOptions } from './aws-backend';
export { MAX_PARAMETERS_PER_MODIFY, clusterParametersFor } from './cluster';
export { mapInvocation } from './jobs';
export { makeAwsClients, destroyAwsClients, type AwsClients, type AwsClientOptions } from './clients';
export { awsConfigFromEnv, awsConfigToEnv, AWS_CONFIG_ENV, AWS_CONFIG_DEFAULTS, AwsConfigError, type AwsBackendConfig, type ClientArchitecture } from './config';
export {
  runAwsPreflight,
  preflightNotes,
  preflightRefused,
  type AwsDeployment,
  type AwsPreflightInput,
  type PreflightReport,
  type PreflightCheck,
  type CheckVerdict,
} from './preflight';
export { S3LakeStore } from './s3-lake';
export { sweepExpired, teardownRun, type SweepReport } from './sweeper';
export { cellNames, runShort, isValidRdsIdentifier } from './names';
export { parseAuroraVersion, supportsLocalWriteForwarding } from '../../aurora/engine';
export { runAthenaQuery, athenaRequestToken, AthenaQueryError, type AthenaQuery, type AthenaResult } from './athena';
