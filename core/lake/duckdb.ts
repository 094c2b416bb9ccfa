/** The local results lake through in-memory DuckDB, with the same SQL Athena runs on AWS. */
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import {
  DUCKDB_TYPES,
  LAKE_COLUMNS,
  LAKE_TABLES,
  type LakeTable,
  LAKE_SCHEMA_VERSION,
  LAKE_VERSION_KEY,
  LakeVersionError,
  lakeVersionOf,
  PARTITION_COLUMN,
} from './schema';
import { filesOfRuns } from './rows';
import { allViewSql } from './views';
import { makeDuckdbTempDir } from './duckdb-temp';
import { AuroraBenchError } from '../errors';
import { refuseUnlessSelect } from './read-only-sql';

export type LakeValue = string | number | boolean | null | LakeValue[] | { [key: string]: LakeValue };
export type LakeRowObject = Record<string, LakeValue>;

/**
 * The data files of one table, JSON Lines and compacted Parquet, sorted for a stable order.
 * A run's JSON Lines files are left out once its Parquet file exists.
 * So a compaction that stopped halfway does not count rows twice.
 */
export function lakeTableFiles(lakeDir: string, table: LakeTable): string[] {
  const tableDir = join(lakeDir, 'tables', table);
  if (!existsSync(tableDir)) return [];
  const files: string[] = [];
  for (const part of readdirSync(tableDir, { withFileTypes: true })) {
    if (!part.isDirectory() || !/^dt=\d{4}-\d{2}-\d{2}$/.test(part.name)) continue;
    const names = readdirSync(join(tableDir, part.name), { withFileTypes: true })
      .filter((f) => f.isFile())
      .map((f) => f.name);
    const compacted = new Set(
      names.filter((n) => n.endsWith(PARQUET_SUFFIX)).map((n) => n.slice(0, -PARQUET_SUFFIX.length)),
    );
    for (const name of names) {
      const isJson = /\.jsonl(\.gz)?$/.test(name);
      if (!isJson && !(name.endsWith(PARQUET_SUFFIX) && !name.startsWith('.'))) continue;
      if (isJson && [...compacted].some((run) => name.startsWith(run + '__'))) continue;
      files.push(join(tableDir, part.name, name));
    }
  }
  return files.sort();
}

/** A compacted run's file name ends so. */
const PARQUET_SUFFIX = '.parquet';

const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/** DuckDB's read_json over one table's JSON Lines files, typed as the table's columns without dt. */
export function jsonLinesReader(
  table: LakeTable,
  files: readonly string[],
  options: { hivePartitioning: boolean },
): string {
  const columns = Object.entries(LAKE_COLUMNS[table]);
  const columnSpec = `{${columns.map(([c, t]) => `${sqlString(c)}: ${sqlString(DUCKDB_TYPES[t])}`).join(', ')}}`;
  const hive = options.hivePartitioning
    ? `, hive_partitioning = true, hive_types = {'${PARTITION_COLUMN}': 'VARCHAR'}`
    : ', hive_partitioning = false';
  return (
    `read_json([` +
    files.map(sqlString).join(', ') +
    `], format = 'newline_delimited', columns = ${columnSpec}${hive}, union_by_name = true)`
  );
}

/** The statement that makes one lake table a view. It is empty but typed when there is no file yet. */
function tableViewSql(table: LakeTable, files: readonly string[]): string {
  const columns = Object.entries(LAKE_COLUMNS[table]);
  if (files.length === 0) {
    const select = [
      ...columns.map(([c, t]) => `CAST(NULL AS ${DUCKDB_TYPES[t]}) AS ${ident(c)}`),
      `CAST(NULL AS VARCHAR) AS ${PARTITION_COLUMN}`,
    ];
    return `CREATE OR REPLACE VIEW ${table} AS SELECT ${select.join(', ')} WHERE false`;
  }
  // dt comes from the hive partition key as a string, as Athena's partition projection gives it.
  // The copy inside each row is not read, so a row can never disagree with its partition.
  const selectList = `${columns.map(([c]) => ident(c)).join(', ')}, ${PARTITION_COLUMN}`;
  const json = files.filter((f) => !f.endsWith(PARQUET_SUFFIX));
  const parquet = files.filter((f) => f.endsWith(PARQUET_SUFFIX));
  const parts = [
    ...(json.length > 0
      ? [`SELECT ${selectList} FROM ${jsonLinesReader(table, json, { hivePartitioning: true })}`]
      : []),
    // Compacted runs have the same columns and types, since compact.ts writes them from this reader.
    ...(parquet.length > 0
      ? [
          `SELECT ${selectList} FROM read_parquet([` +
            parquet.map(sqlString).join(', ') +
            `], hive_partitioning = true, hive_types = {'${PARTITION_COLUMN}': 'VARCHAR'})`,
        ]
      : []),
  ];
  return `CREATE OR REPLACE VIEW ${table} AS ${parts.join(' UNION ALL ')}`;
}

