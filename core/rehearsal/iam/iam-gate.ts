/**
 * IAM at the SDK bridge. Each call a function makes is authorized against its execution role first.
 * A denied call gets the error the service's SDK raises and AWS's message.
 */
import type { SdkAnswer, SdkCall } from '../lambda-sandbox';
import { authorize, conditionKeysFor, type PolicyStatement } from './authorize';
import { iamRequest } from './call-requests';
import type { IamDefinition } from './definition';
import { actionsOfOperation, SDK_PACKAGES } from './sdk-actions';

/**
 * The error code each service's SDK raises for a denied request.
 * EC2 uses UnauthorizedOperation. See EC2 API Reference, "Error codes".
 * S3, RDS, IAM and STS use AccessDenied. SNS's model raises AuthorizationErrorException.
 * The JSON services use AccessDeniedException.
 */
const DENIED_ERROR: Readonly<Record<string, string>> = {
  ec2: 'UnauthorizedOperation',
  s3: 'AccessDenied',
  rds: 'AccessDenied',
  iam: 'AccessDenied',
  sts: 'AccessDenied',
  sns: 'AuthorizationErrorException',
};

export interface FunctionRole {
  /** The role's name in the template. Its logical id stands for the physical name. */
  readonly roleName: string;
  readonly statements: readonly PolicyStatement[];
}

export interface IamGateOptions {
  readonly definition: IamDefinition;
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  /** Each function's role, by function name. */
  readonly roles: ReadonlyMap<string, FunctionRole>;
  /** A resource's tags, for the ResourceTag condition keys. Undefined means the resource does not exist. */
  readonly resourceTags: (arn: string) => Promise<Readonly<Record<string, string>> | undefined>;
}

/** Calls authorized, and the required resource types it could not derive, by action. */
export interface IamGateCounts {
  readonly calls: number;
  readonly denied: number;
  readonly underived: ReadonlyMap<string, ReadonlySet<string>>;
}

export class IamGate {
  private calls = 0;
  private denied = 0;
  private readonly underived = new Map<string, Set<string>>();
  /** The first call each function made of each allowed action, for replaying. */
  private readonly allowed = new Map<string, Map<string, SdkCall>>();
  private readonly tags = new Map<string, Readonly<Record<string, string>> | undefined>();

  constructor(private readonly o: IamGateOptions) {}

  counts(): IamGateCounts {
    return { calls: this.calls, denied: this.denied, underived: this.underived };
  }

  /** Each function's first allowed call of each action. */
  allowedCalls(): ReadonlyMap<string, ReadonlyMap<string, SdkCall>> {
    return this.allowed;
  }

  /** A resource's tags as the gate last looked them up. */
  tagsSeen(arn: string): Readonly<Record<string, string>> | undefined {
    return this.tags.get(arn);
  }

  /** The error to answer the call with when IAM denies it, or undefined. */
  async check(functionName: string, call: SdkCall): Promise<SdkAnswer | undefined> {
    const pkg = Object.values(SDK_PACKAGES).find((p) => p.client === call.client);
    // A client aurora-bench does not build. The bridge refuses it itself.
    if (pkg === undefined) return undefined;
    const role = this.o.roles.get(functionName);
    if (role === undefined) return refusal('Error', `function ${functionName} has no role the rehearsal knows`);
    this.calls++;
    const operation = call.command.replace(/Command$/, '');
    const actions = actionsOfOperation(pkg.prefix, operation);
    if (actions === undefined)
      return refusal('Error', `S3 ${operation} has no IAM action in core/rehearsal/iam/sdk-actions.ts: look it up`);
    const where = { partition: this.o.partition, region: this.o.region, account: this.o.account };
    for (const action of actions) {
      const request = iamRequest(this.o.definition, action, call.input, where);
      if (request === undefined)
        return refusal('Error', `${action} is not in the Service Authorization Reference data (.iam-definition.json)`);
      for (const type of request.underived) {
        const set = this.underived.get(action) ?? new Set<string>();
        set.add(type);
        this.underived.set(action, set);
      }
      for (const resource of request.resources) {
        const context = { ...request.context, ...(await this.resourceContext(role, action, resource)) };
        const verdict = authorize(role.statements, action, resource, context);
        if (verdict.allowed) continue;
        this.denied++;
        const { partition, account } = this.o;
        const principal = `arn:${partition}:sts::${account}:assumed-role/${role.roleName}/${functionName}`;
        return refusal(
          DENIED_ERROR[pkg.prefix] ?? 'AccessDeniedException',
          `User: ${principal} is not authorized to perform: ${action} on resource: ${resource} ${verdict.reason}`,
        );
      }
      const byAction = this.allowed.get(functionName) ?? new Map<string, SdkCall>();
      if (!byAction.has(action)) byAction.set(action, call);
      this.allowed.set(functionName, byAction);
    }
    return undefined;
  }

  /** The resource's tags under each ResourceTag key the role's statements test here. */
  private async resourceContext(role: FunctionRole, action: string, resource: string): Promise<Record<string, string>> {
    const keys = conditionKeysFor(role.statements, action, resource).filter((k) => /resourcetag\//i.test(k));
    if (keys.length === 0 || resource === '*') return {};
    const found = await this.o.resourceTags(resource);
    this.tags.set(resource, found);
    const tags = found ?? {};
    const context: Record<string, string> = {};
    for (const key of keys) {
      const tag = key.slice(key.indexOf('/') + 1);
      if (tags[tag] !== undefined) context[key] = tags[tag];
    }
    return context;
  }
}

function refusal(name: string, message: string): SdkAnswer {
  return {
    ok: false,
    error: { name, message, $fault: 'client', $metadata: { httpStatusCode: 403 }, fields: {} },
  };
}
