/**
 * The database engines an experiment can run on, and what aurora-bench knows about each.
 *
 * Sources.
 * RDS engine names come from botocore data/rds/2014-10-31/service-2.json, CreateDBInstanceMessage.Engine.
 * Parameter group families come from botocore CreateDBParameterGroupMessage. There is one per major version.
 * `aws rds describe-db-engine-versions` lists them.
 * Aurora clusters have up to 15 Aurora Replicas. See Aurora User Guide, "Replication with Amazon Aurora".
 * An RDS DB instance has up to 15 read replicas. See botocore CreateDBInstanceReadReplicaMessage.
 * Aurora MySQL's EngineVersion takes a long form, built in core/aurora/engine.ts.
 * Other engines take the version as the spec writes it. DescribeDBEngineVersions lists them so.
 * Local write forwarding needs Aurora MySQL 3.04 or later.
 * See Aurora User Guide, "Using local write forwarding in an Amazon Aurora MySQL DB cluster".
 * Aurora PostgreSQL has it from 16.4, 15.8 and 14.13. See Aurora User Guide, "Local write forwarding in Aurora
 * PostgreSQL".
 * botocore says EnableLocalWriteForwarding is valid for Aurora DB clusters only.
 * So no RDS engine and no self-managed server has it.
 */

import { parseAuroraVersion } from './engine';

export const ENGINE_KINDS = [
  'aurora-mysql',
  'aurora-postgresql',
  'rds-mysql',
  'rds-mariadb',
  'rds-postgresql',
  'self-managed',
] as const;
export type EngineKind = (typeof ENGINE_KINDS)[number];

/** The sysbench 1.0.20 database driver. `sysbench --help` lists mysql and pgsql. */
type SysbenchDriver = 'mysql' | 'pgsql';

/** The server this machine runs for an engine. MariaDB stands in for MySQL, PostgreSQL for PostgreSQL. */
type LocalServerKind = 'mariadb' | 'postgresql';

export interface EngineRef {
  readonly kind: EngineKind;
  readonly version: string;
}

export interface EngineFacts {
  readonly kind: EngineKind;
  /** How a person names it, e.g. "Aurora PostgreSQL". */
  readonly label: string;
  readonly driver: SysbenchDriver;
  readonly localServer: LocalServerKind;
  /** RDS `Engine`. Undefined for a server aurora-bench installs itself. */
  readonly rdsEngine?: 'aurora-mysql' | 'aurora-postgresql' | 'mysql' | 'mariadb' | 'postgres';
  /** cluster is Aurora, instance is an RDS DB instance with read replicas, ec2 is a server on EC2. */
  readonly topology: 'cluster' | 'instance' | 'ec2';
  readonly maxReaders: number;
  /** The version as the spec writes it. `versionExample` is shown when it does not match. */
  readonly versionPattern: RegExp;
  readonly versionExample: string;
  /** Whether the Aurora MySQL parameter catalogue checks its parameters offline. */
  readonly parameterCatalogue: boolean;
  /** Whether the AWS backend provisions it today. */
  readonly awsBackend: boolean;
  /**
   * The port RDS gives the engine when the create call names none.
   * botocore rds service-2.json documents 3306 for MySQL and MariaDB and 5432 for PostgreSQL.
   * Used only when an answer carries no Endpoint.Port.
   */
  readonly defaultPort: 3306 | 5432;
}

const MAX_READERS = 15;

