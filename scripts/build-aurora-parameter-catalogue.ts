/**
 * Builds core/aurora/aurora-mysql-parameters.json, the Aurora MySQL parameter catalogue that
 * `validate` and `plan` check every spec against, from AWS's published reference:
 *
 *   - doc_source/AuroraMySQL.Reference.ParameterGroups.md ("Aurora MySQL configuration parameters":
 *     the cluster-level and instance-level tables with their Modifiable column and notes, and the
 *     list "MySQL parameters that don't apply to Aurora MySQL"), and
 *   - doc_source/aurora-global-database-write-forwarding.md ("Configuration parameters for write
 *     forwarding": scope, type and valid values of aurora_fwd_* and aurora_replica_read_consistency,
 *     which the write forwarding page calls cluster parameters),
 *
 * both from the public repository awsdocs/amazon-aurora-user-guide at a pinned commit. AWS stopped
 * publishing the guide there in June 2023 (the repository is archived), so what AWS changed on the
 * live pages since is applied afterwards as AMENDMENTS below, each with the page it comes from.
 *
 * Usage (after `npm run build`):
 *   node dist/scripts/build-aurora-parameter-catalogue.js --git-dir <clone>/.git [--commit SHA] [--out FILE]
 *   node dist/scripts/build-aurora-parameter-catalogue.js --reference FILE --write-forwarding FILE [--commit SHA]
 * The AWS documents themselves are read, never copied into this repository.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REFERENCE_REPOSITORY = 'awsdocs/amazon-aurora-user-guide';
/**
 * The last commit with content ("Documentation updates from the week of 2023-06-09"); the next one deleted doc_source.
 */
export const REFERENCE_COMMIT = '287c60402f2da72238efbe4bd10cc34bb03acfa3';
export const REFERENCE_COMMIT_DATE = '2023-06-10';
export const REFERENCE_PATH = 'doc_source/AuroraMySQL.Reference.ParameterGroups.md';
export const WRITE_FORWARDING_PATH = 'doc_source/aurora-global-database-write-forwarding.md';

const CURRENT_REFERENCE_PAGE =
  'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraMySQL.Reference.ParameterGroups.html';
const FLUSH_PAGE =
  'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraMySQL.BestPractices.FeatureRecommendations.html#AuroraMySQL.BestPractices.Flush';
const RELEASE_NOTES_3100 =
  'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraMySQLReleaseNotes/AuroraMySQL.Updates.3100.html';
/** When the live pages the amendments come from were read. */
export const AMENDMENTS_READ = '2026-11-22';

export type Major = '2' | '3';
export type Level = 'cluster' | 'instance';
const MAJORS: readonly Major[] = ['2', '3'];

export interface LevelInfo {
  /** true, false, or "at-creation" (only when the cluster is created; aurora-bench creates a new cluster per cell). */
  modifiable: boolean | 'at-creation';
  /** AWS's note for this level, links reduced to their text. */
  note?: string;
}

export interface CatalogueEntry {
  cluster?: LevelInfo;
  instance?: LevelInfo;
  /** Values AWS lists as allowed (compared case-insensitively). */
  allowedValues?: string[];
  /** Inclusive integer range AWS publishes, as decimal strings (some maxima exceed 2^53). */
  range?: { min: string; max: string };
  /** First Aurora MySQL version with the parameter, e.g. "3.05" (only where AWS says so). */
  minVersion?: string;
  /** A value other than `unlessValue` needs `parameter`=`value` at the same level. */
  requires?: { unlessValue: string; parameter: string; value: string };
  /** What a value does that a reader of the spec would not expect (shown as a plan warning). */
  caveats?: Record<string, string>;
  /** The name this parameter has in the other major version. */
  otherName?: string;
  /** Where the entry comes from when not the reference tables: a page URL or the write forwarding table. */
  source?: string;
}

export interface MajorCatalogue {
  mysql: '5.7' | '8.0';
  family: 'aurora-mysql5.7' | 'aurora-mysql8.0';
  parameters: Record<string, CatalogueEntry>;
  /** MySQL parameters AWS says don't apply to Aurora MySQL, with AWS's note. */
  notApplicable: Record<string, string>;
}

