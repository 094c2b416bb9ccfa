/**
 * A variant's cluster and instance parameters, as far as the local MariaDB understands them.
 *
 * For each parameter (instance parameters override cluster ones, as in Aurora; a local what-if's
 * localOnlyParameters override both and are noted "local only"):
 *   - Aurora-only (aurora_*, aws_*, rds.*, or unknown to this MariaDB) -> a warning note
 *     "not applicable locally: ...", never silently dropped;
 *   - managed by the local backend (ports, paths, server_id, log_bin, read_only ...) -> a warning;
 *   - otherwise the value is normalised (ON/OFF, "12G" -> bytes, {formulas} evaluated with the
 *     local shape, absolute buffer pool sizes scaled like the instance memory), checked against
 *     MariaDB's own range/enum metadata, and sent either to the server's option file (startup-only
 *     variables, and sizing ones best set before InnoDB starts) or to SET GLOBAL after start.
 * What the server then reports back is compared with what was asked (verifyParameters).
 */
import type { ResolvedVariant, PlanNote } from '../../plan/types';
import { formatBytes, type LocalInstanceShape } from './instance-classes';
import { evaluateFormula, FormulaError, isFormula } from '../../aurora/rds-formula';
import { query, sqlString, type SqlTarget } from './sql-client';
import { FIXED_AT_INIT, SERVER_MANAGED_OPTIONS } from '../../aurora/server-config';

/** One row of information_schema.SYSTEM_VARIABLES, as the template records it. */
export interface VariableInfo {
  /** lower case */
  readonly name: string;
  readonly readOnly: boolean;
  /** MariaDB's VARIABLE_TYPE: BOOLEAN, ENUM, SET, VARCHAR, INT UNSIGNED, BIGINT UNSIGNED, DOUBLE ... */
  readonly type: string;
  readonly enumValues?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  readonly scope: string;
}
export type VariableCatalog = ReadonlyMap<string, VariableInfo>;

type ParameterValue = string | number | boolean;

interface AppliedParameter {
  readonly name: string;
  /** The value sent to MariaDB (option file or SET GLOBAL). */
  readonly value: string;
  readonly how: 'startup' | 'dynamic';
  /** Spec path, or "instanceClass" for the class-derived defaults. */
  readonly path: string;
}

export interface ParameterPlan {
  /** Options written to the server's option file (name -> value). */
  readonly startup: Readonly<Record<string, string>>;
  /** SET GLOBAL after the server is up (name -> value). */
  readonly dynamic: Readonly<Record<string, string>>;
  readonly applied: readonly AppliedParameter[];
  readonly notes: readonly PlanNote[];
}

export interface ParameterContext {
  /** The parameters of a variant (the AWS rehearsal passes those of an instance's parameter groups). */
  readonly variant: Pick<ResolvedVariant, 'name' | 'clusterParameters' | 'instanceParameters' | 'localOnlyParameters'>;
  readonly shape: LocalInstanceShape;
  readonly catalog: VariableCatalog;
  readonly role: 'writer' | 'reader';
  /** e.g. "10.11.19-MariaDB", for messages. */
  readonly serverVersion: string;
}

const AURORA_ONLY_PREFIXES = ['aurora_', 'aws_', 'rds.', 'rds_'];

/** Parameters Aurora has that MariaDB has under the same name but where the local meaning differs. */
const NOT_APPLICABLE_VALUES: Readonly<Record<string, (v: string) => string | undefined>> = {
  // On Aurora binlog_format only switches external binlog replication on/off (OFF = no binlog);
  // local replicas replicate through the binlog, so it cannot be turned off.
  binlog_format: (v) =>
    v.toUpperCase() === 'OFF'
      ? "binlog_format=OFF turns off Aurora's binlog (Aurora replicas do not use it); local replicas replicate " +
        'through the binlog, which stays on (ROW)'
      : undefined,
};

/** Dynamic in MariaDB but best decided before start (no online buffer pool / log resize, fd limits). */
const PREFER_STARTUP = new Set([
  'innodb_buffer_pool_size',
  'max_connections',
  'innodb_log_file_size',
  'innodb_log_buffer_size',
  'table_open_cache',
  'innodb_buffer_pool_chunk_size',
]);