export const ENGINES: Readonly<Record<EngineKind, EngineFacts>> = {
  'aurora-mysql': {
    kind: 'aurora-mysql',
    label: 'Aurora MySQL',
    driver: 'mysql',
    localServer: 'mariadb',
    rdsEngine: 'aurora-mysql',
    topology: 'cluster',
    maxReaders: MAX_READERS,
    // parseAuroraVersion parses it in full.
    versionPattern: /^[0-9]+\.[0-9]+(\.[0-9]+)?$|^[0-9]+\.[0-9]+\.mysql_aurora\.[0-9.]+$/,
    versionExample: '"3.04.0" or "8.0.mysql_aurora.3.04.0"',
    parameterCatalogue: true,
    awsBackend: true,
    defaultPort: 3306,
  },
  'aurora-postgresql': {
    kind: 'aurora-postgresql',
    label: 'Aurora PostgreSQL',
    driver: 'pgsql',
    localServer: 'postgresql',
    rdsEngine: 'aurora-postgresql',
    topology: 'cluster',
    maxReaders: MAX_READERS,
    versionPattern: /^1[0-9]\.[0-9]+$/,
    versionExample: '"16.4" or "15.8"',
    parameterCatalogue: false,
    awsBackend: true,
    defaultPort: 5432,
  },
  'rds-mysql': {
    kind: 'rds-mysql',
    label: 'RDS for MySQL',
    driver: 'mysql',
    localServer: 'mariadb',
    rdsEngine: 'mysql',
    topology: 'instance',
    maxReaders: MAX_READERS,
    versionPattern: /^[58]\.[0-9]+\.[0-9]+$/,
    versionExample: '"8.0.39" or "8.4.3"',
    parameterCatalogue: false,
    awsBackend: true,
    defaultPort: 3306,
  },
  'rds-mariadb': {
    kind: 'rds-mariadb',
    label: 'RDS for MariaDB',
    driver: 'mysql',
    localServer: 'mariadb',
    rdsEngine: 'mariadb',
    topology: 'instance',
    maxReaders: MAX_READERS,
    versionPattern: /^1[01]\.[0-9]+\.[0-9]+$/,
    versionExample: '"10.11.9" or "11.4.3"',
    parameterCatalogue: false,
    awsBackend: true,
    defaultPort: 3306,
  },
  'rds-postgresql': {
    kind: 'rds-postgresql',
    label: 'RDS for PostgreSQL',
    driver: 'pgsql',
    localServer: 'postgresql',
    rdsEngine: 'postgres',
    topology: 'instance',
    maxReaders: MAX_READERS,
    versionPattern: /^1[0-9]\.[0-9]+$/,
    versionExample: '"16.4" or "17.2"',
    parameterCatalogue: false,
    awsBackend: true,
    defaultPort: 5432,
  },
  'self-managed': {
    kind: 'self-managed',
    label: 'self-managed',
    driver: 'mysql',
    localServer: 'mariadb',
    topology: 'ec2',
    maxReaders: MAX_READERS,
    // The server and major version client/server-install.sh installs, Debian 12's MariaDB 10.11.
    // MySQL and Percona Server have no install path yet, so they are refused here, not on the instance.
    versionPattern: /^mariadb-10\.11$/,
    versionExample: '"mariadb-10.11" (the server client/server-install.sh installs)',
    parameterCatalogue: false,
    awsBackend: true,
    defaultPort: 3306,
  },
};

/** e.g. "Aurora PostgreSQL 16.4" or "self-managed mariadb-10.11". */
export function engineName(engine: EngineRef): string {
  return `${ENGINES[engine.kind].label} ${engine.version}`;
}

function majorMinor(version: string): [number, number] {
  const m = /^(?:[a-z]+-)?([0-9]+)\.([0-9]+)/.exec(version);
  return m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
}

/**
 * The parameter group family of an engine version.
 * Undefined for a self-managed server, which uses its own configuration file, or for a refused version.
 */
export function parameterGroupFamily(engine: EngineRef): string | undefined {
  const facts = ENGINES[engine.kind];
  if (!facts.versionPattern.test(engine.version)) return undefined;
  const [major, minor] = majorMinor(engine.version);
  switch (engine.kind) {
    case 'aurora-mysql':
      // 3.x is MySQL 8.0 compatible, 2.x is 5.7.
      if (/mysql_aurora/.test(engine.version)) return `aurora-mysql${engine.version.split('.mysql_aurora')[0]!}`;
      return major === 3 ? 'aurora-mysql8.0' : major === 2 ? 'aurora-mysql5.7' : undefined;
    case 'aurora-postgresql':
      return `aurora-postgresql${major}`;
    case 'rds-mysql':
      return `mysql${major}.${minor}`;
    case 'rds-mariadb':
      return `mariadb${major}.${minor}`;
    case 'rds-postgresql':
      return `postgres${major}`;
    case 'self-managed':
      return undefined;
  }
}

/** Whether the engine version has local write forwarding, and why not when it does not. */
export function localWriteForwarding(engine: EngineRef): { readonly supported: boolean; readonly why: string } {
  const [major, minor] = majorMinor(engine.version);
  switch (engine.kind) {
    case 'aurora-mysql': {
      const aurora = /mysql_aurora\.([0-9]+)\.([0-9]+)/.exec(engine.version);
      const [m, n] = aurora ? [Number(aurora[1]), Number(aurora[2])] : [major, minor];
      const supported = m > 3 || (m === 3 && n >= 4);
      return {
        supported,
        why: supported
          ? ''
          : `local write forwarding needs Aurora MySQL 3.04 or higher, but the version is ${engine.version}`,
      };
    }
    case 'aurora-postgresql': {
      // 16.4+, 15.8+, 14.13+. A later major than 16 is taken to keep it.
      const minimum: Record<number, number> = { 14: 13, 15: 8, 16: 4 };
      const least = minimum[major];
      const supported = major > 16 || (least !== undefined && minor >= least);
      return {
        supported,
        why: supported
          ? ''
          : `local write forwarding in Aurora PostgreSQL needs 16.4 or a later 16, 15.8 or a later 15, or ` +
            `14.13 or a later 14, but the version is ${engine.version}`,
      };
    }
    default:
      return {
        supported: false,
        why: `${ENGINES[engine.kind].label} has no local write forwarding (RDS offers it for Aurora DB clusters only)`,
      };
  }
}

