/**
 * What every account check of the AWS preflight shares.
 * An AWS answer that is not an answer, such as denied or not implemented, becomes a warning instead of a verdict.
 */
import type { PlanNote } from '../../plan/types';
import type { Spec } from '../../experiment/schema';
import { errorCode, rethrow } from './aws-errors';

type CheckVerdict = 'ok' | 'warn' | 'refuse';

export type PreflightCheckId =
  | 'stack'
  | 'engine-version'
  | 'instance-classes'
  | 'parameters'
  | 'service-linked-role'
  | 'client-instances'
  | 'server-instances'
  | 'vcpu-quota'
  | 'network'
  | 'budget';

export interface PreflightCheck {
  readonly id: PreflightCheckId;
  readonly title: string;
  readonly verdict: CheckVerdict;
  /** One line: what the account said. */
  readonly summary: string;
  /** Each problem or remark with its JSON path or account setting. */
  readonly notes: readonly PlanNote[];
}

/** Collects one check's notes. The verdict follows from the worst note. */
export class CheckResult {
  private readonly notes: PlanNote[] = [];
  private readonly seen = new Set<string>();
  summary = '';

  constructor(
    readonly id: PreflightCheckId,
    readonly title: string,
  ) {}

  private add(level: PlanNote['level'], path: string, message: string): void {
    const key = `${level}|${path}|${message}`;
    if (this.seen.has(key)) return; // A parameter template shared by several variants is one problem.
    this.seen.add(key);
    this.notes.push({ level, path, message });
  }
  refuse(path: string, message: string): void {
    this.add('refused', path, message);
  }
  warn(path: string, message: string): void {
    this.add('warning', path, message);
  }
  info(path: string, message: string): void {
    this.add('info', path, message);
  }
  get refused(): boolean {
    return this.notes.some((n) => n.level === 'refused');
  }

  done(summary?: string): PreflightCheck {
    if (summary !== undefined) this.summary = summary;
    const verdict: CheckVerdict = this.notes.some((n) => n.level === 'refused')
      ? 'refuse'
      : this.notes.some((n) => n.level === 'warning')
        ? 'warn'
        : 'ok';
    return { id: this.id, title: this.title, verdict, summary: this.summary, notes: [...this.notes] };
  }
}

/** A question the account did not answer. The check becomes a warning saying why. */
export class NotCheckable extends Error {
  override readonly name = 'NotCheckable';
}

/**
 * The API answered that it does not exist. An AWS-compatible endpoint says so with InvalidAction or NotImplemented.
 * moto answers an action it lacks with an HTML 500 page, which the SDK names "Error" or "SyntaxError".
 * A real AWS server error carries a code and is rethrown.
 */
function isUnimplemented(e: unknown): boolean {
  const code = errorCode(e);
  if (/^(InvalidAction|NotImplemented|UnknownOperation(Exception)?)$/.test(code)) return true;
  const status = (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  return (code === 'Error' || code === 'SyntaxError') && status !== undefined && status >= 500;
}

/** AccessDenied (RDS, IAM, S3), AccessDeniedException (Service Quotas), UnauthorizedOperation (EC2). */
export function isAccessDenied(e: unknown): boolean {
  return (
    /^(AccessDenied(Exception)?|UnauthorizedOperation|Forbidden)$/.test(errorCode(e)) ||
    (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode === 403
  );
}

/**
 * One read-only call of a check. `action` is the IAM action it needs, said when it is denied.
 * Throttling and 5xx become TransientBackendError, since the state machine retries PlanRun.
 */
export async function ask<T>(action: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    return unanswered(action, e);
  }
}

/**
 * What `ask` does with an error, for a call whose error the check looked at first and passes on.
 */
export function unanswered(action: string, e: unknown): never {
  if (isUnimplemented(e)) throw new NotCheckable(`${action} is not implemented by this endpoint`, { cause: e });
  if (isAccessDenied(e))
    throw new NotCheckable(`${action} was denied (${errorCode(e)}): allow it to the caller to have this checked`, {
      cause: e,
    });
  return rethrow(e, action);
}

/** Runs a check. A NotCheckable anywhere in it turns it into a warning with the reason. */
export async function guarded(
  result: CheckResult,
  where: string,
  body: () => Promise<string>,
): Promise<PreflightCheck> {
  try {
    return result.done(await body());
  } catch (e) {
    if (!(e instanceof NotCheckable)) throw e;
    result.warn(where, `not checked: ${e.message}`);
    return result.done(result.summary || 'not checked');
  }
}

/** The index of a plan variant in the spec, as in the JSON path's variants[i]. */
export function specVariantIndex(spec: Spec, variantName: string): number {
  const i = spec.variants.findIndex((v) => v.name === variantName);
  if (i < 0) throw new Error(`variant "${variantName}" of the plan is not in the spec`);
  return i;
}
