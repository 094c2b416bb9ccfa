import type { ParameterCheck } from './rds-emulation';
import { parameterProblems } from '../aurora/parameter-catalogue';
import { engineOfFamily, rdsParameterProblems } from '../aurora/rds-parameters';

/**
 * RDS's check of a parameter group change, from the Aurora parameter catalogue.
 * RDS checks a group against its family before any cluster, and so any engine version, uses it.
 * So the family is checked as its major version's newest release.
 * The plan checks the spec's own version.
 */
export const catalogueCheck: ParameterCheck = (family, level, params) => {
  // Other engines' families get the rules their documentation states by name.
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