export interface Catalogue {
  $comment: string;
  source: {
    repository: string;
    commit: string;
    commitDate: string;
    files: string[];
    generator: string;
    amendments: { read: string; pages: string[]; count: number };
  };
  applyType: string;
  majors: Record<Major, MajorCatalogue>;
}

// ---------------------------------------------------------------- markdown

/** Markdown cell text to plain text: escapes undone, links reduced to their text, tags dropped. */
export function plainText(md: string): string {
  return md
    .replace(/<a name="[^"]*"><\/a>/g, '')
    .replace(/<\/?pre>/g, ' ')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!<>|'"])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The lines of the section that starts with a `## ` heading containing `title`, up to the next `## `. */
export function section(md: string, title: string): string[] {
  const lines = md.split('\n');
  const start = lines.findIndex((l) => l.startsWith('## ') && plainText(l.slice(3)).startsWith(title));
  if (start < 0) throw new Error(`section "${title}" not found`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** Rows of the first pipe table in `lines` (header and separator skipped), cells as raw markdown. */
export function tableRows(lines: readonly string[]): string[][] {
  const rows = lines
    .filter((l) => l.trimStart().startsWith('|'))
    .map((l) =>
      l
        .trim()
        .replace(/^\|/, '')
        .replace(/\|\s*$/, '')
        .split('|')
        .map((c) => c.trim()),
    );
  return rows.slice(2);
}

export interface ReferenceRow {
  readonly name: string;
  readonly modifiable: string;
  readonly note: string;
}

export function referenceRows(md: string, title: string): ReferenceRow[] {
  return tableRows(section(md, title)).map(([name = '', modifiable = '', note = '']) => ({
    name: plainText(name).replace(/`/g, '').trim(),
    modifiable: plainText(modifiable),
    note: plainText(note).replace(/`/g, ''),
  }));
}

/** Bullets of the "don't apply" list: name and AWS's note. */
export function inapplicableRows(md: string): { name: string; note: string }[] {
  return section(md, "MySQL parameters that don't apply to Aurora MySQL")
    .filter((l) => l.startsWith('+ '))
    .map((l) => {
      const text = plainText(l.slice(2));
      const m = /^`([^`]+)`\s*(?:–\s*(.*))?$/.exec(text);
      if (!m) throw new Error(`unexpected list item: ${l}`);
      return { name: m[1]!, note: (m[2] ?? '').replace(/`/g, '') };
    });
}

// ---------------------------------------------------------------- interpretation

/**
 * Which major versions a row's note limits it to (AWS: "Unless
 * otherwise noted, ... valid for Aurora MySQL versions 2 and 3").
 */
export function versionsOf(note: string): Major[] {
  if (
    /Removed from Aurora MySQL version 3|isn't supported for version 3|not available in Aurora MySQL version 3/.test(
      note,
    )
  )
    return ['2'];
  if (
    new RegExp(
      /^Aurora MySQL version 2 only|Only applies to Aurora MySQL version 2\b|applies to Aurora MySQL/.source +
        / version 2\.|^Aurora MySQL version 2\. Use /.source,
    ).test(note)
  )
    return ['2'];
  if (/versions? 2 and 3/.test(note)) return ['2', '3'];
  if (/^Aurora MySQL version 3$|applies to Aurora MySQL version 3\b|available in Aurora MySQL version 3/.test(note))
    return ['3'];
  return ['2', '3'];
}

/** The Modifiable cell (and level-specific notes) for one major version. */
export function modifiableFor(
  cell: string,
  note: string,
  level: Level,
  major: Major,
): LevelInfo['modifiable'] | undefined {
  const perVersion = /Aurora MySQL version 2: (Yes|No) Aurora MySQL version 3: (Yes|No)/.exec(cell);
  if (perVersion) return (major === '2' ? perVersion[1] : perVersion[2]) === 'Yes';
  if (/^Yes \(Aurora MySQL version 2\) Only at cluster creation time \(Aurora MySQL version 3\)$/.test(cell))
    return major === '2' ? true : 'at-creation';
  if (level === 'instance' && major === '3') {
    if (/Removed at the instance level from Aurora MySQL version 3/.test(note)) return undefined;
    if (/[Mm]odifiable only at the (?:DB )?cluster level in Aurora MySQL version 3/.test(note)) return false;
  }
  if (cell === 'Yes' || cell === 'Sometimes') return true;
  if (cell === 'No') return false;
  throw new Error(`unexpected Modifiable cell "${cell}"`);
}

