import { compactRunOnAthena } from '../backends/aws/athena-compaction';
import type { AwsClients } from '../backends/aws/clients';
import type { AwsBackendConfig } from '../backends/aws/config';
import type { TaskDeps } from '../workflow/tasks/types';

/** TaskDeps.compactRun on AWS, by Athena UNLOAD into the lake's Parquet tables, summarised in one line. */
export function athenaCompaction(
  config: AwsBackendConfig,
  clients: Pick<AwsClients, 'athena' | 's3'>,
): NonNullable<TaskDeps['compactRun']> {
  return async (run) => {
    if (config.athenaWorkGroup === undefined || config.glueDatabase === undefined) {
      throw new Error(
        'the Task environment has no AURORA_BENCH_ATHENA_WORK_GROUP / AURORA_BENCH_GLUE_DATABASE: redeploy the ' +
          'stack (npx cdk deploy), which sets them',
      );
    }
    const tables = await compactRunOnAthena(
      {
        athena: clients.athena,
        s3: clients.s3,
        bucket: config.bucket,
        lakePrefix: config.lakePrefix,
        workGroup: config.athenaWorkGroup,
        database: config.glueDatabase,
      },
      run,
    );
    if (tables.length === 0) return 'nothing to compact (no JSON Lines rows left)';
    return (
      `compacted to ` +
      `Parquet: ` +
      tables
        .map(
          (t) =>
            `${t.table} (${t.jsonObjects} JSON Lines object(s)` +
            (t.unloaded ? `, ${t.parquetObjects} Parquet file(s)` : ', registered before') +
            `)`,
        )
        .join(', ')
    );
  };
}
