/** `aurora-bench report --aws` builds the same report from Athena over the deployed stack's lake. */
import { writeUserFile } from '../user-file';
import { AthenaClient } from '@aws-sdk/client-athena';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { S3Client } from '@aws-sdk/client-s3';
import { AthenaLake } from '../backends/aws/athena-lake';
import { reportFromLake, type ReportOptions } from '../report/report';
import { readStackOutputs, stackLakeStore } from './aws-stack';

export interface AthenaReportOptions extends ReportOptions {
  readonly stackName: string;
  readonly athena?: AthenaClient;
  readonly cfn?: CloudFormationClient;
  /** Reads the lake's schema version record. */
  readonly s3?: S3Client;
  /** Poll interval while an Athena query runs, which tests shorten. */
  readonly pollMs?: number;
}

/** What `aurora-bench report --aws` prints. It writes the HTML file when asked. */
export async function athenaReportText(options: AthenaReportOptions): Promise<string> {
  const outputs = await readStackOutputs(options.cfn ?? new CloudFormationClient({}), options.stackName);
  const lake = new AthenaLake({
    client: options.athena ?? new AthenaClient({}),
    workGroup: outputs.athenaWorkGroup,
    database: outputs.glueDatabase,
    store: stackLakeStore(outputs, options.s3),
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
  });
  const { text, html } = await reportFromLake(lake, options);
  if (options.html !== undefined && html !== undefined) {
    writeUserFile(options.html, html);
    return text + `\nHTML report written to ${options.html}\n`;
  }
  return text;
}
