/**
 * The database engines an experiment can run on (`engine.kind`, per spec and per variant), and what
 * aurora-bench knows about each, in one place: how the spec writes its version, the RDS engine name
 * and parameter group family it maps to, the sysbench driver that talks to it, which server stands
 * in for it locally, which features exist on it, and whether the AWS backend provisions it yet.
 *
 * Sources:
 * - RDS engine names (`Engine` of CreateDBCluster/CreateDBInstance): botocore
 *   data/rds/2014-10-31/service-2.json, CreateDBInstanceMessage.Engine: aurora-mysql,
 *   aurora-postgresql, mariadb, mysql, postgres (among others).
 * - Parameter group families (`DBParameterGroupFamily`): botocore CreateDBParameterGroupMessage /
 *   DescribeEngineDefaultParametersMessage: aurora-mysql8.0, aurora-postgresql14, mysql8.0,
 *   mariadb10.6, postgres14 ... (one per engine major version; `aws rds describe-db-engine-versions
 *   --query "DBEngineVersions[].DBParameterGroupFamily" --engine <engine>` lists them).
 * - Readers: Aurora clusters have up to 15 Aurora Replicas (Aurora User Guide, "Replication with
 *   Amazon Aurora"); an RDS for MySQL, MariaDB or PostgreSQL DB instance up to 15 read replicas
 *   (botocore CreateDBInstanceReadReplicaMessage.SourceDBInstanceIdentifier: "Each DB instance can
 *   have up to 15 read replicas, except for ... Db2 ... Oracle ... SQL Server").
 * - EngineVersion as RDS takes it: Aurora MySQL "8.0.mysql_aurora.3.04.0" (core/aurora/engine.ts);
 *   Aurora PostgreSQL "16.4", RDS for MySQL "8.0.39", RDS for MariaDB "10.11.9", RDS for PostgreSQL
 *   "16.4": the version as the spec writes it (DescribeDBEngineVersions lists them in that form;
 *   CreateDBInstanceMessage.EngineVersion: "aws rds describe-db-engine-versions --engine mariadb
 *   --query "DBEngineVersions[].EngineVersion"").
 * - Local write forwarding: Aurora MySQL 3.04 and higher (Aurora User Guide, "Using local write
 *   forwarding in an Amazon Aurora MySQL DB cluster"); Aurora PostgreSQL 16.4 and higher 16
 *   versions, 15.8 and higher 15 versions, 14.13 and higher 14 versions (Aurora User Guide, "Local
 *   write forwarding in Aurora PostgreSQL", aurora-postgresql-write-forwarding.md). botocore
 *   CreateDBClusterMessage.EnableLocalWriteForwarding: "Valid for: Aurora DB clusters only", so no
 *   RDS engine and no self-managed server has it.
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

/** The sysbench 1.0.20 database driver (`--db-driver`; `sysbench --help` lists mysql and pgsql). */
type SysbenchDriver = 'mysql' | 'pgsql';

/** The server this machine runs for an engine: MariaDB for the MySQL family, PostgreSQL for the PostgreSQL family. */
type LocalServerKind = 'mariadb' | 'postgresql';

export interface EngineRef {
  readonly kind: EngineKind;
  readonly version: string;
}