/** Sizes written as in my.cnf / parameter groups: 512K, 64M, 12G, 1T (binary multiples). */
const SIZE = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTkmgt])(?:i?[Bb])?\s*$/;
const UNIT: Readonly<Record<string, number>> = { k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** @internal exported for its tests (a test seam) */
export function parseSize(text: string): number | undefined {
  const m = SIZE.exec(text);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * UNIT[m[2]!.toLowerCase()]!);
}

const isNumericType = (type: string) => /INT|DOUBLE|DECIMAL|FLOAT/i.test(type);

interface Resolved {
  readonly value?: string;
  readonly notes: PlanNote[];
}

function warn(path: string, message: string): PlanNote {
  return { level: 'warning', path, message };
}
function info(path: string, message: string): PlanNote {
  return { level: 'info', path, message };
}

/** Normalises one value for MariaDB: returns the value to send, or notes saying why it is not sent. */
function resolveValue(
  name: string,
  raw: ParameterValue,
  v: VariableInfo,
  ctx: ParameterContext,
  path: string,
): Resolved {
  const notes: PlanNote[] = [];
  const numeric = isNumericType(v.type);
  let value: string;

  if (typeof raw === 'boolean') {
    value = v.type === 'BOOLEAN' || !numeric ? (raw ? 'ON' : 'OFF') : raw ? '1' : '0';
  } else if (typeof raw === 'number') {
    value = String(raw);
  } else if (isFormula(raw)) {
    try {
      const n = evaluateFormula(raw, {
        DBInstanceClassMemory: ctx.shape.localMemoryBytes,
        DBInstanceVCPU: ctx.shape.cores,
        TrueIfReplica: ctx.role === 'reader' ? 1 : 0,
        EndPointPort: undefined,
        AllocatedStorage: undefined,
      });
      value = String(n);
      notes.push(
        info(
          path,
          `formula ${raw} evaluated locally to ${n}${name.includes('size') ? ` (${formatBytes(n)})` : ''} with ` +
            `DBInstanceClassMemory=${formatBytes(ctx.shape.localMemoryBytes)}, DBInstanceVCPU=${ctx.shape.cores}`,
        ),
      );
    } catch (e) {
      const why = e instanceof FormulaError ? e.message : String(e);
      return { notes: [warn(path, `not applicable locally: cannot evaluate formula ${raw}: ${why}`)] };
    }
  } else if (numeric && parseSize(raw) !== undefined) {
    value = String(parseSize(raw));
  } else {
    value = raw.trim();
  }

  if (v.type === 'BOOLEAN') {
    const b = value.toUpperCase();
    if (['1', 'ON', 'TRUE', 'YES'].includes(b)) value = 'ON';
    else if (['0', 'OFF', 'FALSE', 'NO'].includes(b)) value = 'OFF';
    else return { notes: [warn(path, `not applicable locally: "${raw}" is not a boolean for ${name}`)] };
  }

  if (v.type === 'ENUM' && v.enumValues && v.enumValues.length > 0) {
    const match =
      v.enumValues.find((e) => e.toLowerCase() === value.toLowerCase()) ??
      (/^[0-9]+$/.test(value) ? v.enumValues[Number(value)] : undefined);
    if (match === undefined) {
      return {
        notes: [
          warn(
            path,
            `not applicable locally: MariaDB ${ctx.serverVersion} does not accept ${name}=${raw} ` +
              `(accepted: ${v.enumValues.join(', ')})`,
          ),
        ],
      };
    }
    value = match;
  }

  if (numeric) {
    let n = Number(value);
    if (!Number.isFinite(n)) {
      return { notes: [warn(path, `not applicable locally: ${name} needs a number, got "${raw}"`)] };
    }
    // An absolute buffer pool size was chosen for the real instance's memory: keep its share of
    // memory locally, the way the instance memory itself is scaled.
    if (
      name === 'innodb_buffer_pool_size' &&
      typeof raw !== 'boolean' &&
      !(typeof raw === 'string' && isFormula(raw))
    ) {
      const scaled = Math.max(1024 * 1024, Math.floor((n * ctx.shape.memoryScale) / (1024 * 1024)) * 1024 * 1024);
      notes.push(
        info(
          path,
          `innodb_buffer_pool_size ${raw} is sized for ${ctx.shape.memoryGiB} GiB ` +
            `of ${ctx.shape.instanceClass}; scaled locally by the instance memory ratio ` +
            `(1/${Math.round(1 / ctx.shape.memoryScale)}) to ${formatBytes(scaled)}`,
        ),
      );
      n = scaled;
    }
    if (name === 'innodb_buffer_pool_size' && n > ctx.shape.memoryCapBytes) {
      notes.push(
        warn(
          path,
          `innodb_buffer_pool_size ${formatBytes(n)} exceeds what one local server may use ` +
            `(${formatBytes(ctx.shape.memoryCapBytes)} = host memory / 8): capped`,
        ),
      );
      n = ctx.shape.memoryCapBytes;
    }
    if (v.min !== undefined && n < v.min) {
      notes.push(warn(path, `${name}=${n} is below MariaDB's minimum ${v.min}: ${v.min} is used locally`));
      n = v.min;
    }
    if (v.max !== undefined && n > v.max) {
      notes.push(warn(path, `${name}=${n} is above MariaDB's maximum ${v.max}: ${v.max} is used locally`));
      n = v.max;
    }
    value = String(n);
  }
  return { value, notes };
}

