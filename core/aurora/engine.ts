/**
 * Aurora MySQL engine versions as the spec writes them and as RDS names them, and what each supports.
 * 3.x is MySQL 8.0 compatible and 2.x is 5.7. See the Aurora MySQL release notes.
 * Local write forwarding requires 3.04 or higher.
 * See Aurora User Guide, "Using local write forwarding in an Amazon Aurora MySQL DB cluster".
 */

import { AuroraBenchError } from '../errors';
export interface AuroraVersion {
  /** RDS EngineVersion, e.g. "8.0.mysql_aurora.3.04.0". */
  readonly engineVersion: string;
  /** Aurora's own version, e.g. [3, 4, 0]. */
  readonly aurora: readonly [number, number, number];
  /** DBParameterGroupFamily for creating parameter groups. */
  readonly family: 'aurora-mysql8.0' | 'aurora-mysql5.7';
}

export class EngineVersionError extends AuroraBenchError {
  override readonly name = 'EngineVersionError';
}

export function parseAuroraVersion(specVersion: string): AuroraVersion {
  const full = /^([0-9]+\.[0-9]+)\.mysql_aurora\.([0-9]+)\.([0-9]+)(?:\.([0-9]+))?$/.exec(specVersion);
  const short = /^([0-9]+)\.([0-9]+)(?:\.([0-9]+))?$/.exec(specVersion);
  let aurora: [number, number, number];
  let mysql: string;
  if (full) {
    mysql = full[1]!;
    aurora = [Number(full[2]), Number(full[3]), Number(full[4] ?? 0)];
  } else if (short) {
    aurora = [Number(short[1]), Number(short[2]), Number(short[3] ?? 0)];
    mysql = aurora[0] === 3 ? '8.0' : aurora[0] === 2 ? '5.7' : '';
  } else {
    throw new EngineVersionError(
      `"${specVersion}" is not an Aurora MySQL version (expected e.g. "3.04.0" or "8.0.mysql_aurora.3.04.0")`,
    );
  }
  const [major, minor, patch] = aurora;
  if (major === 3 && mysql === '8.0') {
    return {
      engineVersion: `8.0.mysql_aurora.${major}.${String(minor).padStart(2, '0')}.${patch}`,
      aurora,
      family: 'aurora-mysql8.0',
    };
  }
  if (major === 2 && mysql === '5.7') {
    return {
      engineVersion: `5.7.mysql_aurora.${major}.${String(minor).padStart(2, '0')}.${patch}`,
      aurora,
      family: 'aurora-mysql5.7',
    };
  }
  throw new EngineVersionError(
    `Aurora MySQL "${specVersion}" is not supported: use 2.x (MySQL 5.7) or 3.x (MySQL 8.0)`,
  );
}

export function supportsLocalWriteForwarding(v: AuroraVersion): boolean {
  const [major, minor] = v.aurora;
  return major > 3 || (major === 3 && minor >= 4);
}
