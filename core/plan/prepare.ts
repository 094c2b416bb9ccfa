/**
 * One way to prepare a run: scale the loaded experiment, apply what the backend refuses from the
 * spec alone, and plan it. `plan`, `validate`, `run` (local, AWS, rehearsal), `preflight` and the
 * workflow's PlanRun all come through here, so what `plan` shows is what `run` does. The account
 * checks that need the plan (AWS preflight, budget) follow it; they are backend code and are called
 * with the prepared plan.
 */
import type { Spec } from '../experiment/schema';
import { scaleSpec, type Scale } from '../experiment/scale';
import { loadSpecFile } from '../experiment/validate';
import { awsEngineRefusals } from '../experiment/engine-checks';
import { drawOrderSeed, planRun, PlanError, type PlanOptions } from './plan';
import type { Plan, PlanNote } from './types';

export interface LoadedExperiment {
  readonly spec: Spec;
  /** Custom Lua bodies by file name (from loadSpecFile). */
  readonly scripts: Readonly<Record<string, string>>;
}

export interface PreparePlanOptions extends Omit<PlanOptions, 'scripts'> {
  /** 'small' shrinks the experiment for a local rehearsal (core/experiment/scale.ts); default 'full'. */
  readonly scale?: Scale;
  /**
   * What the backend that will run it refuses from the spec alone (locally: instance classes it
   * cannot emulate, core/backends/local/preflight.ts). Passed in: planning does not import backends.
   */
  readonly backendRefusals?: (spec: Spec) => readonly PlanNote[];
  /** 'refuse' (run): any refusal stops it with a PlanError naming the source; 'show' (plan): the refusals are listed in the notes. */
  readonly refusals?: 'refuse' | 'show';
  /** Narrows the scaled spec before planning, saying what it left out (the AWS rehearsal drops workloads its local servers refuse). */
  readonly narrow?: (spec: Spec) => { readonly spec: Spec; readonly notes: readonly PlanNote[] };
}

export interface PreparedPlan {
  /** The spec as planned: scaled, and narrowed if asked. */
  readonly spec: Spec;
  readonly scripts: Readonly<Record<string, string>>;
  readonly plan: Plan;
  /** What scaling and narrowing changed: PlanRun cannot know it, so it travels with the execution input. */
  readonly preparationNotes: readonly PlanNote[];
  /** Everything to tell the user, in order: scaling, narrowing, the plan's own notes, and (shown, not refused) the backend's refusals. */
  readonly notes: readonly PlanNote[];
}

export function preparePlan(loaded: LoadedExperiment, options: PreparePlanOptions): PreparedPlan {
  const { scale = 'full', backendRefusals, refusals: onRefusal = 'refuse', narrow, ...planOptions } = options;
  const scaled = scaleSpec(loaded.spec, scale);
  // The engines the AWS backend does not provision yet are its refusals from the spec alone.
  const refused = [...(planOptions.backend === 'aws' ? awsEngineRefusals(scaled.spec) : []), ...(backendRefusals ? backendRefusals(scaled.spec) : [])];
  if (onRefusal === 'refuse' && refused.length > 0) throw new PlanError(refused, planOptions.source);
  const narrowed = narrow ? narrow(scaled.spec) : { spec: scaled.spec, notes: [] };
  // A randomized order's seed is drawn here, into the spec the run starts with: the workflow's PlanRun plans the same order from it.
  const spec = narrowed.spec.order === 'randomized' && narrowed.spec.orderSeed === undefined ? { ...narrowed.spec, orderSeed: drawOrderSeed() } : narrowed.spec;
  const plan = planRun(spec, { ...planOptions, scripts: loaded.scripts });
  const shown = onRefusal === 'show' ? refused : [];
  const drawn: PlanNote[] =
    spec.orderSeed !== narrowed.spec.orderSeed
      ? [{ level: 'info', path: 'orderSeed', message: `drawn: ${spec.orderSeed} (order "randomized" without a seed); the plan and the run manifest record it` }]
      : [];
  const preparationNotes = [...scaled.notes, ...narrowed.notes, ...drawn];
  return { spec, scripts: loaded.scripts, plan, preparationNotes, notes: [...preparationNotes, ...plan.notes, ...shown] };
}

/** Load an experiment file (its custom scripts from `builtinWorkloads`) and prepare it; errors name the file. */
export function preparePlanFromFile(file: string, builtinWorkloads: string, options: Omit<PreparePlanOptions, 'source'>): PreparedPlan {
  return preparePlan(loadSpecFile(file, builtinWorkloads), { ...options, source: file });
}