/** Plans every parameter of the variant for one server (writer or reader). Pure: no server needed. */
export function planParameters(ctx: ParameterContext): ParameterPlan {
  const vpath = `variants[name=${ctx.variant.name}]`;
  const wanted = new Map<string, { raw: ParameterValue; path: string; original: string; localOnly?: boolean }>();
  for (const [k, raw] of Object.entries(ctx.variant.clusterParameters))
    wanted.set(k.toLowerCase(), { raw, path: `${vpath}.clusterParameters.${k}`, original: k });
  for (const [k, raw] of Object.entries(ctx.variant.instanceParameters))
    wanted.set(k.toLowerCase(), { raw, path: `${vpath}.instanceParameters.${k}`, original: k });
  // A local what-if's MariaDB-only settings come last: they are what the what-if is about.
  for (const [k, raw] of Object.entries(ctx.variant.localOnlyParameters ?? {})) {
    wanted.set(k.toLowerCase(), { raw, path: `${vpath}.localOnlyParameters.${k}`, original: k, localOnly: true });
  }

  // Class-derived defaults, unless the spec sets them.
  if (!wanted.has('innodb_buffer_pool_size')) {
    wanted.set('innodb_buffer_pool_size', {
      raw: '{DBInstanceClassMemory*3/4}',
      path: `${vpath}.instanceClass`,
      original: 'innodb_buffer_pool_size',
    });
  }
  if (!wanted.has('max_connections')) {
    wanted.set('max_connections', {
      raw: ctx.shape.maxConnections,
      path: `${vpath}.instanceClass`,
      original: 'max_connections',
    });
  }

  const startup: Record<string, string> = {};
  const dynamic: Record<string, string> = {};
  const applied: AppliedParameter[] = [];
  const notes: PlanNote[] = [];

  for (const [name, { raw, path, original, localOnly }] of wanted) {
    const classDefault = path.endsWith('.instanceClass');
    if (AURORA_ONLY_PREFIXES.some((p) => name.startsWith(p))) {
      notes.push(
        warn(
          path,
          `not applicable locally: ${original} is an Aurora/RDS-only parameter (MariaDB has no equivalent); it ` +
            `takes effect on AWS only`,
        ),
      );
      continue;
    }
    if (SERVER_MANAGED_OPTIONS.has(name)) {
      notes.push(
        warn(
          path,
          `not applicable locally: ${original} is set by the local backend (ports, paths, replication roles); ` +
            `the spec value ${String(raw)} is ignored`,
        ),
      );
      continue;
    }
    if (FIXED_AT_INIT.has(name)) {
      notes.push(
        warn(
          path,
          `not applicable locally: ${original} is fixed when the data directory is initialised; the local ` +
            `template uses MariaDB's default`,
        ),
      );
      continue;
    }
    const special = NOT_APPLICABLE_VALUES[name]?.(String(raw));
    if (special) {
      notes.push(warn(path, `not applicable locally: ${special}`));
      continue;
    }
    const v = ctx.catalog.get(name);
    if (!v) {
      notes.push(
        warn(
          path,
          `not applicable locally: MariaDB ${ctx.serverVersion} has no system variable ${original} (an Aurora ` +
            `MySQL/MySQL-only parameter); it takes effect on AWS only`,
        ),
      );
      continue;
    }
    if (v.scope === 'SESSION ONLY') {
      notes.push(warn(path, `not applicable locally: ${original} is a session-only variable in MariaDB`));
      continue;
    }
    const resolved = resolveValue(name, raw, v, ctx, path);
    // Class-derived defaults are said once, in the shape note, not per parameter.
    if (!classDefault) notes.push(...resolved.notes);
    if (resolved.value === undefined) continue;
    const how = v.readOnly || PREFER_STARTUP.has(name) ? 'startup' : 'dynamic';
    (how === 'startup' ? startup : dynamic)[name] = resolved.value;
    applied.push({ name, value: resolved.value, how, path });
    if (localOnly) {
      notes.push(
        info(
          path,
          `local only: ${original}=${resolved.value} set on MariaDB ${ctx.serverVersion} ` +
            `(${how === 'startup' ? 'option file' : 'SET GLOBAL'}) for this what-if; Aurora does not let you set it`,
        ),
      );
    }
  }
  return { startup, dynamic, applied, notes };
}

