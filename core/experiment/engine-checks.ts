/**
 * A spec's engines against the engine facts of core/aurora/engines.ts.
 * Validation refuses what an engine cannot do. The plan notes the rest.
 */
import type { Spec, Variant } from './schema';
import { ENGINES, engineName, localWriteForwarding, parameterGroupFamily, type EngineRef } from '../aurora/engines';
import { rdsParameterProblem } from '../aurora/rds-parameters';
import { serverOptionProblem } from '../aurora/server-config';

export interface EngineSpecProblem {
  readonly path: string;
  readonly message: string;
}

/** A plan note. Planning sits above the spec, so the shape is repeated here. */
export interface EngineNote extends EngineSpecProblem {
  readonly level: 'info' | 'warning' | 'refused';
}

export function variantEngine(spec: Spec, variant: Variant): EngineRef {
  const e = variant.engine ?? spec.engine;
  return { kind: e.kind, version: e.version };
}

/** Where a variant's engine is written, its own or the spec's. */
function enginePath(variant: Variant, vi: number): string {
  return variant.engine !== undefined ? `variants[${vi}].engine` : 'engine';
}

/** What no engine of the spec can do as written, by JSON path. */
export function engineProblems(spec: Spec): EngineSpecProblem[] {
  const problems: EngineSpecProblem[] = [];
  spec.variants.forEach((v, vi) => {
    const engine = variantEngine(spec, v);
    const facts = ENGINES[engine.kind];
    if (v.readers > facts.maxReaders) {
      problems.push({
        path: `variants[${vi}].readers`,
        message: `${facts.label} has at most ${facts.maxReaders} readers, got ${v.readers}`,
      });
    }
    const wf = v.writeForwarding;
    if (wf?.enabled === true && engine.kind !== 'aurora-mysql') {
      // Aurora MySQL's version rule is checked with its version parser.
      const support = localWriteForwarding(engine);
      if (!support.supported) {
        problems.push({
          path: `variants[${vi}].writeForwarding.enabled`,
          message:
            `${support.why} ` +
            `(${enginePath(v, vi)}): ${engine.kind === 'aurora-postgresql' ? 'raise the version, or ' : ''}remove ` +
            `writeForwarding`,
        });
      }
    }
    if (wf?.enabled === true && engine.kind === 'aurora-postgresql') {
      // The block's settings stand for Aurora MySQL's aurora_fwd_writer_* cluster parameters.
      // Aurora PostgreSQL names its own apg_write_forward.*.
      // See Aurora User Guide, "Working with local write forwarding for Aurora PostgreSQL".
      for (const field of ['maxConnectionsPct', 'idleTimeoutS'] as const) {
        if (wf[field] !== undefined) {
          problems.push({
            path: `variants[${vi}].writeForwarding.${field}`,
            message:
              `${field} sets an Aurora MySQL parameter (aurora_fwd_writer_*); for Aurora PostgreSQL set ` +
              `its apg_write_forward.* cluster parameters in clusterParameters instead`,
          });
        }
      }
    }
    if (engine.kind !== 'aurora-mysql') {
      // The documented rules of the engine's parameter groups.
      // A self-managed server gets its own configuration file's rules.
      const template = v.parameterTemplate !== undefined ? spec.parameterTemplates[v.parameterTemplate] : undefined;
      for (const level of ['clusterParameters', 'instanceParameters'] as const) {
        const sources: [string, Readonly<Record<string, string | number | boolean>>][] = [
          ...(template
            ? [
                [`parameterTemplates.${v.parameterTemplate}.${level}`, template[level]] as [
                  string,
                  Readonly<Record<string, string | number | boolean>>,
                ],
              ]
            : []),
          [`variants[${vi}].${level}`, v[level]],
        ];
        for (const [at, params] of sources) {
          for (const [name, value] of Object.entries(params)) {
            const reason =
              engine.kind === 'self-managed'
                ? serverOptionProblem(name, value)
                : rdsParameterProblem(
                    engine.kind,
                    name,
                    typeof value === 'boolean' ? (value ? '1' : '0') : String(value),
                  );
            if (reason !== undefined) problems.push({ path: `${at}.${name}`, message: `${facts.label}: ${reason}` });
          }
        }
      }
    }
    if (Object.keys(v.localOnlyParameters ?? {}).length > 0 && facts.localServer === 'postgresql') {
      problems.push({
        path: `variants[${vi}].localOnlyParameters`,
        message:
          `localOnlyParameters are MariaDB server variables for a local what-if; ${facts.label} runs ` +
          `locally on PostgreSQL: put PostgreSQL settings in instanceParameters`,
      });
    }
  });
  return problems;
}

