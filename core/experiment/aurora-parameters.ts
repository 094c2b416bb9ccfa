/**
 * A spec's Aurora parameters against the parameter catalogue for its engine version.
 * Each problem is named by its JSON path and says how to fix it.
 * localOnlyParameters are not Aurora parameters. The local backend checks them against MariaDB.
 */
import type { Spec } from './schema';
import {
  parameterCaveats,
  parameterProblems,
  type ParameterLevel,
  type ParameterValue,
} from '../aurora/parameter-catalogue';
import { writeForwardingParameters } from './write-forwarding';

export interface ParameterSpecProblem {
  /** JSON path, e.g. variants[2].clusterParameters.thread_handling. */
  readonly path: string;
  readonly message: string;
}

const LEVELS: readonly ParameterLevel[] = ['cluster', 'instance'];
const field = (level: ParameterLevel) => `${level}Parameters` as const;

/** How to fix a refusal. A local what-if keeps a setting Aurora has no room for. */
function fixHint(reason: string, localOnlyPath: string): string {
  if (/^(unknown|does not apply|not modifiable)/.test(reason)) {
    return (
      `; remove it, or keep it for a MariaDB-only what-if on the local backend in ${localOnlyPath} (an ` +
      `AWS plan refuses that variant)`
    );
  }
  return '';
}

/** Every refusal, deduplicated by path. A template's problem is reported once, not per variant. */
/** Whether a parameter template goes to Aurora MySQL, because an Aurora MySQL variant uses it. */
function auroraMysqlTemplate(spec: Spec, name: string): boolean {
  return spec.variants.some((v) => v.parameterTemplate === name && (v.engine ?? spec.engine).kind === 'aurora-mysql');
}

export function auroraParameterProblems(spec: Spec): ParameterSpecProblem[] {
  const found = new Map<string, string>();
  const add = (path: string, message: string) => {
    if (!found.has(path)) found.set(path, message);
  };
  const check = (
    version: string,
    level: ParameterLevel,
    params: Readonly<Record<string, ParameterValue>>,
    pathOf: (name: string) => string,
    localOnlyPath: string,
  ) => {
    for (const p of parameterProblems(version, level, params)) {
      if (p.name === 'engine.version') add('engine.version', p.reason);
      else add(pathOf(p.name), p.reason + fixHint(p.reason, localOnlyPath));
    }
  };

  // Only Aurora MySQL has a catalogue.
  // A template is checked when an Aurora MySQL variant uses it. An unused template goes to no engine.
  // Other engines' parameters are checked by engine-checks.ts.
  for (const [t, template] of Object.entries(spec.parameterTemplates).filter(([t]) => auroraMysqlTemplate(spec, t))) {
    for (const level of LEVELS) {
      check(
        spec.engine.version,
        level,
        template[field(level)],
        (name) => `parameterTemplates.${t}.${field(level)}.${name}`,
        `parameterTemplates.${t}.localOnlyParameters`,
      );
    }
  }
  spec.variants.forEach((v, i) => {
    const engine = v.engine ?? spec.engine;
    if (engine.kind !== 'aurora-mysql') return;
    const version = engine.version;
    const template = v.parameterTemplate !== undefined ? spec.parameterTemplates[v.parameterTemplate] : undefined;
    for (const level of LEVELS) {
      const own = v[field(level)];
      const merged = { ...(template?.[field(level)] ?? {}), ...own };
      // A template parameter's problem belongs to the template, unless only the merge causes it.
      check(
        version,
        level,
        merged,
        (name) =>
          name in own || template === undefined
            ? `variants[${i}].${field(level)}.${name}`
            : `parameterTemplates.${v.parameterTemplate}.${field(level)}.${name}`,
        `variants[${i}].localOnlyParameters`,
      );
    }
    const wf = writeForwardingParameters(v.writeForwarding);
    for (const p of parameterProblems(version, 'cluster', wf)) {
      if (p.name !== 'engine.version')
        add(`variants[${i}].writeForwarding`, `sets ${p.name}=${wf[p.name]}, which Aurora refuses: ${p.reason}`);
    }
  });
  return [...found].map(([path, message]) => ({ path, message }));
}

/** Values RDS accepts that do not do what the spec may mean, by JSON path. */
export function auroraParameterCaveats(spec: Spec): ParameterSpecProblem[] {
  const out = new Map<string, string>();
  const scan = (
    version: string,
    params: Readonly<Record<string, ParameterValue>>,
    pathOf: (name: string) => string,
  ) => {
    for (const c of parameterCaveats(version, params)) out.set(pathOf(c.name), c.reason);
  };
  for (const [t, template] of Object.entries(spec.parameterTemplates).filter(([t]) => auroraMysqlTemplate(spec, t))) {
    for (const level of LEVELS)
      scan(spec.engine.version, template[field(level)], (name) => `parameterTemplates.${t}.${field(level)}.${name}`);
  }
  spec.variants.forEach((v, i) => {
    const engine = v.engine ?? spec.engine;
    if (engine.kind !== 'aurora-mysql') return;
    for (const level of LEVELS)
      scan(engine.version, v[field(level)], (name) => `variants[${i}].${field(level)}.${name}`);
  });
  return [...out].map(([path, message]) => ({ path, message }));
}