export interface EngineFacts {
  readonly kind: EngineKind;
  /** How a person names it: "Aurora PostgreSQL". */
  readonly label: string;
  readonly driver: SysbenchDriver;
  readonly localServer: LocalServerKind;
  /** RDS `Engine`; undefined for a server aurora-bench installs itself. */
  readonly rdsEngine?: 'aurora-mysql' | 'aurora-postgresql' | 'mysql' | 'mariadb' | 'postgres';
  /**
   * cluster: Aurora (cluster + instances on one volume); instance: RDS
   * DB instance + read replicas; ec2: a server on an EC2 instance.
   */
  readonly topology: 'cluster' | 'instance' | 'ec2';
  readonly maxReaders: number;
  /** The version as the spec writes it; `versionExample` is shown when it does not match. */
  readonly versionPattern: RegExp;
  readonly versionExample: string;
  /**
   * Whether the Aurora MySQL parameter catalogue (core/aurora/parameter-catalogue.ts) checks its parameters offline.
   */
  readonly parameterCatalogue: boolean;
  /** Whether the AWS backend (core/backends/aws) provisions it today. */
  readonly awsBackend: boolean;
  /**
   * The port RDS gives the engine when CreateDBCluster/CreateDBInstance names none (botocore rds
   * service-2.json CreateDBInstanceMessage.Port: "Default: 3306" for MySQL and MariaDB, "Default:
   * 5432" for PostgreSQL; CreateDBClusterMessage.Port: 3306 for Aurora MySQL, 5432 for Aurora
   * PostgreSQL). Used only when an answer carries no Endpoint.Port.
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
    // Parsed in full by parseAuroraVersion (core/backends/aws/engine.ts).
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
    // The server and its major version: what client/server-install.sh installs on the EC2 instance
    // (MariaDB 10.11, Debian 12's mariadb-server package).
    // MySQL and Percona Server have no install path yet, so they are refused here, not on the instance.
    versionPattern: /^mariadb-10\.11$/,
    versionExample: '"mariadb-10.11" (the server client/server-install.sh installs)',
    parameterCatalogue: false,
    awsBackend: true,
    defaultPort: 3306,
  },
};

/** "Aurora PostgreSQL 16.4", "self-managed mariadb-10.11". */
export function engineName(engine: EngineRef): string {
  return `${ENGINES[engine.kind].label} ${engine.version}`;
}

function majorMinor(version: string): [number, number] {
  const m = /^(?:[a-z]+-)?([0-9]+)\.([0-9]+)/.exec(version);
  return m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
}

/**
 * The parameter group family of an engine version (DBParameterGroupFamily); undefined for a
 * self-managed server (its parameters go to its own configuration file) or a version the pattern
 * refuses.
 */
export function parameterGroupFamily(engine: EngineRef): string | undefined {
  const facts = ENGINES[engine.kind];
  if (!facts.versionPattern.test(engine.version)) return undefined;
  const [major, minor] = majorMinor(engine.version);
  switch (engine.kind) {
    case 'aurora-mysql':
      // 3.x is MySQL 8.0 compatible, 2.x 5.7 (core/backends/aws/engine.ts).
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

/** Whether the engine version has local (in-cluster) write forwarding, and why not when it does not. */
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
      // 16.4+, 15.8+, 14.13+; a later major than 16 is taken to keep it.
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
 * The RDS EngineVersion of an engine the AWS backend provisions: Aurora MySQL in RDS's long form
 * (parseAuroraVersion), every other RDS engine as the spec writes it (see the sources above).
 */
export function awsEngineVersion(engine: EngineRef): string {
  return engine.kind === 'aurora-mysql' ? parseAuroraVersion(engine.version).engineVersion : engine.version;
}

/**
 * The least gp3 storage RDS takes for MySQL, MariaDB and PostgreSQL, and
 * the most (CreateDBInstanceMessage.AllocatedStorage: "from 20 to 65536").
 */
const MIN_STORAGE_GIB = 20;
const MAX_STORAGE_GIB = 65536;
/**
 * Bytes a stock sysbench row takes on disk: the price table's 250 bytes of row data
 * (prices/aws-prices.json assumptions.bytesPerRow), doubled for the pages' free space and the
 * secondary index on k (sbtest tables have one, sysbench's oltp_common.lua create_table).
 */
const DISK_BYTES_PER_ROW = 500;

/** Bytes a data set takes on one server's disk (DISK_BYTES_PER_ROW a row). */
export function dataDiskBytes(data: { readonly tables: number; readonly tableSize: number }): number {
  return data.tables * data.tableSize * DISK_BYTES_PER_ROW;
}

/**
 * GiB of gp3 storage for an RDS cell's source instance (core/backends/aws/db-instances.ts; the plan's cost prices it):
 * its data with half as much again for binary logs or WAL and temporary files, at least RDS's minimum; storage
 * autoscaling may grow it to twice that (MaxAllocatedStorage: "The upper limit in gibibytes (GiB) to which Amazon RDS
 * can automatically scale the storage of the DB instance"). A replica gets its source's storage.
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
 * The Debian 12 AMI's root volume (lib/clients.ts DEBIAN_AMI_PARAMETERS; Debian builds its EC2
 * image as a 2 GiB disk, debian-cloud-images cli/build.py) holds the OS and the server packages; a
 * self-managed server's datadir lives on the same volume, so 8 GiB is added to the data's share. EBS gp3: "1 - 65,536
 * GiB", and a volume from a snapshot must be "equal to or larger than the
 * snapshot size" (botocore ec2 service-2.json EbsBlockDevice.VolumeSize).
 */
const SERVER_OS_GIB = 8;
const SERVER_MIN_VOLUME_GIB = 20;
const GP3_MAX_GIB = 65536;

/**
 * GiB of the gp3 root volume of one self-managed server (core/backends/aws/self-managed-servers.ts
 * sets it at launch; the plan's cost prices it): the OS, then the data with half as much again for
 * binary and relay logs and temporary files, at least 20 GiB. Each replica holds a full copy.
 */
export function serverVolumeGib(data: { readonly tables: number; readonly tableSize: number }): number {
  const dataGib = (data.tables * data.tableSize * DISK_BYTES_PER_ROW) / 2 ** 30;
  return Math.min(GP3_MAX_GIB, Math.max(SERVER_MIN_VOLUME_GIB, SERVER_OS_GIB + Math.ceil(dataGib * 1.5)));
}

/**
 * The most data one of an engine's servers can hold on AWS, in bytes. An Aurora cluster volume
 * grows "up to a maximum of 128 tebibytes (TiB) or 64 TiB", by engine version (Aurora User Guide,
 * "Managing performance and scaling for Aurora DB clusters", Storage scaling): 128 TiB bounds every
 * version. An RDS instance and a self-managed server's gp3 volume hold at most 65,536 GiB
 * (MAX_STORAGE_GIB, GP3_MAX_GIB), of which the data gets two thirds: the rest is kept for logs.
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
 * The parameters of an RDS DB instance's one DB parameter group: the
 * variant's cluster parameters, then its instance parameters on top.
 */
