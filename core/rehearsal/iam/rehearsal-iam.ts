/**
 * The rehearsal's IAM: one gate for its functions, and the line the rehearsal prints about it.
 * Each role's statements resolve to moto's account, the Region and the standing resources.
 */
import { iamDefinitionPath, loadIamDefinition } from './definition';
import { IamGate, type FunctionRole } from './iam-gate';
import { referencesOf, resolveStatements } from './role-statements';

/** moto's DEFAULT_ACCOUNT_ID, where its resources are created. */
const MOTO_ACCOUNT = '123456789012';

export interface GatedFunction {
  readonly name: string;
  /** The template's Environment.Variables, with CloudFormation references. */
  readonly templateEnvironment: Readonly<Record<string, unknown>>;
  /** The values the rehearsal gives them. */
  readonly environment: Readonly<Record<string, string>>;
  readonly role: { readonly logicalId: string; readonly statements: readonly Record<string, unknown>[] };
}

export interface RehearsalIam {
  readonly gate: IamGate;
  readonly source: string;
  /** The roles as the gate evaluates them, by function name. */
  readonly roles: ReadonlyMap<string, FunctionRole>;
}

export function rehearsalIam(o: {
  readonly repoRoot: string;
  readonly region: string;
  readonly functions: readonly GatedFunction[];
  readonly resourceTags: (arn: string) => Promise<Readonly<Record<string, string>> | undefined>;
}): RehearsalIam {
  const definition = loadIamDefinition(iamDefinitionPath(o.repoRoot));
  const refs = new Map<string, string>();
  for (const f of o.functions)
    for (const [k, v] of referencesOf(f.templateEnvironment, f.environment, o.region)) refs.set(k, v);
  const pseudo = { partition: 'aws', region: o.region, account: MOTO_ACCOUNT };
  const roles = new Map<string, FunctionRole>(
    o.functions.map((f) => {
      return [f.name, { roleName: f.role.logicalId, statements: resolveStatements(f.role.statements, refs, pseudo) }];
    }),
  );
  const gate = new IamGate({ definition, ...pseudo, roles, resourceTags: o.resourceTags });
  return { gate, source: definition.source, roles };
}

/** The rehearsal's line about IAM, once the run has made its calls. */
export function iamSummaryLine(iam: RehearsalIam): string {
  const { calls, denied, underived } = iam.gate.counts();
  const left = [...underived].map(([action, types]) => `${action} ${[...types].join('/')}`).sort();
  return (
    `IAM: evaluated per call, ${calls} SDK calls of the functions authorized against their roles in the ` +
    `synthesized template (${denied} denied), with the Service Authorization Reference as ${iam.source} ` +
    `ships it` +
    (left.length > 0 ? `; required resources not derived from the calls' input: ${left.join(', ')}` : '')
  );
}