/** Allowed values AWS spells out in a note. */
export function allowedValuesIn(note: string): string[] | undefined {
  const two = /[Aa]llowed values are (\S+?) and (\S+?)(?: \(default\))?[.,]?(?:\s|$)/.exec(note);
  if (two) return [two[1]!, two[2]!];
  const three = /[Ii]ts value can be (\w+), (\w+), or (\w+)/.exec(note);
  if (three) return [three[1]!, three[2]!, three[3]!];
  return undefined;
}

const RENAMED = /^Aurora MySQL version 2\. Use (\S+) in Aurora MySQL version 3/;

function emptyMajor(major: Major): MajorCatalogue {
  return major === '2'
    ? { mysql: '5.7', family: 'aurora-mysql5.7', parameters: {}, notApplicable: {} }
    : { mysql: '8.0', family: 'aurora-mysql8.0', parameters: {}, notApplicable: {} };
}

function setLevel(entry: CatalogueEntry, level: Level, info: LevelInfo): void {
  entry[level] = info.note ? info : { modifiable: info.modifiable };
}

/** Parses the two AWS documents into the catalogue before amendments. */
export function catalogueFromReference(referenceMd: string, writeForwardingMd: string): Record<Major, MajorCatalogue> {
  const majors: Record<Major, MajorCatalogue> = { '2': emptyMajor('2'), '3': emptyMajor('3') };
  for (const [title, level] of [
    ['Cluster-level parameters', 'cluster'],
    ['Instance-level parameters', 'instance'],
  ] as const) {
    for (const row of referenceRows(referenceMd, title)) {
      for (const major of versionsOf(row.note)) {
        const modifiable = modifiableFor(row.modifiable, row.note, level, major);
        if (modifiable === undefined) continue;
        const entry = (majors[major].parameters[row.name] ??= {});
        setLevel(entry, level, { modifiable, ...(row.note ? { note: row.note } : {}) });
        const allowed = allowedValuesIn(row.note);
        if (allowed) entry.allowedValues = allowed;
        const renamed = RENAMED.exec(row.note);
        if (renamed && major === '2') entry.otherName = renamed[1]!;
      }
    }
  }
  // The v3 names of renamed parameters point back at their v2 names.
  for (const [name, entry] of Object.entries(majors['2'].parameters)) {
    const v3 = entry.otherName ? majors['3'].parameters[entry.otherName] : undefined;
    if (v3) v3.otherName = name;
  }
  for (const { name, note } of inapplicableRows(referenceMd)) {
    // "This parameter doesn't apply to Aurora MySQL version 2. It is available in Aurora MySQL version 3."
    const onlyV2 = /doesn't apply to Aurora MySQL version 2\b/.test(note);
    for (const major of onlyV2 ? (['2'] as const) : MAJORS) {
      if (onlyV2) majors[major].parameters = without(majors[major].parameters, name);
      if (!majors[major].parameters[name]) majors[major].notApplicable[name] = note;
    }
  }
  // Write forwarding: "The Aurora cluster parameter groups include settings for the write forwarding feature.
  // Because these are cluster parameters, all DB instances in each cluster have the same values."
  const rows = tableRows(section(writeForwardingMd, 'Configuration parameters for write forwarding'));
  for (const [nameCell = '', , type = '', , valid = ''] of rows) {
    const text = plainText(nameCell);
    const m = /^(\w+)(?: \(Aurora MySQL version (\d)\))?$/.exec(text);
    if (!m) throw new Error(`unexpected write forwarding row: ${nameCell}`);
    const majorsOf: readonly Major[] = m[2] ? [m[2] as Major] : MAJORS;
    const validText = plainText(valid);
    for (const major of majorsOf) {
      const entry: CatalogueEntry = {
        cluster: { modifiable: true, note: `${plainText(type)}; valid values ${validText}` },
        source: `${WRITE_FORWARDING_PATH} (Configuration parameters for write forwarding)`,
      };
      const range = /^([0-9,]+)\s*[–-]\s*([0-9,]+)$/.exec(validText);
      if (range) entry.range = { min: range[1]!.replace(/,/g, ''), max: range[2]!.replace(/,/g, '') };
      else entry.allowedValues = validText.split(',').map((v) => v.trim());
      majors[major].parameters[m[1]!] = entry;
    }
  }
  return majors;
}