function toPlain(value: unknown): LakeValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toPlain);
  if (typeof value === 'object') {
    const out: Record<string, LakeValue> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = toPlain(v);
    return out;
  }
  // Only a symbol or a function is left, and no DuckDB column holds those.
  throw new TypeError(`unexpected ${typeof value} in a DuckDB result`);
}

/** What the results and report code needs from a lake: DuckDB locally, Athena on AWS. */
export interface LakeReader {
  /** Where the lake is, for messages. */
  readonly lakeDir: string;
  query<T extends object = LakeRowObject>(sql: string): Promise<T[]>;
}

class LakeQueryError extends AuroraBenchError {
  override readonly name = 'LakeQueryError';
}

/** A lake file DuckDB could not read, left out of the views, and why. */
export interface SkippedLakeFile {
  readonly file: string;
  readonly reason: string;
}

/**
 * What DuckDB may touch once the views exist.
 * 'lake' allows only the tables folder and DuckDB's own fresh temp directory.
 * External access is off and the configuration locked, so a query cannot read /etc/passwd or lift this with SET.
 * 'any' has no restriction, for code that writes elsewhere on purpose.
 */
export type LakeFileAccess = 'lake' | 'any';

/** How often a query is retried with one more unreadable file left out. */
const MAX_SKIPPED_FILES = 50;

/** How often a query is retried with its tables listed again because a listed file was gone. */
const MAX_RELISTS = 5;

/**
 * The listed lake file that a DuckDB error says is gone.
 * It went before the query bound its views, or while DuckDB read them.
 */
function vanishedFile(message: string, files: ReadonlySet<string>): string | undefined {
  const m = /No files found that match the pattern "([^"]+)"|Cannot open file "([^"]+)": No such file/.exec(message);
  const file = m?.[1] ?? m?.[2];
  return file !== undefined && files.has(file) && !existsSync(file) ? file : undefined;
}

/**
 * The lake file a DuckDB read error names, and the error's first sentence.
 * DuckDB quotes no file content there.
 */
function unreadableFile(message: string, files: ReadonlySet<string>): SkippedLakeFile | undefined {
  // JSON Lines errors name the file after "in file". Parquet errors name a truncated or foreign file in quotes.
  const file = (/in file "([^"]+)"/.exec(message) ?? /\b[Ff]ile '([^']+)'/.exec(message))?.[1];
  if (file === undefined || !files.has(file)) return undefined;
  const reason = message
    .split('\n')[0]!
    .replace(/^Invalid Input Error: /, '')
    .replace(/ in file "[^"]+",?/, '')
    .replace(/ '[^']+'/, '')
    .trim();
  return { file, reason };
}

/**
 * Which files an open lake reads.
 * DuckDB's cost is per file, so a reader of a few runs in a large lake opens only their files.
 */
export interface LakeScope {
  /** Only these tables' files. The others are empty. */
  readonly tables?: readonly LakeTable[];
  /** Only these runs' files, of every table. */
  readonly runIds?: readonly string[];
}

/**
 * The folder DuckDB may read, checked as the run root is.
 * allowed_directories follows symbolic links, so `<lake>/tables` must be a real directory.
 * A link to `/` would open every file of the machine to `results --sql`.
 * The lake directory itself may be a link, since where the lake lives is the user's choice.
 */
function checkedTablesDir(lakeDir: string): string {
  const tables = join(lakeDir, 'tables');
  let info;
  try {
    info = lstatSync(tables);
  } catch {
    return tables; // no tables yet, so nothing to read
  }
  if (!info.isDirectory() || info.isSymbolicLink()) {
    const target = info.isSymbolicLink() ? ` (a symbolic link to ${readlinkSync(tables)})` : '';
    throw new LakeQueryError(
      `the lake's tables folder ${tables} is not a directory${target}: a query may only read the lake's own ` +
        `files; replace it with the directory itself`,
      {
        source: lakeDir,
      },
    );
  }
  return tables;
}

