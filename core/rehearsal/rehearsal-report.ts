/**
 * What a rehearsal says after the run.
 * That is the run's results from the lake copied out of moto, the functions' invocations and the IAM summary.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { AwsBackendConfig } from '../backends/aws/config';
import { resultsCommand } from '../cli/results-command';
import type { Plan } from '../plan/types';
import { iamSummaryLine, type RehearsalIam } from './iam/rehearsal-iam';
import { copyLake } from './lake-copy';
import type { RehearsalOptions } from './rehearsal-options';
import type { RehearsalState } from './rehearsal-state';
import type { RunClaim } from './run-claim';

/** The results table, or why there is none. */
export async function reportRun(
  options: RehearsalOptions,
  plan: Plan,
  { lakeDir, dir }: RunClaim,
  s3: S3Client,
  config: AwsBackendConfig,
  state: RehearsalState,
  iam: RehearsalIam,
  log: (line: string) => void,
): Promise<string> {
  const objects = await copyLake(s3, config, lakeDir, dir);
  log(
    `lake: ${objects} table objects in s3://${config.bucket}/${config.lakePrefix} (moto)` +
      (options.lakeDir !== undefined
        ? `, copied into ${options.lakeDir} with the run marked aws-rehearsal (never part of an AWS ` +
          `experiment's history)`
        : ''),
  );
  let results: string;
  try {
    results = await resultsCommand({ lakeDir, run: plan.runId, repoRoot: options.repoRoot });
  } catch (e) {
    results = `(no results table: ${(e as Error).message})`;
  }
  const ran = state.functionsOf();
  log(`Lambda: ${[...ran].map(([task, f]) => `${task} ${f.invocations} (${f.coldStarts} cold)`).join(', ')}`);
  log(iamSummaryLine(iam));
  return results;
}
