/**
 * A MariaDB server's own configuration file.
 * Both the local backend and a self-managed server on EC2 use it.
 * The backend renders the lines without a server at hand, so it checks what it can offline.
 * MariaDB checks the rest at start, and server-setup.sh fails with MariaDB's own reason.
 *
 * Sources.
 * Option file syntax is in MariaDB Server documentation, "Configuring MariaDB with Option Files".
 * thread_handling is a startup option, so it belongs in this file.
 * See MariaDB Server documentation, "Thread Pool in MariaDB" and "Thread Pool System and Status Variables".
 * innodb_buffer_pool_size defaults to 3/4 of memory, as Aurora and RDS give it.
 * See Aurora User Guide, "Specifying DB parameters".
 * max_connections defaults to the instance class's value, not MariaDB's 151.
 * A thread sweep past 151 would otherwise hit connection errors that no managed offering has.
 */
import { evaluateFormula, FormulaError, isFormula } from './rds-formula';

/** Option names as MariaDB reads them, with '-' and '_' alike. */
function optionName(name: string): string {
  return name.trim().toLowerCase().replace(/-/g, '_');
}

/** Set by whoever starts the server. A spec value would break the cluster or the bookkeeping. */
export const SERVER_MANAGED_OPTIONS: ReadonlySet<string> = new Set([
  'port',
  'socket',
  'datadir',
  'basedir',
  'tmpdir',
  'pid_file',
  'log_error',
  'bind_address',
  'user',
  'server_id',
  'log_bin',
  'log_bin_basename',
  'log_bin_index',
  'relay_log',
  'relay_log_index',
  'log_slave_updates',
  'log_replica_updates',
  'read_only',
  'gtid_strict_mode',
  'gtid_domain_id',
  'skip_slave_start',
  'skip_networking',
  'skip_name_resolve',
  'plugin_dir',
  'innodb_data_home_dir',
  'innodb_log_group_home_dir',
  'innodb_undo_directory',
  'general_log_file',
  'slow_query_log_file',
  'report_host',
  'report_port',
  // Every other option that names a file, directory, library or command the server would use.
  // Each is listed under every name mariadbd 10.11 accepts. See `mariadbd --help --verbose`.
  // A spec must not make the server write outside its run directory or load what it names.
  'log_slow_query_file',
  'aria_log_dir_path',
  'character_sets_dir',
  'des_key_file',
  'ft_stopword_file',
  'init_file',
  'innodb_buffer_pool_filename',
  'innodb_temp_data_file_path',
  'innodb_tmpdir',
  'language',
  'lc_messages_dir',
  'log_basename',
  'log_ddl_recovery',
  'log_isam',
  'log_tc',
  'master_info_file',
  'relay_log_info_file',
  'secure_file_priv',
  'slave_load_tmpdir',
  'ssl_ca',
  'ssl_capath',
  'ssl_cert',
  'ssl_crl',
  'ssl_crlpath',
  'ssl_key',
  'plugin_load',
  'plugin_load_add',
  'wsrep_data_home_dir',
  'wsrep_provider',
  'wsrep_status_file',
  'wsrep_notify_cmd',
]);

/** Fixed when the datadir is created. A later option file cannot change them. */
export const FIXED_AT_INIT: ReadonlySet<string> = new Set([
  'innodb_page_size',
  'lower_case_table_names',
  'innodb_undo_tablespaces',
  'innodb_data_file_path',
]);

/** Names that exist only in Aurora or RDS parameter groups. */
const AWS_ONLY_PREFIXES = ['aurora_', 'aws_', 'rds.', 'rds_', 'apg_', 'apg.'];