/** A lake with a higher schema version is refused. Its columns may mean other things. */
function checkLakeVersion(lakeDir: string): void {
  const file = join(lakeDir, LAKE_VERSION_KEY);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return; // a version 1 lake, written before versions were recorded, or no lake yet
  }
  const version = lakeVersionOf(text, file);
  if (version > LAKE_SCHEMA_VERSION) {
    throw new LakeVersionError(
      `the results lake at ${lakeDir} is of schema version ${version}, written by a newer aurora-bench; this ` +
        `one reads versions up to ${LAKE_SCHEMA_VERSION}: upgrade aurora-bench`,
      { source: file },
    );
  }
}

/** An open lake. `query` returns plain row objects, with big integers and decimals as numbers. */
export class LocalLake implements LakeReader {
  private readonly skipped: SkippedLakeFile[] = [];

  private constructor(
    readonly lakeDir: string,
    private readonly instance: DuckDBInstance,
    /** DuckDB's temp_directory, this lake's own, removed on close. */
    private readonly tempDir: string,
    private readonly connection: DuckDBConnection,
    private readonly files: Map<LakeTable, string[]>,
    /** The table's files in the lake now, in the scope the lake was opened with. */
    private readonly listFiles: (table: LakeTable) => string[],
  ) {}

  /**
   * Opens the lake with the files there now.
   * Another run's end may compact its JSON Lines files into Parquet meanwhile.
   * A listed file can then be gone when DuckDB binds the views, so the lake is listed again.
   */
  static async open(lakeDir: string, options: { fileAccess?: LakeFileAccess } & LakeScope = {}): Promise<LocalLake> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await LocalLake.openOnce(lakeDir, options);
      } catch (e) {
        const vanished =
          e instanceof LakeQueryError &&
          /No files found that match the pattern/.test(String((e.cause as Error | undefined)?.message));
        if (!vanished || attempt >= 5) throw e;
      }
    }
  }

  private static async openOnce(
    lakeDir: string,
    options: { fileAccess?: LakeFileAccess } & LakeScope,
  ): Promise<LocalLake> {
    checkLakeVersion(lakeDir);
    // DuckDB adds its temp_directory to allowed_directories.
    // For an in-memory database that is `.tmp` in the working directory, whatever the user keeps there.
    // A fresh private folder holds nothing a query could read. Extensions are never fetched or loaded.
    const tempDir = makeDuckdbTempDir();
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(':memory:', {
        temp_directory: tempDir,
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
      });
    } catch (e) {
      rmSync(tempDir, { recursive: true, force: true });
      throw e;
    }
    const connection = await instance.connect();
    const ofRuns = options.runIds === undefined ? undefined : filesOfRuns(options.runIds);
    const filesOf = (table: LakeTable): string[] => {
      const all = options.tables === undefined || options.tables.includes(table) ? lakeTableFiles(lakeDir, table) : [];
      return ofRuns === undefined ? all : all.filter(ofRuns);
    };
    const files = new Map(LAKE_TABLES.map((t) => [t, filesOf(t)] as const));
    const lake = new LocalLake(lakeDir, instance, tempDir, connection, files, filesOf);
    try {
      for (const table of LAKE_TABLES) await lake.createTableView(table);
      for (const view of allViewSql()) await connection.run(view.sql);
      if ((options.fileAccess ?? 'lake') === 'lake') {
        await connection.run(`SET allowed_directories = [${sqlString(checkedTablesDir(lakeDir) + '/')}]`);
        await connection.run('SET enable_external_access = false');
        await connection.run('SET lock_configuration = true');
      }
    } catch (e) {
      lake.close();
      if (e instanceof LakeQueryError) throw e;
      throw new LakeQueryError(`cannot open the results lake at ${lakeDir}`, { cause: e, source: lakeDir });
    }
    return lake;
  }

  /**
   * Makes a table's view over its files.
   * DuckDB reads a Parquet footer when the view is made, so a bad Parquet file fails here.
   * That file is left out and named in skippedFiles, and the view is made without it.
   */
  private async createTableView(table: LakeTable): Promise<void> {
    for (;;) {
      const list = this.files.get(table)!;
      try {
        await this.connection.run(tableViewSql(table, list));
        return;
      } catch (e) {
        const bad =
          this.skipped.length < MAX_SKIPPED_FILES ? unreadableFile((e as Error).message, new Set(list)) : undefined;
        if (bad === undefined) throw e;
        this.skipped.push(bad);
        this.files.set(
          table,
          list.filter((f) => f !== bad.file),
        );
      }
    }
  }

  /** Files left out so far because they could not be read. Results and reports name them. */
  get skippedFiles(): readonly SkippedLakeFile[] {
    return this.skipped;
  }

  /**
   * Runs `read`, leaving out any lake file DuckDB cannot read and running again.
   * So one bad file does not hide every other run. skippedFiles names it.
   * When a listed file is gone because another run compacted it, the table is listed again.
   */
  private async readSkippingBadFiles<T>(read: () => Promise<T>): Promise<T> {
    for (let relisted = 0; ;) {
      try {
        return await read();
      } catch (e) {
        const message = (e as Error).message;
        const all = new Set([...this.files.values()].flat());
        const gone = vanishedFile(message, all);
        if (gone !== undefined && relisted < MAX_RELISTS) {
          relisted++;
          const skipped = new Set(this.skipped.map((f) => f.file));
          await this.replaceFilesOf(gone, (table) => this.listFiles(table).filter((f) => !skipped.has(f)));
          continue;
        }
        const bad = this.skipped.length < MAX_SKIPPED_FILES ? unreadableFile(message, all) : undefined;
        if (bad === undefined) throw e;
        this.skipped.push(bad);
        await this.replaceFilesOf(bad.file, (_, list) => list.filter((f) => f !== bad.file));
      }
    }
  }

  /** Gives each table that lists `file` the files `next` says, and makes its view read them. */
  private async replaceFilesOf(file: string, next: (table: LakeTable, list: string[]) => string[]): Promise<void> {
    for (const [table, list] of this.files) {
      if (!list.includes(file)) continue;
      const files = next(table, list);
      this.files.set(table, files);
      await this.connection.run(tableViewSql(table, files));
    }
  }

  async query<T extends object = LakeRowObject>(sql: string): Promise<T[]> {
    let rows: Record<string, unknown>[];
    try {
      rows = await this.readSkippingBadFiles(async () => (await this.connection.runAndReadAll(sql)).getRowObjectsJS());
    } catch (e) {
      throw new LakeQueryError(
        `query failed: ${(e as Error).message}\n  SQL: ${sql.trim().split('\n').join('\n       ')}`,
        { cause: e },
      );
    }
    return rows.map((r) => toPlain(r) as T);
  }

  /**
   * A user's query from `results --sql`, with its result's columns in order.
   * Only SELECT statements run. Anything else is refused before it runs.
   */
  async queryWithColumns(sql: string): Promise<{ columns: string[]; rows: LakeRowObject[] }> {
    let result;
    try {
      await refuseUnlessSelect(this.connection, sql);
      result = await this.readSkippingBadFiles(async () => {
        const reader = await this.connection.runAndReadAll(sql);
        return { columns: reader.columnNames(), rows: reader.getRowObjectsJS() };
      });
    } catch (e) {
      if (e instanceof AuroraBenchError) throw e;
      throw new LakeQueryError(`query failed: ${(e as Error).message}`, { cause: e });
    }
    return { columns: result.columns, rows: result.rows.map((r) => toPlain(r) as LakeRowObject) };
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
    rmSync(this.tempDir, { recursive: true, force: true });
  }
}

/** Lines that name the lake files a command had to leave out. Empty when none. */
export function skippedFilesText(lake: { readonly skippedFiles?: readonly SkippedLakeFile[] }): string {
  return (lake.skippedFiles ?? [])
    .map(
      (s) => `warning: lake file ${s.file} left out (${s.reason}): the other rows are shown; fix or remove the file\n`,
    )
    .join('');
}

/** Open the lake or the part `scope` names, run `fn`, always close. */
export async function withLake<T>(
  lakeDir: string,
  fn: (lake: LocalLake) => Promise<T>,
  scope: LakeScope = {},
): Promise<T> {
  const lake = await LocalLake.open(lakeDir, scope);
  try {
    return await fn(lake);
  } finally {
    lake.close();
  }
}