/** SET GLOBAL literal: numbers bare, everything else quoted. */
function setGlobalLiteral(name: string, value: string, catalog: VariableCatalog): string {
  const v = catalog.get(name);
  return v && isNumericType(v.type) && /^-?[0-9]+(\.[0-9]+)?$/.test(value) ? value : sqlString(value);
}

/** Applies the dynamic part with SET GLOBAL, one statement per variable; a rejected value becomes a warning note. */
export async function applyDynamicParameters(
  server: SqlTarget & { instanceId: string },
  plan: ParameterPlan,
  catalog: VariableCatalog,
): Promise<PlanNote[]> {
  const notes: PlanNote[] = [];
  for (const [name, value] of Object.entries(plan.dynamic)) {
    const path = plan.applied.find((a) => a.name === name)?.path ?? name;
    try {
      await query(server, `SET GLOBAL ${name} = ${setGlobalLiteral(name, value, catalog)}`);
    } catch (e) {
      notes.push(
        warn(path, `not applied on ${server.instanceId}: MariaDB rejected ${name}=${value}: ${(e as Error).message}`),
      );
    }
  }
  return notes;
}

function sameValue(asked: string, actual: string, v: VariableInfo | undefined): boolean {
  if (asked.toLowerCase() === actual.toLowerCase()) return true;
  const a = Number(asked);
  const b = Number(actual);
  if (Number.isFinite(a) && Number.isFinite(b) && a === b) return true;
  if (v?.type === 'BOOLEAN') return (asked === 'ON') === ['ON', '1'].includes(actual.toUpperCase());
  return false;
}

/** Reads back every applied variable; where MariaDB adjusted a value (rounding, fd limits) says so in an info note. */
export async function verifyParameters(
  server: SqlTarget & { instanceId: string },
  plan: ParameterPlan,
  catalog: VariableCatalog,
): Promise<{ effective: Record<string, string>; notes: PlanNote[] }> {
  if (plan.applied.length === 0) return { effective: {}, notes: [] };
  const names = plan.applied.map((a) => a.name.toUpperCase());
  const rows = await query(
    server,
    `SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME ` +
      `IN (${names.map(sqlString).join(',')})`,
  );
  const effective: Record<string, string> = {};
  for (const r of rows) if (r[0]) effective[r[0]] = r[1] ?? '';
  const notes: PlanNote[] = [];
  for (const a of plan.applied) {
    const actual = effective[a.name];
    if (actual === undefined) {
      notes.push(warn(a.path, `${a.name} is not reported by ${server.instanceId} after it was set`));
    } else if (!sameValue(a.value, actual, catalog.get(a.name))) {
      notes.push(info(a.path, `MariaDB on ${server.instanceId} adjusted ${a.name} from ${a.value} to ${actual}`));
    }
  }
  return { effective, notes };
}

/** Notes of several servers, each (path, message) once; a server name in a message keeps them apart. */
export function dedupeNotes(notes: readonly PlanNote[]): PlanNote[] {
  const seen = new Set<string>();
  return notes.filter((n) => {
    const key = `${n.level}|${n.path}|${n.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
