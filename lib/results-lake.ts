/**
 * Results lake: the encrypted bucket, Glue tables with partition projection on dt, and an Athena workgroup.
 * The workgroup's named queries hold the view SQL.
 * Each step table has a JSON Lines table and a Parquet table of compacted runs. The view <table> reads both.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { GLUE_TYPES, LAKE_COLUMNS, LAKE_TABLES, PARTITION_COLUMN, type LakeTable } from '../core/lake/schema';
import {
  compactedTablePrefix,
  jsonTableName,
  parquetDataColumns,
  parquetTableName,
  RUN_PARTITION_COLUMN,
  STEP_TABLES,
  type StepTable,
} from '../core/lake/athena-storage';
import type { LakeConfig } from './config';
import { CLIENT_READY_PREFIX } from '../core/backends/aws/runner-command';
import { MAX_CLIENT_LIFETIME_HOURS } from './client-user-data';
import { SSM_OUTPUT_PREFIX } from './handler-environment';

/** Key prefixes in the bucket. The lake sits at the bucket root. */
export const LAKE_PREFIXES = {
  tables: 'tables/',
  raw: 'raw/',
  scripts: 'scripts/',
  athenaResults: 'athena-results/',
} as const;

/** One view definition, for Athena and DuckDB alike. */
export interface ViewDefinition {
  readonly name: string;
  readonly sql: string;
}

export interface ResultsLakeProps {
  readonly config: LakeConfig;
  readonly namePrefix: string;
  /** The shared views, in creation order. */
  readonly views: readonly ViewDefinition[];
}

/** Glue database names allow lowercase letters, digits and underscores. */
function glueDatabaseName(namePrefix: string): string {
  return namePrefix.replace(/-/g, '_');
}

export class ResultsLake extends Construct {
  readonly bucket: s3.Bucket;
  readonly accessLogsBucket: s3.Bucket;
  readonly databaseName: string;
  readonly workGroupName: string;
  /** The JSON Lines tables, by lake table. */
  readonly tables: Readonly<Record<LakeTable, glue.CfnTable>>;
  /** The compacted runs' Parquet tables, by step table. */
  readonly parquetTables: Readonly<Record<StepTable, glue.CfnTable>>;
  readonly workGroup: athena.CfnWorkGroup;
  readonly namedQueries: readonly athena.CfnNamedQuery[];