// ---------------------------------------------------------------- amendments

/** A change AWS published on the live pages after the repository was archived. */
export interface Amendment {
  readonly majors: readonly Major[];
  readonly name: string;
  /** Levels to set (omitted: keep the entry's levels). */
  readonly levels?: Partial<Record<Level, LevelInfo>>;
  readonly allowedValues?: string[];
  readonly range?: { min: string; max: string };
  readonly minVersion?: string;
  readonly requires?: CatalogueEntry['requires'];
  readonly caveats?: Record<string, string>;
  /** Remove the parameter and list it as not applying to Aurora MySQL, with this note. */
  readonly notApplicable?: string;
  readonly source: string;
}

const yes = (note?: string): LevelInfo => ({ modifiable: true, ...(note ? { note } : {}) });
const both: readonly Major[] = ['2', '3'];
const v3: readonly Major[] = ['3'];

/** From the live pages, read on AMENDMENTS_READ; the wording in notes is AWS's. */
export const AMENDMENTS: readonly Amendment[] = [
  // Cluster-level table.
  {
    majors: v3,
    name: 'aurora_binlog_replication_sec_index_parallel_workers',
    levels: {
      cluster: yes('Parallel threads applying secondary index changes in binlog replication; 0 (disabled) by default.'),
    },
    minVersion: '3.06',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'aurora_in_memory_relaylog',
    levels: { cluster: yes('In-memory relay log mode for binlog replicas.') },
    allowedValues: ['ON', 'OFF'],
    minVersion: '3.10',
    source: `${CURRENT_REFERENCE_PAGE}; ${RELEASE_NOTES_3100}`,
  },
  {
    majors: both,
    name: 'aurora_full_double_precision_in_json',
    levels: { cluster: yes('Parse floating point numbers in JSON documents with full precision.') },
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'aurora_jemalloc_background_thread',
    levels: { cluster: yes('Background thread for memory maintenance; 0 (disabled, default) or 1.') },
    allowedValues: ['0', '1'],
    minVersion: '3.05',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'aurora_jemalloc_dirty_decay_ms',
    levels: { cluster: yes('How long freed memory is retained, in milliseconds; default 10000.') },
    range: { min: '0', max: '18446744073709551615' },
    minVersion: '3.05',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'aurora_jemalloc_tcache_enabled',
    levels: { cluster: yes('Thread-local cache for small memory requests; 0 or 1 (default).') },
    allowedValues: ['0', '1'],
    minVersion: '3.05',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'authentication_kerberos_caseins_cmp',
    levels: { cluster: yes('Case-insensitive user name comparison for authentication_kerberos.') },
    minVersion: '3.03',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: ['2'],
    name: 'binlog_transaction_dependency_history_size',
    levels: { cluster: yes('Applies to Aurora MySQL version 2.12 and higher, and version 3.') },
    minVersion: '2.12',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'information_schema_stats_expiry',
    levels: { cluster: yes('Seconds after which cached information_schema statistics are refreshed.') },
    range: { min: '0', max: '31536000' },
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'innodb_aurora_instant_alter_column_allowed',
    levels: { cluster: yes('Whether ALTER COLUMN may use the INSTANT algorithm; 0 or 1 (default).') },
    allowedValues: ['0', '1'],
    minVersion: '3.05',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: ['2'],
    name: 'innodb_deadlock_detect',
    levels: {
      cluster: yes('Disables deadlock detection in Aurora MySQL version 2.11 and higher and version 3.'),
      instance: yes('Disables deadlock detection in Aurora MySQL version 2.11 and higher and version 3.'),
    },
    minVersion: '2.11',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: both,
    name: 'innodb_flush_log_at_trx_commit',
    levels: {
      cluster: yes(
        'AWS highly recommends the default 1. In Aurora MySQL version 3, set innodb_trx_commit_allow_data_loss ' +
          'to 1 before setting a value other than 1.',
      ),
    },
    allowedValues: ['0', '1', '2'],
    source: `${CURRENT_REFERENCE_PAGE}; ${FLUSH_PAGE}`,
  },
  {
    majors: v3,
    name: 'innodb_flush_log_at_trx_commit',
    requires: { unlessValue: '1', parameter: 'innodb_trx_commit_allow_data_loss', value: '1' },
    caveats: {
      '2':
        'on Aurora MySQL version 3 the value 2 waits for the cluster volume like 1; only 0 does not wait ' +
        '(AWS: to get the behaviour of 0 or 2 in version 2, set 0)',
    },
    source: FLUSH_PAGE,
  },
  {
    majors: both,
    name: 'innodb_stats_include_delete_marked',
    levels: {
      cluster: yes('Include delete-marked records in persistent statistics; version 2.12 and higher, and version 3.'),
    },
    source: CURRENT_REFERENCE_PAGE,
  },
  { majors: ['2'], name: 'innodb_stats_include_delete_marked', minVersion: '2.12', source: CURRENT_REFERENCE_PAGE },
  {
    majors: v3,
    name: 'innodb_trx_commit_allow_data_loss',
    levels: { cluster: yes('Set to 1 so that innodb_flush_log_at_trx_commit can be changed; default 0.') },
    allowedValues: ['0', '1'],
    source: `${CURRENT_REFERENCE_PAGE}; ${FLUSH_PAGE}`,
  },
  {
    majors: v3,
    name: 'log_error_suppression_list',
    levels: {
      cluster: yes('Error codes not written to the error log.'),
      instance: yes('Error codes not written to the error log.'),
    },
    minVersion: '3.03',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: both,
    name: 'max_execution_time',
    levels: {
      cluster: yes('Timeout for SELECT statements in milliseconds; 0 = none.'),
      instance: yes('Timeout for SELECT statements in milliseconds; 0 = none.'),
    },
    range: { min: '0', max: '18446744073709551615' },
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: ['2'],
    name: 'read_only',
    allowedValues: ['0', '1', '{TrueIfReplica}', '{TrueIfClusterReplica}'],
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'read_only',
    allowedValues: ['0', '1', '{TrueIfClusterReplica}'],
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'replica_type_conversions',
    levels: { cluster: yes('Type conversions on replicas: ALL_LOSSY, ALL_NON_LOSSY, ALL_SIGNED, ALL_UNSIGNED.') },
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: both,
    name: 'server_audit_cw_upload',
    levels: { cluster: { modifiable: false, note: 'Deprecated in Aurora MySQL: use server_audit_logs_upload.' } },
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: both,
    name: 'server_audit_logs_upload',
    levels: { cluster: yes('1 publishes audit logs to CloudWatch Logs; default 0.') },
    allowedValues: ['0', '1'],
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: both,
    name: 'thread_cache_size',
    levels: { cluster: yes('The number of threads to be cached. Applies to Aurora MySQL versions 2 and 3.') },
    source: CURRENT_REFERENCE_PAGE,
  },
  { majors: both, name: 'innodb_undo_logs', notApplicable: '', source: CURRENT_REFERENCE_PAGE },
  { majors: both, name: 'innodb_undo_tablespaces', notApplicable: '', source: CURRENT_REFERENCE_PAGE },
  { majors: both, name: 'innodb_log_writer_threads', notApplicable: '', source: CURRENT_REFERENCE_PAGE },
  // Instance-level table.
  {
    majors: both,
    name: 'aurora_read_replica_read_committed',
    levels: { instance: yes('READ COMMITTED isolation for Aurora Replicas (less strict than the MySQL default).') },
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'aurora_tmptable_enable_per_table_limit',
    levels: { instance: yes('Whether tmp_table_size limits TempTable in-memory tables.') },
    minVersion: '3.04',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'aurora_use_vector_instructions',
    levels: { instance: yes('Vector processing instructions; on by default in 3.05 and higher.') },
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'innodb_aurora_max_partitions_for_range',
    levels: { instance: yes('Partitions checked for row count estimation; 0 = all.') },
    range: { min: '0', max: '8192' },
    minVersion: '3.03.1',
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: v3,
    name: 'internal_tmp_mem_storage_engine',
    levels: {
      cluster: yes('Allowed values are MEMORY and TempTable.'),
      instance: yes('Writers: MEMORY or TempTable; on readers it is TempTable and cannot be modified.'),
    },
    source: CURRENT_REFERENCE_PAGE,
  },
  {
    majors: both,
    name: 'performance_schema_show_processlist',
    levels: { instance: yes('SHOW PROCESSLIST from the Performance Schema; version 2.12 and higher, and version 3.') },
    source: CURRENT_REFERENCE_PAGE,
  },
  { majors: ['2'], name: 'performance_schema_show_processlist', minVersion: '2.12', source: CURRENT_REFERENCE_PAGE },
  {
    majors: both,
    name: 'show_create_table_verbosity',
    levels: { instance: yes('SHOW CREATE TABLE displays ROW_FORMAT; version 2.12 and higher, and version 3.') },
    source: CURRENT_REFERENCE_PAGE,
  },
  { majors: ['2'], name: 'show_create_table_verbosity', minVersion: '2.12', source: CURRENT_REFERENCE_PAGE },
  // The live page no longer limits these Performance Schema sizes to version 2.
  ...[
    'performance_schema_events_transactions_history_long_size',
    'performance_schema_events_transactions_history_size',
    'performance_schema_max_index_stat',
    'performance_schema_max_memory_classes',
    'performance_schema_max_metadata_locks',
    'performance_schema_max_prepared_statements_instances',
    'performance_schema_max_program_instances',
    'performance_schema_max_sql_text_length',
    'performance_schema_max_statement_stack',
    'performance_schema_max_table_lock_stat',
  ].map((name): Amendment => ({ majors: v3, name, levels: { instance: yes() }, source: CURRENT_REFERENCE_PAGE })),
];

