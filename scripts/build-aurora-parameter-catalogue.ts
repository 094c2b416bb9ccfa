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
 * publishing the guide there in June 2023 (the repository is archived); what AWS changed on the live
 * pages since is core/aurora/aurora-mysql-parameter-amendments.json, edited by hand and applied when
 * the catalogue loads, so a rebuild is needed only when the archive's reading changes.
 *
 * Usage (after `npm run build`):
 *   node dist/scripts/build-aurora-parameter-catalogue.js --git-dir <clone>/.git [--commit SHA] [--out FILE]
 *   node dist/scripts/build-aurora-parameter-catalogue.js --reference FILE --write-forwarding FILE [--commit SHA]
 * The AWS documents themselves are read, never copied into this repository.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import amendmentsJson from '../core/aurora/aurora-mysql-parameter-amendments.json';
import {
  AmendmentsFileSchema,
  applyAmendments,
  setLevel,
  without,
  type CatalogueEntry,
  type Level,
  type LevelInfo,
  type Major,
  type MajorCatalogue,
} from '../core/aurora/parameter-amendments';

export const REFERENCE_REPOSITORY = 'awsdocs/amazon-aurora-user-guide';
/**
 * The last commit with content ("Documentation updates from the week of 2023-06-09"); the next one deleted doc_source.
 */
export const REFERENCE_COMMIT = '287c60402f2da72238efbe4bd10cc34bb03acfa3';
export const REFERENCE_COMMIT_DATE = '2023-06-10';
export const REFERENCE_PATH = 'doc_source/AuroraMySQL.Reference.ParameterGroups.md';
export const WRITE_FORWARDING_PATH = 'doc_source/aurora-global-database-write-forwarding.md';

const MAJORS: readonly Major[] = ['2', '3'];

export interface Catalogue {
  $comment: string;
  source: {
    repository: string;
    commit: string;
    commitDate: string;
    files: string[];
    generator: string;
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
  // What aurora-bench relies on is checked on the catalogue as it loads: the reference, amended.
  const amended = structuredClone(majors);
  applyAmendments(amended, AmendmentsFileSchema.parse(amendmentsJson).amendments);
  checkCatalogue(amended);
  for (const major of MAJORS) {
    majors[major].parameters = sorted(majors[major].parameters);
    majors[major].notApplicable = sorted(majors[major].notApplicable);
  }
  return {
    $comment:
      "Generated by scripts/build-aurora-parameter-catalogue.ts from AWS's Aurora MySQL parameter reference; " +
      'do not edit by hand, rebuild it. Later changes are aurora-mysql-parameter-amendments.json.',
    source: {
      repository: REFERENCE_REPOSITORY,
      commit,
      commitDate,
      files: [REFERENCE_PATH, WRITE_FORWARDING_PATH],
      generator: 'scripts/build-aurora-parameter-catalogue.ts',
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
      `parameters (before the amendments file)\n`,
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