  constructor(scope: Construct, id: string, props: ResultsLakeProps) {
    super(scope, id);
    const { config } = props;
    const removalPolicy = config.removalPolicy === 'DESTROY' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;

    this.accessLogsBucket = new s3.Bucket(this, 'AccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // Log delivery is granted by bucket policy, without ACLs.
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(365) }],
      removalPolicy,
    });
    Validations.of(this.accessLogsBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This is the access-log bucket of the results lake; logging it into itself would loop.',
    });

    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'lake/',
      lifecycleRules: [
        { id: 'expire-raw-output', prefix: LAKE_PREFIXES.raw, expiration: Duration.days(config.rawRetentionDays) },
        { id: 'expire-ssm-output', prefix: SSM_OUTPUT_PREFIX, expiration: Duration.days(config.rawRetentionDays) },
        {
          id: 'expire-athena-results',
          prefix: LAKE_PREFIXES.athenaResults,
          expiration: Duration.days(config.athenaResultRetentionDays),
        },
        // Clients' ready markers matter only while the client lives.
        {
          id: 'expire-client-ready-markers',
          prefix: CLIENT_READY_PREFIX,
          expiration: Duration.days(Math.ceil(MAX_CLIENT_LIFETIME_HOURS / 24) + 1),
        },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
      ],
      removalPolicy,
    });

    const account = Stack.of(this).account;
    this.databaseName = glueDatabaseName(props.namePrefix);
    const database = new glue.CfnDatabase(this, 'Database', {
      catalogId: account,
      databaseInput: {
        name: this.databaseName,
        description: 'aurora-bench results lake (JSON Lines, partitioned by run date)',
      },
    });

    const tables: Partial<Record<LakeTable, glue.CfnTable>> = {};
    for (const table of LAKE_TABLES) {
      const cfnTable = new glue.CfnTable(this, `Table-${table}`, {
        catalogId: account,
        databaseName: this.databaseName,
        tableInput: this.tableInput(table, config.projectionStartDate),
      });
      cfnTable.addResourceDependency(database);
      tables[table] = cfnTable;
    }
    this.tables = tables as Record<LakeTable, glue.CfnTable>;
    const parquetTables: Partial<Record<StepTable, glue.CfnTable>> = {};
    for (const table of STEP_TABLES) {
      const cfnTable = new glue.CfnTable(this, `ParquetTable-${table}`, {
        catalogId: account,
        databaseName: this.databaseName,
        tableInput: this.parquetTableInput(table),
      });
      cfnTable.addResourceDependency(database);
      parquetTables[table] = cfnTable;
    }
    this.parquetTables = parquetTables as Record<StepTable, glue.CfnTable>;

    this.workGroupName = props.namePrefix;
    this.workGroup = new athena.CfnWorkGroup(this, 'WorkGroup', {
      name: this.workGroupName,
      description: 'aurora-bench: queries over the results lake',
      state: 'ENABLED',
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: config.athenaBytesScannedCutoffMb * 1024 * 1024,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        resultConfiguration: {
          outputLocation: this.bucket.s3UrlForObject(LAKE_PREFIXES.athenaResults),
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
        },
      },
    });

    this.namedQueries = props.views.map((view, index) => {
      const query = new athena.CfnNamedQuery(this, `View-${view.name}`, {
        name: `${props.namePrefix}-${String(index + 1).padStart(2, '0')}-view-${view.name}`,
        description: `Creates (or replaces) the ${view.name} view; run in order, a view may use an earlier one.`,
        database: this.databaseName,
        workGroup: this.workGroupName,
        queryString: view.sql,
      });
      query.addResourceDependency(this.workGroup);
      query.addResourceDependency(database);
      return query;
    });
  }

  /** Hive JSON table over a table's JSON Lines files, with dt projected as a date. */
  private tableInput(table: LakeTable, projectionStartDate: string): glue.CfnTable.TableInputProperty {
    const location = this.bucket.s3UrlForObject(`${LAKE_PREFIXES.tables}${table}/`);
    const columns = Object.entries(LAKE_COLUMNS[table]).map(([name, type]) => ({ name, type: GLUE_TYPES[type] }));
    const dt = PARTITION_COLUMN;
    const stepTable = (STEP_TABLES as readonly string[]).includes(table);
    return {
      // A step table's name belongs to its view over both formats.
      name: stepTable ? jsonTableName(table as StepTable) : table,
      description: `aurora-bench ${table} rows (core/lake/rows.ts), JSON Lines`,
      tableType: 'EXTERNAL_TABLE',
      parameters: {
        classification: 'json',
        EXTERNAL: 'TRUE',
        'projection.enabled': 'true',
        [`projection.${dt}.type`]: 'date',
        [`projection.${dt}.format`]: 'yyyy-MM-dd',
        [`projection.${dt}.range`]: `${projectionStartDate},NOW`,
        [`projection.${dt}.interval`]: '1',
        [`projection.${dt}.interval.unit`]: 'DAYS',
        // A literal ${dt}. Athena substitutes it, and CloudFormation leaves plain strings alone.
        'storage.location.template': `${location}${dt}=\${${dt}}/`,
      },
      partitionKeys: [{ name: dt, type: 'string' }],
      storageDescriptor: {
        location,
        columns,
        inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
        outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
        compressed: false,
        serdeInfo: {
          serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
          parameters: { 'serialization.format': '1' },
        },
      },
    };
  }

  /**
   * Parquet over the compacted runs, as Athena's UNLOAD writes them.
   * There is no partition projection. FinishRun registers a partition after its UNLOAD succeeded.
   * That is what makes the run's Parquet rows visible.
   * run_id is a partition key, so it is not a data column. See Athena User Guide, "ALTER TABLE ADD PARTITION".
   * See Athena User Guide, "Parquet SerDe", for the SerDe and formats.
   */
  private parquetTableInput(table: StepTable): glue.CfnTable.TableInputProperty {
    const location = this.bucket.s3UrlForObject(compactedTablePrefix(table));
    const types = LAKE_COLUMNS[table];
    return {
      name: parquetTableName(table),
      description:
        `aurora-bench ${table} rows of compacted runs (core/lake/athena-storage.ts), Parquet, one ` +
        `partition per run`,
      tableType: 'EXTERNAL_TABLE',
      parameters: { classification: 'parquet', EXTERNAL: 'TRUE' },
      partitionKeys: [
        { name: PARTITION_COLUMN, type: 'string' },
        { name: RUN_PARTITION_COLUMN, type: 'string' },
      ],
      storageDescriptor: {
        location,
        columns: parquetDataColumns(table).map((name) => ({ name, type: GLUE_TYPES[types[name]!] })),
        inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
        outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
        compressed: false,
        serdeInfo: {
          serializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
          parameters: { 'serialization.format': '1' },
        },
      },
    };
  }
}