/** The record less one key (the others keep their order, which the written catalogue shows). */
function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  const { [key]: _removed, ...rest } = record;
  return rest;
}

export function applyAmendments(majors: Record<Major, MajorCatalogue>, amendments: readonly Amendment[]): void {
  for (const a of amendments) {
    for (const major of a.majors) {
      const cat = majors[major];
      if (a.notApplicable !== undefined) {
        cat.parameters = without(cat.parameters, a.name);
        cat.notApplicable[a.name] = a.notApplicable;
        continue;
      }
      cat.notApplicable = without(cat.notApplicable, a.name);
      const entry = (cat.parameters[a.name] ??= {});
      for (const level of ['cluster', 'instance'] as const) {
        const info = a.levels?.[level];
        if (info) setLevel(entry, level, info);
      }
      if (!entry.cluster && !entry.instance)
        throw new Error(`amendment for ${a.name} (Aurora MySQL ${major}) leaves it without a level`);
      if (a.allowedValues) entry.allowedValues = a.allowedValues;
      if (a.range) entry.range = a.range;
      if (a.minVersion) entry.minVersion = a.minVersion;
      if (a.requires) entry.requires = a.requires;
      if (a.caveats) entry.caveats = a.caveats;
      entry.source = [...new Set([...(entry.source ? entry.source.split('; ') : []), ...a.source.split('; ')])].join(
        '; ',
      );
    }
  }
}

