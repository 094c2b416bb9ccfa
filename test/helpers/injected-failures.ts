/**
 * A backend whose listed methods throw, for exercising the workflow's Retry and Catch paths in tests
 * (moved out of core/workflow/local-runner.ts: production code carries no test helpers).
 */
import type { Backend } from '../../core/backend';

export function withInjectedFailures(
  backend: Backend,
  /** `when`: fail only the calls whose arguments match (e.g. the run phase's jobs, not the prepare's). */
  failures: Partial<Record<keyof Backend, { error: Error; times?: number; when?: (args: unknown[]) => boolean }>>,
): Backend & { readonly calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  return new Proxy(backend, {
    get(target, prop, receiver) {
      if (prop === 'calls') return calls;
      const value = Reflect.get(target, prop, receiver) as unknown;
      const failure = failures[prop as keyof Backend];
      if (typeof value !== 'function') return value;
      // Every Backend method returns a promise: an injected failure is a rejection, as the real one's would be.
      return (...args: unknown[]) => {
        calls[String(prop)] = (calls[String(prop)] ?? 0) + 1;
        if (failure && (failure.when?.(args) ?? true)) {
          const key = `${String(prop)}:failed`;
          calls[key] = (calls[key] ?? 0) + 1;
          if (calls[key] <= (failure.times ?? Infinity)) return Promise.reject(failure.error);
        }
        return Promise.resolve((value as (...a: unknown[]) => unknown).apply(target, args));
      };
    },
  }) as Backend & { readonly calls: Record<string, number> };
}