/**
 * The RDS EngineVersion of an engine the AWS backend provisions.
 * Aurora MySQL takes RDS's long form. Every other engine takes the version as the spec writes it.
 */
export function awsEngineVersion(engine: EngineRef): string {
  return engine.kind === 'aurora-mysql' ? parseAuroraVersion(engine.version).engineVersion : engine.version;
}

/**
 * The least and the most gp3 storage RDS takes for MySQL, MariaDB and PostgreSQL.
 * See botocore CreateDBInstanceMessage.AllocatedStorage.
 */
const MIN_STORAGE_GIB = 20;
const MAX_STORAGE_GIB = 65536;
/**
 * Bytes a stock sysbench row takes on disk.
 * The price table's 250 bytes of row data are doubled for free page space and the secondary index on k.
 * sysbench's oltp_common.lua creates that index.
 */
const DISK_BYTES_PER_ROW = 500;

/** Bytes a data set takes on one server's disk. */
export function dataDiskBytes(data: { readonly tables: number; readonly tableSize: number }): number {
  return data.tables * data.tableSize * DISK_BYTES_PER_ROW;
}

/**
 * GiB of gp3 storage for an RDS cell's source instance. The plan's cost prices it.
 * The data gets half as much again for binary logs or WAL and temporary files, and at least RDS's minimum.
 * Storage autoscaling may grow it to twice that. See botocore, MaxAllocatedStorage.
 * A replica gets its source's storage.
 */
export function rdsAllocatedStorageGib(data: { readonly tables: number; readonly tableSize: number }): {
  allocated: number;
  max: number;
} {
  const dataGib = (data.tables * data.tableSize * DISK_BYTES_PER_ROW) / 2 ** 30;
  const allocated = Math.min(MAX_STORAGE_GIB, Math.max(MIN_STORAGE_GIB, Math.ceil(dataGib * 1.5)));
  return { allocated, max: Math.min(MAX_STORAGE_GIB, allocated * 2) };
}

/**
 * The Debian 12 AMI's root volume holds the OS and the server packages.
 * Debian builds its EC2 image as a 2 GiB disk, per debian-cloud-images cli/build.py.
 * A self-managed server's datadir lives on the same volume, so 8 GiB is added to the data's share.
 * botocore's EbsBlockDevice.VolumeSize gives gp3's range and says a volume from a snapshot cannot be smaller.
 */
const SERVER_OS_GIB = 8;
const SERVER_MIN_VOLUME_GIB = 20;
const GP3_MAX_GIB = 65536;

/**
 * GiB of the gp3 root volume of one self-managed server. The plan's cost prices it.
 * The OS comes first, then the data with half as much again for logs and temporary files.
 * It is at least 20 GiB. Each replica holds a full copy.
 */
export function serverVolumeGib(data: { readonly tables: number; readonly tableSize: number }): number {
  const dataGib = (data.tables * data.tableSize * DISK_BYTES_PER_ROW) / 2 ** 30;
  return Math.min(GP3_MAX_GIB, Math.max(SERVER_MIN_VOLUME_GIB, SERVER_OS_GIB + Math.ceil(dataGib * 1.5)));
}

/**
 * The most data one of an engine's servers can hold on AWS, in bytes.
 * An Aurora cluster volume grows to 128 TiB or 64 TiB by version, so 128 TiB bounds every version.
 * See Aurora User Guide, "Managing performance and scaling for Aurora DB clusters".
 * An RDS or self-managed gp3 volume holds at most 65,536 GiB.
 * The data gets two thirds of it, and the rest is kept for logs.
 */
export function awsDataLimitBytes(kind: EngineKind): number {
  switch (ENGINES[kind].topology) {
    case 'cluster':
      return 128 * 2 ** 40;
    case 'instance':
      return (MAX_STORAGE_GIB * 2 ** 30) / 1.5;
    case 'ec2':
      return ((GP3_MAX_GIB - SERVER_OS_GIB) * 2 ** 30) / 1.5;
  }
}

/**
 * The parameters of an RDS DB instance's one parameter group.
 * The variant's instance parameters go on top of its cluster parameters.
 */
