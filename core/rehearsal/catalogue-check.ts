import type { ParameterCheck } from './rds-emulation';
import { parameterProblems } from '../aurora/parameter-catalogue';
import { engineOfFamily, rdsParameterProblems } from '../aurora/rds-parameters';

/**
 * RDS's check of a parameter group change, from the Aurora parameter catalogue. RDS checks a group
 * against its family (aurora-mysql8.0: Aurora MySQL 3, aurora-mysql5.7: 2), before any cluster and
 * so any engine version uses it: the family is checked as its major version's newest release, so a
 * parameter only later minor versions have is not refused here (the plan checks the spec's version).
 */
export const catalogueCheck: ParameterCheck = (family, level, params) => {
  // The other engines' families: the rules their documentation states by name (core/aurora/rds-parameters.ts).
  const engine = engineOfFamily(family);
  if (engine !== undefined && engine !== 'aurora-mysql') return rdsParameterProblems(engine, params);
  const major = family === 'aurora-mysql8.0' ? 3 : family === 'aurora-mysql5.7' ? 2 : undefined;
  if (major === undefined)
    return [
      {
        name: 'DBParameterGroupFamily',
        reason: `family ${family} is not a parameter group family of an engine aurora-bench provisions`,
      },
    ];
  return parameterProblems(`${major}.99.99`, level, params);
};
