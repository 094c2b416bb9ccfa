/**
 * Athena for the rehearsal and the moto tests.
 * moto's Athena runs no SQL, and Athena engine version 3 is Trino.
 * See Athena User Guide, "Athena engine version 3".
 * So a real Trino answers every query on moto's Glue and S3, and the answer is queued in moto.
 * moto then returns it as Athena does, and a query Trino fails fails there too.
 *
 * Only ALTER TABLE ADD PARTITION and UNLOAD are not Trino's, so they are translated.
 * Each translation is said in the rehearsal's output.
 *
 * The Glue and S3 actions Trino makes are recorded with each query, as its caller's role must allow them.
 * Queries run one at a time per instance, so each recording is that query's alone.
 */
import { randomBytes } from 'node:crypto';
import type { AthenaClient } from '@aws-sdk/client-athena';
import { ActionRecorder } from './action-recorder';
import { translateAthenaStatement } from './athena-translation';
import { createLakeGlue, type LakeTemplate } from './lake-glue';
import { interceptClient } from './sdk-intercept';
import { runTrino, type TrinoResult, TrinoQueryError } from './trino-client';

export interface AthenaOnTrinoOptions {
  readonly trinoEndpoint: string;
  readonly motoEndpoint: string;
  readonly region: string;
  readonly bucket: string;
  /** The lake's key prefix in the bucket, '' or ending in '/'. */
  readonly lakePrefix: string;
  /** The synthesized template, whose Glue database and tables are created in moto. */
  readonly template: LakeTemplate;
  /** The lake's projected dates, in place of the template's range. */
  readonly projectionRange?: string;
  /** Where the translations are said. */
  readonly log?: (line: string) => void;
}

/** One Athena query as Trino answered it. */
export interface AnsweredQuery {
  /** The Athena text, as the code sent it. */
  readonly sql: string;
  readonly database: string;
  /** The Trino statements that ran for it: the text itself, or its translation. */
  readonly statements: readonly string[];
  readonly translated: boolean;
  /** The Glue and S3 actions Trino made for it, each once, in first-use order. */
  readonly actions: readonly string[];
  /** How long Trino took, in milliseconds. */
  readonly ms: number;
  /** Trino's error, when it failed the query. */
  readonly error?: string;
}

/** One moto-api result set, header row first, as Athena returns a SELECT's first page. */
interface MotoResultSet {
  readonly column_info: readonly { Name: string; Type: string; Label: string }[];
  readonly rows: readonly { Data: readonly { VarCharValue?: string }[] }[];
}

