/**
 * A spec's Serverless v2 capacity ranges and storage configurations against each variant's engine version.
 * Every problem comes by JSON path with what to change, so RDS never refuses a cluster half-way through a run.
 */
import {
  capacityLineVersions,
  GIB_PER_ACU,
  ioOptimizedSupport,
  isServerless,
  MAX_ACU_OLDER,
  MIN_ACU_WITHOUT_PAUSE,
  nextMaxLine,
  serverlessCapacityLimits,
  serverlessV2Support,
  zeroMinimumSupport,
} from '../aurora/aurora-configurations';
import { ENGINES, engineName } from '../aurora/engines';
import type { EngineNote, EngineSpecProblem } from './engine-checks';
import { variantEngine } from './engine-checks';
import type { Spec } from './schema';

/** Where a variant's engine version is written. */
function versionPath(spec: Spec, vi: number): string {
  return spec.variants[vi]!.engine !== undefined ? `variants[${vi}].engine.version` : 'engine.version';
}

/** Every capacity range and storage configuration that its engine versions do not take. */
export function auroraConfigurationProblems(spec: Spec): EngineSpecProblem[] {
  const problems: EngineSpecProblem[] = [];
  spec.variants.forEach((v, vi) => {
    const engine = variantEngine(spec, v);
    const at = (field: string): string => `variants[${vi}].${field}`;
    if (isServerless(v.instanceClass)) {
      const support = serverlessV2Support(engine);
      if (!support.supported) {
        problems.push({
          path: at('instanceClass'),
          message:
            `db.serverless: ${support.why} ` +
            `(${versionPath(spec, vi)}): ` +
            (ENGINES[engine.kind].topology === 'cluster' ? 'raise the engine version, or ' : '') +
            `choose ` +
            `a provisioned class such as db.r6g.large`,
        });
      }
      if (v.maxAcu === undefined) {
        problems.push({
          path: at('maxAcu'),
          message:
            `db.serverless needs a capacity range: add "maxAcu" (the most ACUs each instance scales to, ` +
            `1 to 256 in 0.5 steps; one ACU is about ${GIB_PER_ACU} GiB of memory), e.g. "maxAcu": 16`,
        });
      }
      const min = v.minAcu ?? MIN_ACU_WITHOUT_PAUSE;
      if (v.maxAcu !== undefined && min > v.maxAcu) {
        problems.push({
          path: at('minAcu'),
          message: `minAcu ${min} is above maxAcu ${v.maxAcu}: the range must have minAcu <= maxAcu`,
        });
      }
      const limits = serverlessCapacityLimits(engine);
      if (v.minAcu !== undefined && limits !== undefined && v.minAcu < limits.min.acu) {
        // The line in force sets the least minimum. 0 needs auto-pause.
        const zero = zeroMinimumSupport(engine);
        problems.push({
          path: at('minAcu'),
          message:
            (v.minAcu === 0 && !zero.supported
              ? zero.why
              : `minAcu ${v.minAcu} is below ${limits.min.acu}, the least ${engineName(engine)} takes`) +
            ` ` +
            `(${versionPath(spec, vi)}): use minAcu ${limits.min.acu} or more, or raise the engine version`,
        });
      }
    } else {
      for (const field of ['minAcu', 'maxAcu', 'readerScaling'] as const) {
        if (v[field] !== undefined) {
          problems.push({
            path: at(field),
            message:
              `${field} is a capacity setting of Aurora Serverless v2, but instanceClass ` +
              `is ${v.instanceClass}: remove ${field}, or set instanceClass to "db.serverless"`,
          });
        }
      }
    }
    if (v.storage !== undefined) {
      const support = ioOptimizedSupport(engine);
      if (ENGINES[engine.kind].topology !== 'cluster') {
        problems.push({
          path: at('storage'),
          message:
            `${support.why} (${engineName(engine)} bills its ` +
            `own ${engine.kind === 'self-managed' ? 'EBS volumes' : 'gp3 storage'}, with no per-request I/O ` +
            `charge): remove storage`,
        });
      } else if (v.storage === 'io-optimized' && !support.supported) {
        problems.push({
          path: at('storage'),
          message: `${support.why} (${versionPath(spec, vi)}): raise the engine version, or use "standard"`,
        });
      }
    }
  });
  return problems;
}

/** What the plan says about the variants' capacity ranges and storage, per backend. */
export function auroraConfigurationNotes(spec: Spec, backend: 'local' | 'aws'): EngineNote[] {
  const notes: EngineNote[] = [];
  spec.variants.forEach((v, vi) => {
    if (isServerless(v.instanceClass) && v.maxAcu !== undefined) {
      const range = `${v.minAcu ?? MIN_ACU_WITHOUT_PAUSE}-${v.maxAcu} ACUs`;
      if (backend === 'local') {
        notes.push({
          level: 'warning',
          path: `variants[${vi}].instanceClass`,
          message:
            `variant "${v.name}" is Aurora Serverless v2 (${range}): there is no Aurora capacity ` +
            `scaling locally, so each server stands in at its largest size (maxAcu ${v.maxAcu}, ` +
            `about ${v.maxAcu * GIB_PER_ACU} GiB, sized as the r class of that memory); scaling lag and ` +
            `ACU-hours are measured only on AWS`,
        });
      }
      const engine = variantEngine(spec, v);
      const limits = serverlessCapacityLimits(engine);
      if (limits !== undefined && v.maxAcu > limits.max.acu) {
        // No stored source confirms which versions scale past 128 ACUs.
        // So it is a warning here, and the AWS preflight refuses from what RDS says for the version.
        const next = nextMaxLine(engine);
        notes.push({
          level: 'warning',
          path: `variants[${vi}].maxAcu`,
          message:
            `maxAcu ${v.maxAcu} is above ${limits.max.acu}, the most ${engineName(engine)} is known to ` +
            `take` +
            (next
              ? `; ${capacityLineVersions(next)} scale to ${next.maxAcu} ACUs on a recent platform version` +
                (next.confirmed
                  ? ''
                  : ' (an unconfirmed version line: no stored source confirms it, ' +
                    'core/aurora/aurora-configurations.ts SERVERLESS_V2_CAPACITY)')
              : '') +
            `: ` +
            `use maxAcu ${limits.max.acu} or less, or raise ${versionPath(spec, vi)}; the AWS preflight asks RDS ` +
            `(DescribeDBEngineVersions ServerlessV2FeaturesSupport.MaxCapacity) and refuses a range the version ` +
            `does not take`,
        });
      } else if (backend === 'aws' && v.maxAcu > MAX_ACU_OLDER) {
        notes.push({
          level: 'warning',
          path: `variants[${vi}].maxAcu`,
          message:
            `maxAcu ${v.maxAcu} is above ${MAX_ACU_OLDER}: the cluster must also be on a recent ` +
            `platform version to scale past ${MAX_ACU_OLDER} ACUs (Aurora User Guide, "Upgrading your Aurora ` +
            `Serverless v2 DB cluster to allow scaling to 256 ACUs"); RDS refuses the range otherwise`,
        });
      }
    }
    if (v.storage === 'io-optimized' && backend === 'local') {
      notes.push({
        level: 'info',
        path: `variants[${vi}].storage`,
        message:
          `variant "${v.name}": Aurora I/O-Optimized is a billing configuration of Aurora's storage ` +
          `volume; locally the servers use this machine's disk, so only its cost (in plan and report) differs`,
      });
    }
  });
  return notes;
}
