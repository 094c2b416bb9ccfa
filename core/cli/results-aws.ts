/** `aurora-bench results --aws` gives the same summaries from Athena over the deployed stack's lake. */
import { AthenaClient } from '@aws-sdk/client-athena';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { S3Client } from '@aws-sdk/client-s3';
import { AthenaLake } from '../backends/aws/athena-lake';
import { findRun, renderRowsTable, renderStepTable, stepResults } from '../lake/results';
import type { LocalLake } from '../lake/duckdb';
import { readStackOutputs, stackLakeStore } from './aws-stack';

export interface AthenaResultsOptions {
  readonly stackName: string;
  readonly runId?: string;
  readonly sql?: string;
  readonly json: boolean;
  readonly athena?: AthenaClient;
  readonly cfn?: CloudFormationClient;
  /** Reads the lake's schema version record. */
  readonly s3?: S3Client;
}

export async function athenaResultsText(options: AthenaResultsOptions): Promise<string> {
  const outputs = await readStackOutputs(options.cfn ?? new CloudFormationClient({}), options.stackName);
  const lake = new AthenaLake({
    client: options.athena ?? new AthenaClient({}),
    workGroup: outputs.athenaWorkGroup,
    database: outputs.glueDatabase,
    store: stackLakeStore(outputs, options.s3),
  });
  if (options.sql !== undefined) {
    const { columns, rows } = await lake.queryWithColumns(options.sql);
    return options.json ? JSON.stringify(rows, null, 2) + '\n' : renderRowsTable(columns, rows);
  }
  // findRun and stepResults only use query(), and the Athena lake answers the same SQL.
  const asLake = lake as unknown as LocalLake;
  const run = await findRun(asLake, options.runId);
  const steps = await stepResults(asLake, run.run_id);
  return options.json ? JSON.stringify(steps, null, 2) + '\n' : renderStepTable(run, steps);
}