/** Athena's name of a Trino type is the signature without its parameters. */
const athenaType = (trinoType: string): string => trinoType.replace(/\(.*$/s, '').toLowerCase();

/** A value as Athena returns it: a string, with JSON for arrays and rows and nothing for NULL. */
const text = (v: unknown): string | undefined =>
  v === null || v === undefined
    ? undefined
    : typeof v === 'string'
      ? v
      : typeof v === 'number' || typeof v === 'boolean'
        ? String(v)
        : JSON.stringify(v);

function resultSet(result: TrinoResult | undefined): MotoResultSet {
  if (!result || result.columns.length === 0) return { column_info: [], rows: [] };
  const names = result.columns.map((c) => c.name);
  return {
    column_info: result.columns.map((c) => ({ Name: c.name, Type: athenaType(c.type), Label: c.name })),
    rows: [
      { Data: names.map((n) => ({ VarCharValue: n })) },
      ...result.rows.map((r) => ({ Data: r.map((v) => ({ VarCharValue: text(v) })) })),
    ],
  };
}

export class AthenaOnTrino {
  /** Every query answered, in order, for tests to look at. */
  readonly answered: AnsweredQuery[] = [];
  private readonly catalog = `rehearsal_${randomBytes(6).toString('hex')}`;
  private readonly recorder: ActionRecorder;
  private ready: Promise<void> | undefined;
  private readonly databases = new Map<string, Promise<void>>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: AthenaOnTrinoOptions) {
    this.recorder = new ActionRecorder(options.motoEndpoint);
  }

  /** The Athena texts answered, in order. */
  get queries(): string[] {
    return this.answered.map((q) => q.sql);
  }

  install(athena: AthenaClient): void {
    interceptClient(athena, 'auroraBenchRehearsalAthena', async (command, input, forward) => {
      if (command !== 'StartQueryExecution') return forward();
      const sql = typeof input['QueryString'] === 'string' ? input['QueryString'] : '';
      const context = input['QueryExecutionContext'] as { Database?: string } | undefined;
      const database = context?.Database ?? 'default';
      const answer = this.queue.then(() => this.answer(sql, database));
      this.queue = answer.catch(() => undefined);
      await this.post(await answer);
      return forward();
    });
  }

  /** The catalog on Trino for this moto, reaching its Glue and S3 through the recorder. */
  private setUp(): Promise<void> {
    this.ready ??= (async () => {
      const through = await this.recorder.start();
      const { region } = this.options;
      // The Hive connector on Glue and native S3. register_partition stands in for ALTER TABLE ADD PARTITION.
      // See Trino documentation, "Hive connector", "AWS Glue catalog" and "S3 file system support".
      const properties: Record<string, string> = {
        'hive.metastore': 'glue',
        'hive.metastore.glue.region': region,
        'hive.metastore.glue.endpoint-url': through,
        'hive.metastore.glue.aws-access-key': 'rehearsal',
        'hive.metastore.glue.aws-secret-key': 'rehearsal',
        'fs.native-s3.enabled': 'true',
        's3.endpoint': through,
        's3.region': region,
        's3.path-style-access': 'true',
        's3.aws-access-key': 'rehearsal',
        's3.aws-secret-key': 'rehearsal',
        'hive.allow-register-partition-procedure': 'true',
        'hive.non-managed-table-writes-enabled': 'true',
        // Athena reads no Glue column statistics, since its CBO is opt-in, so neither does this Trino.
        // See Athena User Guide, "Use the cost-based optimizer".
        'hive.table-statistics-enabled': 'false',
        // UNLOAD's stand-in would otherwise update Glue column statistics, which moto's Glue fails.
        'hive.collect-column-statistics-on-write': 'false',
        // UNLOAD is sent with ZSTD compression.
        'hive.compression-codec': 'ZSTD',
      };
      const withClause = Object.entries(properties)
        .map(([k, v]) => `"${k}" = '${v}'`)
        .join(', ');
      await runTrino(this.options.trinoEndpoint, `CREATE CATALOG ${this.catalog} USING hive WITH (${withClause})`);
    })();
    return this.ready;
  }

  private glueDatabase(database: string): Promise<void> {
    let made = this.databases.get(database);
    if (!made) {
      const { motoEndpoint: endpoint, region, bucket, lakePrefix, template, projectionRange } = this.options;
      made = createLakeGlue(template, {
        endpoint,
        region,
        bucket,
        lakePrefix,
        database,
        ...(projectionRange !== undefined ? { projectionRange } : {}),
      });
      this.databases.set(database, made);
    }
    return made;
  }

  private async answer(sql: string, database: string): Promise<MotoResultSet | { error: string }> {
    await this.setUp();
    await this.glueDatabase(database);
    const translation = translateAthenaStatement(sql, { schema: database });
    if (translation) this.options.log?.(`athena on trino: ${translation.says}`);
    const statements = translation?.statements ?? [sql];
    const session = {
      catalog: this.catalog,
      schema: database,
    };
    const started = Date.now();
    const { result, actions } = await this.recorder.during(async () => {
      try {
        let last: TrinoResult | undefined;
        for (const statement of statements) {
          const step = typeof statement === 'string' ? statement : statement(last);
          if (step !== undefined) last = await runTrino(this.options.trinoEndpoint, step, session);
        }
        return { last, error: undefined };
      } catch (e) {
        if (e instanceof TrinoQueryError)
          return {
            error: translation ? `${e.trinoMessage} (in ${e.message.split('(in: ')[1]}` : e.trinoMessage,
            last: undefined,
          };
        throw e;
      }
    });
    const record = {
      sql,
      database,
      statements: statements.map((s) => (typeof s === 'string' ? s : '(conditional)')),
      translated: translation !== undefined,
      actions: [...new Set(actions)],
      ms: Date.now() - started,
    };
    if (result.error !== undefined) {
      this.answered.push({ ...record, error: result.error });
      return { error: result.error };
    }
    this.answered.push(record);
    return translation ? resultSet(undefined) : resultSet(result.last);
  }

  private async post(result: MotoResultSet | { error: string }): Promise<void> {
    // moto reports SUCCEEDED with an empty result, so the failure is raised here instead.
    if ('error' in result) throw new Error(`Athena (Trino) failed the query: ${result.error}`);
    const res = await fetch(`${this.options.motoEndpoint}/moto-api/static/athena/query-results`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ region: this.options.region, results: [result] }),
    });
    if (res.status !== 201) throw new Error(`moto-api athena query-results: ${res.status} ${await res.text()}`);
  }

  /** Drops the catalog from Trino and stops the recorder. The Glue tables stay in moto. */
  async close(): Promise<void> {
    if (this.ready) {
      await this.ready.catch(() => undefined);
      await runTrino(this.options.trinoEndpoint, `DROP CATALOG IF EXISTS ${this.catalog}`).catch(() => undefined);
    }
    await this.recorder.stop();
  }
}