// ---------------------------------------------------------------- checks and output

/** Facts the rest of aurora-bench relies on; the build fails when the documents say otherwise. */
export function checkCatalogue(majors: Record<Major, MajorCatalogue>): void {
  const problems: string[] = [];
  const expect = (ok: boolean, what: string) => {
    if (!ok) problems.push(what);
  };
  const v3p = majors['3'].parameters;
  // core/backends/aws: clusterParametersFor sets these on the cluster parameter group.
  for (const name of [
    'aurora_replica_read_consistency',
    'aurora_fwd_writer_max_connections_pct',
    'aurora_fwd_writer_idle_timeout',
  ]) {
    expect(v3p[name]?.cluster?.modifiable === true, `${name} is a modifiable cluster parameter of Aurora MySQL 3`);
  }
  expect(v3p['thread_handling']?.instance?.modifiable === false, 'thread_handling is listed and not modifiable');
  expect(v3p['sync_binlog']?.instance?.modifiable === false, 'sync_binlog is listed and not modifiable');
  expect(
    'innodb_flush_method' in majors['3'].notApplicable,
    "innodb_flush_method is among the parameters that don't apply",
  );
  expect(
    Object.keys(v3p).length > 250 && Object.keys(majors['2'].parameters).length > 250,
    'both majors have their full tables',
  );
  if (problems.length > 0)
    throw new Error(`the parsed reference contradicts what aurora-bench relies on:\n  - ${problems.join('\n  - ')}`);
}

