/**
 * Lambda plumbing shared by every Task handler.
 * Each handler passes its own Task function and a deps builder for only the clients that Task calls.
 * Importing the registry or every backend part would put every Task's code in every bundle.
 * It would also put every Task's actions in every role.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { awsFunctionContext, type AwsFunctionContext } from '../../core/task-deps/aws-function-deps';
import type { TASKS, TaskEvent, TaskResult } from '../../core/workflow/task-registry';
import type { TaskDeps } from '../../core/workflow/tasks/types';
import type { TaskName } from '../../core/workflow/task-names';

const serviceName = 'aurora-bench';
const logger = new Logger({ serviceName });
const metrics = new Metrics({ namespace: 'AuroraBench', serviceName });
/** @internal Exported for its tests. */
export const tracer = new Tracer({ serviceName });

/** Field names whose values never reach a log line. */
const SECRET_KEYS = /password|secret(?!Ref|Arn)|token/i;

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, SECRET_KEYS.test(k) ? '***' : redact(v)]),
    );
  }
  return value;
}

/**
 * The Lambda entry of a task.
 * It builds its deps lazily once per container, so importing a handler touches no AWS configuration.
 * It logs the redacted input, counts outcomes, and rethrows for Retry and Catch.
 */
export function awsTaskHandler<T extends TaskName>(
  task: T,
  run: (typeof TASKS)[T],
  buildDeps: (context: AwsFunctionContext) => TaskDeps,
) {
  const runTask = run as (deps: TaskDeps, event: TaskEvent<T>) => Promise<TaskResult<T>>;
  let bound: ((event: TaskEvent<T>) => Promise<TaskResult<T>>) | undefined;
  let depsPromise: Promise<TaskDeps> | undefined;
  return async (event: TaskEvent<T>, context?: { awsRequestId?: string }): Promise<TaskResult<T>> => {
    logger.appendKeys({ task, requestId: context?.awsRequestId });
    const run = (event as { run?: { runId?: string } } | null)?.run;
    if (run?.runId) logger.appendKeys({ runId: run.runId });
    logger.debug('task input', { event: redact(event) as Record<string, unknown> });
    if (!bound) {
      depsPromise ??= Promise.resolve().then(() =>
        buildDeps(awsFunctionContext(process.env, (client) => tracer.captureAWSv3Client(client as never))),
      );
      const deps = await depsPromise;
      bound = (e) => runTask(deps, e);
    }
    const started = Date.now();
    try {
      const result = await bound(event);
      metrics.addMetric(`${task}.succeeded`, MetricUnit.Count, 1);
      return result;
    } catch (error) {
      // Named errors reach the state machine as errorType = error.name, for Retry and Catch.
      logger.error('task failed', error as Error);
      metrics.addMetric(`${task}.failed`, MetricUnit.Count, 1);
      throw error;
    } finally {
      metrics.addMetric(`${task}.durationMs`, MetricUnit.Milliseconds, Date.now() - started);
      metrics.publishStoredMetrics();
    }
  };
}