/**
 * Plan notes on the engines.
 * They name each variant's engine and family, and parameters no offline catalogue checks.
 * Locally they also say which server stands in, and what only AWS shows.
 */
export function engineNotes(spec: Spec, backend: 'local' | 'aws'): EngineNote[] {
  const notes: EngineNote[] = [];
  const seen = new Set<string>();
  spec.variants.forEach((v, vi) => {
    const engine = variantEngine(spec, v);
    const facts = ENGINES[engine.kind];
    const path = enginePath(v, vi);
    const key = `${path}\u0000${engine.kind}\u0000${engine.version}`;
    const hasParameters =
      Object.keys(v.clusterParameters).length + Object.keys(v.instanceParameters).length > 0 ||
      v.parameterTemplate !== undefined;
    if (!facts.parameterCatalogue && hasParameters) {
      const onRds =
        `, on AWS RDS checks them against the ` +
        (parameterGroupFamily(engine) ?? facts.label) +
        ` parameter group family`;
      notes.push({
        level: 'warning',
        path: `variants[${vi}]`,
        message: `${engineName(engine)}: aurora-bench has no full parameter catalogue for ${facts.label}, so ${
          facts.topology === 'ec2'
            ? ''
            : 'beyond the rules the AWS documentation states by name (core/aurora/rds-parameters.ts) '
        }its parameters are not checked offline; ${
          facts.localServer === 'postgresql'
            ? 'locally PostgreSQL checks each against pg_settings'
            : "locally MariaDB's system variables check them"
        }${facts.topology === 'ec2' ? ', on AWS they go to the server configuration file' : onRds}`,
      });
    }
    // Every earlier plan ran Aurora MySQL.
    // The cell's notes name its stand-in, and the AWS preflight names its family.
    if (seen.has(key) || engine.kind === 'aurora-mysql') return;
    seen.add(key);
    if (backend === 'local') {
      // Replicas only where a variant of this engine has readers. A note must not name servers that never ran.
      const replicas = spec.variants.some((w, wi) => enginePath(w, wi) === path && w.readers > 0);
      const server =
        facts.localServer === 'postgresql'
          ? `PostgreSQL (a primary${replicas ? ' and streaming replicas' : ', no replicas'})`
          : `MariaDB (a writer${replicas ? ' and GTID replicas' : ', no replicas'})`;
      const awsOnly =
        facts.topology === 'cluster'
          ? `Aurora's shared storage volume, its replica lag and storage I/O, Aurora-only ` +
            `parameters${localWriteForwarding(engine).supported ? ' and local write forwarding' : ''}`
          : facts.topology === 'instance'
            ? `RDS's EBS storage (gp3 IOPS and throughput), its read replicas' lag over the network, and ` +
              `RDS-only parameters`
            : `the EC2 instance's own disks and network`;
      notes.push({
        level: 'info',
        path,
        message:
          `${engineName(engine)} runs locally on ${server} through sysbench's ${facts.driver} driver; ` +
          `only AWS shows ${awsOnly}`,
      });
    } else if (facts.rdsEngine !== undefined) {
      notes.push({
        level: 'info',
        path,
        message:
          `${engineName(engine)}: RDS engine ${facts.rdsEngine}, parameter group ` +
          `family ${parameterGroupFamily(engine) ?? '(unknown)'}`,
      });
    }
  });
  return notes;
}

/**
 * What the AWS backend cannot provision.
 * Today it provisions every engine.
 * An Aurora MySQL variant must keep the spec's version, since the preflight checks only that one.
 * Other engines are provisioned at each variant's own version.
 */
export function awsEngineRefusals(spec: Spec): EngineNote[] {
  const notes: EngineNote[] = [];
  spec.variants.forEach((v, vi) => {
    const engine = variantEngine(spec, v);
    const facts = ENGINES[engine.kind];
    if (!facts.awsBackend) {
      notes.push({
        level: 'refused',
        path: enginePath(v, vi),
        message:
          `variant "${v.name}": the AWS backend does not provision ${facts.label}; plan it for its ` +
          `cost, rehearse it locally, or run it on another engine`,
      });
    } else if (
      engine.kind === 'aurora-mysql' &&
      spec.engine.kind === 'aurora-mysql' &&
      engine.version !== spec.engine.version
    ) {
      notes.push({
        level: 'refused',
        path: `variants[${vi}].engine.version`,
        message:
          `variant "${v.name}" asks for ${engineName(engine)} but the run's engine ` +
          `is ${engineName({ kind: spec.engine.kind, version: spec.engine.version })}: the AWS backend creates ` +
          `one run's Aurora MySQL clusters at one engine version; run the versions as separate experiments`,
      });
    }
  });
  return notes;
}
