/**
 * What a rehearsal checks before anything starts, then what it says the rehearsal is and is not.
 * The spec is checked as the local backend would run it.
 */
import { join } from 'node:path';
import { localSpecRefusals, checkLocalDependencies, type LocalVersions } from '../backends/local/preflight';
import { planNotesLine } from '../cli/plan-view';
import { ENGINES } from '../aurora/engines';
import { cellEngine, type Plan, type PlanNote } from '../plan/types';
import { forwardedWorkloads, PlanError } from '../plan/plan';
import { preparePlanFromFile, type PreparedPlan } from '../plan/prepare';
import type { Spec } from '../experiment/schema';
import { awsCliPath } from './aws-cli';
import { lambdaNode, probeNode, type NodeProbe } from './lambda-node';
import { rootsUnavailable } from './instance-root';
import { rehearsalScope } from './rehearsal-scope';
import type { RehearsalOptions, SynthesizedDefinition } from './rehearsal-options';

export interface Preflight {
  readonly prepared: PreparedPlan;
  readonly spec: Spec;
  readonly plan: Plan;
  readonly versions: LocalVersions;
  /** Directories put before PATH so the clients find an `aws`. */
  readonly cliPath: readonly string[];
  readonly definition: SynthesizedDefinition;
  /** Checked against each function's Runtime when the sandbox adds it. */
  readonly functionNode: NodeProbe;
}

/**
 * The workloads that send writes to a reader of a write-forwarding variant, left out with a note.
 * MariaDB replicas cannot forward writes.
 * The AWS path's clients run plain sysbench, without the local backend's client-side emulation.
 */
function withoutForwardedWorkloads(spec: Spec): { spec: Spec; notes: PlanNote[] } {
  const left = new Map<number, string[]>();
  for (const v of spec.variants) {
    for (const w of forwardedWorkloads(spec, v)) {
      const i = spec.workloads.indexOf(w);
      left.set(i, [...(left.get(i) ?? []), v.name]);
    }
  }
  if (left.size === 0) return { spec, notes: [] };
  const notes: PlanNote[] = [...left].map(([i, variants]) => ({
    level: 'refused',
    path: `workloads[${i}]`,
    message:
      `workload "${spec.workloads[i]!.name}" on variant "${variants.join('", "')}" sends writes to a reader: ` +
      `Aurora local write forwarding needs AWS, and MariaDB replicas cannot forward writes; left out of the ` +
      `AWS rehearsal` +
      (spec.variants.length > 1 ? ' (for every variant: workloads are not per variant)' : ''),
  }));
  const workloads = spec.workloads.filter((_, i) => !left.has(i));
  if (workloads.length === 0) throw new PlanError(notes);
  return { spec: { ...spec, workloads }, notes };
}

export async function preflight(
  options: RehearsalOptions,
  lagS: number,
  log: (line: string) => void,
): Promise<Preflight> {
  // Refusals come first, so nothing starts when the spec cannot run.
  // The rehearsal's own notes are printed in full, since `aurora-bench plan` does not list them.
  // The plan's other notes get one line, as a local run prints them.
  const leftOut: PlanNote[] = [];
  const prepared = preparePlanFromFile(options.specFile, join(options.repoRoot, 'client', 'workloads'), {
    backend: 'aws',
    scale: options.scale ?? 'full',
    backendRefusals: localSpecRefusals,
    narrow: (s) => {
      const narrowed = withoutForwardedWorkloads(s);
      leftOut.push(...narrowed.notes);
      return narrowed;
    },
    ...(options.runId ? { runId: options.runId } : {}),
  });
  const { spec, plan } = prepared;
  const versions = await checkLocalDependencies();
  const cliPath = awsCliPath();
  const definition = options.synthesize(plan.region);

  const engines = [
    ...new Set(plan.cells.map((c) => cellEngine(plan, c)).map((e) => `${ENGINES[e.kind].label} ${e.version}`)),
  ];
  if (options.boot) {
    const why = rootsUnavailable();
    if (why) throw new Error(`the AWS rehearsal boots its instances in Debian roots: ${why}`);
  }
  const functionNode = probeNode(lambdaNode(options.repoRoot));
  const scope = rehearsalScope(versions.serverVersion, engines, lagS, options.boot !== undefined, functionNode.version);
  for (const line of scope) log(line);
  for (const n of leftOut) log(`[${n.level}] ${n.path}: ${n.message}`);
  const notesLine = planNotesLine(
    prepared.notes.filter((n) => !leftOut.includes(n)),
    [options.specFile, '--aws', ...(options.scale === 'small' ? ['--scale', 'small'] : [])],
  );
  if (notesLine !== null) log(notesLine);
  log(`run ${plan.runId}: ${plan.cells.length} cells`);
  return { prepared, spec, plan, versions, cliPath, definition, functionNode };
}