/** An option file value on one line, quoted when it holds spaces, #, ; or quotes. */
export function optionFileValue(value: string): string {
  if (/[\n\r]/.test(value)) throw new Error(`option value contains a newline: ${JSON.stringify(value)}`);
  return /[\s#;"'\\]/.test(value) ? `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : value;
}

/** `name=value` lines. Null is a flag without a value, and booleans become ON or OFF. */
export function optionFileLines(options: Readonly<Record<string, string | number | boolean | null>>): string[] {
  return Object.entries(options).map(([k, v]) =>
    v === null ? k : `${k}=${optionFileValue(typeof v === 'boolean' ? (v ? 'ON' : 'OFF') : String(v))}`,
  );
}

/** What the server's instance has, from the EC2 instance type of the variant's class. */
export interface ServerHardware {
  readonly memoryBytes: number;
  readonly vcpu: number;
  /** The class's default max_connections. */
  readonly maxConnections: number;
}

interface ServerOptionProblem {
  readonly path: string;
  readonly message: string;
}

export interface RenderedServerOptions {
  /** name -> value as written, with names normalised. */
  readonly options: Readonly<Record<string, string>>;
  /** The [mariadbd] lines in the order the spec gives them, defaults last. */
  readonly lines: readonly string[];
  /** What cannot go to the file, by spec path. The backend refuses the variant when there is any. */
  readonly problems: readonly ServerOptionProblem[];
}

type ParameterValue = string | number | boolean;

/** The parts of a plan's variant the file is rendered from. */
export interface ServerVariant {
  readonly name: string;
  readonly clusterParameters: Readonly<Record<string, ParameterValue>>;
  readonly instanceParameters: Readonly<Record<string, ParameterValue>>;
}

/** Why `name` cannot be set in a self-managed server's file, or undefined. Validation shares it. */
export function serverOptionProblem(rawName: string, value: ParameterValue): string | undefined {
  const name = optionName(rawName);
  if (!/^[a-z0-9_.]+$/.test(name)) return `"${rawName}" is not a MariaDB option name (letters, digits, _ - and . only)`;
  if (AWS_ONLY_PREFIXES.some((p) => name.startsWith(p)))
    return (
      `${rawName} is an Aurora or RDS parameter; a self-managed MariaDB has no such variable: remove it ` +
      `(or set it on an Aurora or RDS variant)`
    );
  if (SERVER_MANAGED_OPTIONS.has(name))
    return (
      `${rawName} is set by client/server-setup.sh (ports, paths, server ids, binary log and replication ` +
      `roles): remove it from the self-managed variant`
    );
  if (FIXED_AT_INIT.has(name))
    return `${rawName} is fixed when the data directory is initialised, which uses MariaDB's default: remove it`;
  if (typeof value === 'string' && /[\n\r]/.test(value))
    return `the value of ${rawName} spans lines; an option file value is one line`;
  return undefined;
}

/**
 * The [mariadbd] option lines of a self-managed variant's server on `hardware`.
 * Formulas are evaluated with the instance's memory and vCPUs, as RDS evaluates them.
 */
export function renderServerOptions(
  variant: ServerVariant,
  hardware: ServerHardware,
  role: 'writer' | 'replica' = 'writer',
): RenderedServerOptions {
  const vpath = `variants[name=${variant.name}]`;
  const wanted = new Map<string, { raw: ParameterValue; path: string; original: string }>();
  for (const [k, raw] of Object.entries(variant.clusterParameters))
    wanted.set(optionName(k), { raw, path: `${vpath}.clusterParameters.${k}`, original: k });
  for (const [k, raw] of Object.entries(variant.instanceParameters))
    wanted.set(optionName(k), { raw, path: `${vpath}.instanceParameters.${k}`, original: k });
  if (!wanted.has('innodb_buffer_pool_size'))
    wanted.set('innodb_buffer_pool_size', {
      raw: '{DBInstanceClassMemory*3/4}',
      path: `${vpath}.instanceClass`,
      original: 'innodb_buffer_pool_size',
    });
  if (!wanted.has('max_connections'))
    wanted.set('max_connections', {
      raw: hardware.maxConnections,
      path: `${vpath}.instanceClass`,
      original: 'max_connections',
    });

  const options: Record<string, string> = {};
  const problems: ServerOptionProblem[] = [];
  for (const [name, { raw, path, original }] of wanted) {
    const problem = serverOptionProblem(original, raw);
    if (problem !== undefined) {
      problems.push({ path, message: problem });
      continue;
    }
    let value: string;
    if (typeof raw === 'boolean') value = raw ? 'ON' : 'OFF';
    else if (typeof raw === 'number') value = String(raw);
    else if (isFormula(raw)) {
      try {
        value = String(
          evaluateFormula(raw, {
            DBInstanceClassMemory: hardware.memoryBytes,
            DBInstanceVCPU: hardware.vcpu,
            TrueIfReplica: role === 'replica' ? 1 : 0,
            EndPointPort: undefined,
            AllocatedStorage: undefined,
          }),
        );
      } catch (e) {
        problems.push({
          path,
          message:
            `cannot evaluate the formula ${raw} ` +
            `for ${original}: ${e instanceof FormulaError ? e.message : String(e)}`,
        });
        continue;
      }
    } else value = raw.trim();
    options[name] = value;
  }
  return { options, lines: optionFileLines(options), problems };
}

/** The `--options-b64` argument of client/server-setup.sh. */
export function serverOptionsBase64(lines: readonly string[]): string {
  return Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8').toString('base64');
}