function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((k) => [k, record[k]!]),
  );
}

export function buildCatalogue(
  referenceMd: string,
  writeForwardingMd: string,
  commit: string,
  commitDate: string,
): Catalogue {
  const majors = catalogueFromReference(referenceMd, writeForwardingMd);
  applyAmendments(majors, AMENDMENTS);
  checkCatalogue(majors);
  for (const major of MAJORS) {
    majors[major].parameters = sorted(majors[major].parameters);
    majors[major].notApplicable = sorted(majors[major].notApplicable);
  }
  const pages = [...new Set(AMENDMENTS.flatMap((a) => a.source.split('; ')))].sort();
  return {
    $comment:
      "Generated by scripts/build-aurora-parameter-catalogue.ts from AWS's Aurora MySQL parameter reference; " +
      'do not edit by hand, rebuild it.',
    source: {
      repository: REFERENCE_REPOSITORY,
      commit,
      commitDate,
      files: [REFERENCE_PATH, WRITE_FORWARDING_PATH],
      generator: 'scripts/build-aurora-parameter-catalogue.ts',
      amendments: { read: AMENDMENTS_READ, pages, count: AMENDMENTS.length },
    },
    applyType:
      "AWS's reference pages do not publish whether a parameter is static or dynamic, nor most ranges: RDS " +
      'reports both (ApplyType, AllowedValues) through DescribeEngineDefaultClusterParameters and ' +
      'DescribeEngineDefaultParameters, which the account preflight reads. aurora-bench sets every parameter ' +
      'with ApplyMethod pending-reboot on a new cluster, so the apply type does not change what it can set.',
    majors,
  };
}

function argValue(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function main(args: readonly string[]): void {
  const repoRoot = resolve(__dirname, '..', '..');
  const out = argValue(args, '--out') ?? join(repoRoot, 'core', 'aurora', 'aurora-mysql-parameters.json');
  const commit = argValue(args, '--commit') ?? REFERENCE_COMMIT;
  const gitDir = argValue(args, '--git-dir');
  let reference: string;
  let writeForwarding: string;
  let commitDate = argValue(args, '--commit-date') ?? REFERENCE_COMMIT_DATE;
  if (gitDir) {
    const show = (path: string) =>
      execFileSync('git', ['--git-dir', gitDir, 'show', `${commit}:${path}`], {
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
      });
    reference = show(REFERENCE_PATH);
    writeForwarding = show(WRITE_FORWARDING_PATH);
    commitDate = execFileSync('git', ['--git-dir', gitDir, 'log', '-1', '--format=%cs', commit], {
      encoding: 'utf8',
    }).trim();
  } else {
    const referenceFile = argValue(args, '--reference');
    const wfFile = argValue(args, '--write-forwarding');
    if (!referenceFile || !wfFile) {
      throw new Error(
        'give --git-dir <clone of awsdocs/amazon-aurora-user-guide>/.git, or --reference FILE and ' +
          '--write-forwarding FILE',
      );
    }
    reference = readFileSync(referenceFile, 'utf8');
    writeForwarding = readFileSync(wfFile, 'utf8');
  }
  const catalogue = buildCatalogue(reference, writeForwarding, commit, commitDate);
  writeFileSync(out, JSON.stringify(catalogue, null, 1) + '\n');
  const count = (m: Major) => Object.keys(catalogue.majors[m].parameters).length;
  process.stdout.write(
    `wrote ${out}: Aurora MySQL 2 ${count('2')} parameters, Aurora MySQL 3 ${count('3')} ` +
      `parameters, ${AMENDMENTS.length} amendments\n`,
  );
}

if (require.main === module) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`build-aurora-parameter-catalogue: ${(e as Error).message}\n`);
    process.exit(1);
  }
}
