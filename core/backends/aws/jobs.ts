/**
 * The runner jobs of a step: one SSM Run Command per client.
 * Each is found again by its Comment on retry, so a job never runs twice.
 * API fields are named as in botocore ssm/2014-11-06.
 */
import { createHash } from 'node:crypto';
import {
  CancelCommandCommand,
  GetCommandInvocationCommand,
  ListCommandsCommand,
  SendCommandCommand,
  type GetCommandInvocationCommandOutput,
} from '@aws-sdk/client-ssm';
import {
  UnsupportedOnBackendError,
  type CellResources,
  type JobHandle,
  type JobsState,
  type RunContext,
  type RunnerJob,
} from '../../backend';
import { lakeKeys } from '../../lake/rows';
import { jobDeadlineS, prepareDeadlineS } from '../../plan/step-looks';
import type { CellPlan, StepPlan } from '../../plan/types';
import { runnerArgs } from '../../sysbench/command';
import { call, errorCode, isNotFound, rethrow } from './aws-errors';
import type { AwsClients } from './clients';
import type { AwsBackendConfig } from './config';
import { redact } from './redact';
import { ssmRunnerCommands } from './runner-command';
import type { S3LakeStore } from './s3-lake';

/**
 * AWS-RunShellScript executionTimeout takes 1 to 172800 s.
 * SendCommand's delivery TimeoutSeconds takes 30 to 2592000.
 */
const MAX_EXECUTION_TIMEOUT_S = 172_800;
const DELIVERY_TIMEOUT_S = 600;

function stepOfJob(cell: CellPlan, jobId: string): StepPlan | undefined {
  const prefix = `${cell.cellId}/`;
  if (!jobId.startsWith(prefix)) return undefined;
  const stepId = jobId.slice(prefix.length).split('/')[0];
  return cell.steps.find((s) => s.stepId === stepId);
}

/**
 * How long SSM lets the runner run. It is past the workflow's own deadline, since the workflow stops jobs first.
 * @internal exported for its tests
 */
export function executionTimeoutS(
  cell: CellPlan,
  step: StepPlan | undefined,
  phase: 'prepare' | 'run',
  withPrepare = false,
): number {
  const deadline =
    phase === 'prepare' || step === undefined
      ? prepareDeadlineS(cell.data)
      : jobDeadlineS(step, cell.data, 'run', withPrepare);
  return Math.min(MAX_EXECUTION_TIMEOUT_S, deadline + 600);
}

/**
 * The SSM Comment that finds a job's command again on retry. SSM takes at most 100 characters.
 * @internal exported for its tests
 */
export function jobComment(runId: string, jobId: string): string {
  const key = createHash('sha256').update(`${runId}\n${jobId}`).digest('hex').slice(0, 16);
  return `ab ${key} ${jobId}`.slice(0, 100);
}

export interface RunCommandJobsOptions {
  readonly clients: Pick<AwsClients, 'ssm'>;
  readonly config: AwsBackendConfig;
  /** Where runners write their output and find custom workload scripts. */
  readonly lake: S3LakeStore;
  readonly now: () => Date;
}

export class RunCommandJobs {
  private readonly config: AwsBackendConfig;
  private readonly clients: Pick<AwsClients, 'ssm'>;
  private readonly lake: S3LakeStore;
  private readonly now: () => Date;

  constructor(options: RunCommandJobsOptions) {
    this.config = options.config;
    this.clients = options.clients;
    this.lake = options.lake;
    this.now = options.now;
  }

  private async findCommand(
    clientId: string,
    comment: string,
  ): Promise<{ commandId: string; requested?: Date } | undefined> {
    let token: string | undefined;
    do {
      const out = await call(`SSM ListCommands ${clientId}`, () =>
        this.clients.ssm.send(
          new ListCommandsCommand({ InstanceId: clientId, ...(token ? { NextToken: token } : {}) }),
        ),
      );
      const found = (out.Commands ?? []).find((c) => c.Comment === comment && c.CommandId);
      if (found)
        return {
          commandId: found.CommandId!,
          ...(found.RequestedDateTime ? { requested: found.RequestedDateTime } : {}),
        };
      token = out.NextToken;
    } while (token);
    return undefined;
  }

  async startJobs(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    jobs: readonly RunnerJob[],
  ): Promise<JobHandle[]> {
    if (!resources.credentials.secretRef)
      throw new UnsupportedOnBackendError(`cell ${cell.cellId} has no master user secret yet`);
    const handles: JobHandle[] = [];
    for (const job of jobs) {
      const step = stepOfJob(cell, job.jobId);
      const comment = jobComment(run.runId, job.jobId);
      // A retried StartJobs must not start a second runner for the same job.
      const previous = await this.findCommand(job.clientId, comment);
      if (previous) {
        handles.push({
          jobId: job.jobId,
          clientId: job.clientId,
          phase: job.phase,
          outputPrefix: job.outputPrefix,
          ref: previous.commandId,
          startedAt: (previous.requested ?? this.now()).toISOString(),
        });
        continue;
      }
      const scriptUri = job.workload.endsWith('.lua')
        ? this.lake.uri(lakeKeys.script(run.runId, job.workload)).replace(/[^/]+$/, '')
        : undefined;
      const argv = runnerArgs(job, {
        user: resources.credentials.user,
        passwordSecret: resources.credentials.secretRef,
        outLocation: this.lake.uri(job.outputPrefix),
        locationOf: (prefix) => this.lake.uri(prefix),
        ...(scriptUri ? { scriptUri } : {}),
      });
      const commands = ssmRunnerCommands(
        this.config.region,
        this.config.runnerS3Uri,
        this.config.runnerDigest ?? '',
        argv,
      );
      const out = await call(`SSM SendCommand ${job.jobId}`, () =>
        this.clients.ssm.send(
          new SendCommandCommand({
            DocumentName: this.config.ssmDocumentName,
            InstanceIds: [job.clientId],
            Parameters: {
              commands,
              executionTimeout: [
                String(
                  executionTimeoutS(
                    cell,
                    step,
                    job.phase,
                    job.prepareFirst !== undefined || (job.awaitPrepareOf ?? []).length > 0,
                  ),
                ),
              ],
            },
            TimeoutSeconds: DELIVERY_TIMEOUT_S,
            Comment: comment,
            OutputS3BucketName: this.config.bucket,
            OutputS3KeyPrefix: `${this.config.ssmOutputPrefix}${run.runId}/${job.jobId}`.slice(0, 500),
          }),
        ),
      );
      const commandId = out.Command?.CommandId;
      if (!commandId) throw new Error(`SSM SendCommand for ${job.jobId} returned no CommandId`);
      handles.push({
        jobId: job.jobId,
        clientId: job.clientId,
        phase: job.phase,
        outputPrefix: job.outputPrefix,
        ref: commandId,
        startedAt: this.now().toISOString(),
      });
    }
    return handles;
  }

  async checkJobs(_run: RunContext, handles: readonly JobHandle[]): Promise<JobsState> {
    const jobs: JobsState['jobs'][number][] = [];
    for (const h of handles) {
      let inv: GetCommandInvocationCommandOutput | undefined;
      try {
        inv = await this.clients.ssm.send(
          new GetCommandInvocationCommand({ CommandId: h.ref, InstanceId: h.clientId }),
        );
      } catch (e) {
        if (/InvocationDoesNotExist/.test(errorCode(e))) {
          // Right after SendCommand the invocation may not be visible yet.
          const ageS = (this.now().getTime() - Date.parse(h.startedAt)) / 1000;
          jobs.push(
            ageS < 300
              ? { jobId: h.jobId, state: 'running' }
              : { jobId: h.jobId, state: 'lost', detail: `SSM has no invocation of command ${h.ref} on ${h.clientId}` },
          );
          continue;
        }
        rethrow(e, `SSM GetCommandInvocation ${h.ref}`);
      }
      jobs.push(mapInvocation(h, inv));
    }
    const running = jobs.filter((j) => j.state === 'running').length;
    return { done: running === 0, running, jobs };
  }

  async stopJobs(_run: RunContext, handles: readonly JobHandle[]): Promise<void> {
    for (const h of handles) {
      try {
        await this.clients.ssm.send(new CancelCommandCommand({ CommandId: h.ref, InstanceIds: [h.clientId] }));
      } catch (e) {
        // Already finished or unknown: nothing to stop.
        if (isNotFound(e) || /InvalidCommandId|InvalidInstanceId|DoesNotExist/.test(errorCode(e))) continue;
        rethrow(e, `SSM CancelCommand ${h.ref}`);
      }
    }
  }
}

/**
 * SSM invocation status to job state. See botocore ssm, CommandInvocationStatus.
 * @internal exported for its tests
 */
export function mapInvocation(
  h: JobHandle,
  inv: Pick<GetCommandInvocationCommandOutput, 'Status' | 'StatusDetails' | 'ResponseCode' | 'StandardErrorContent'>,
): JobsState['jobs'][number] {
  switch (inv.Status) {
    case 'Pending':
    case 'InProgress':
    case 'Delayed':
    case 'Cancelling':
      return { jobId: h.jobId, state: 'running' };
    case 'Success':
      return { jobId: h.jobId, state: 'exited' };
    default: {
      // Failed means the runner exited non-zero with its own usage or setup error.
      // Its result.json would hold sysbench's exit code.
      // TimedOut or Cancelled means SSM stopped it. Either way its output cannot be trusted.
      const stderr = (inv.StandardErrorContent ?? '').trim().split('\n').slice(-3).join(' | ').slice(-300);
      const code = inv.ResponseCode !== undefined && inv.ResponseCode >= 0 ? ` (exit code ${inv.ResponseCode})` : '';
      return {
        jobId: h.jobId,
        state: 'lost',
        detail: redact(`SSM ${inv.StatusDetails ?? inv.Status ?? 'unknown'}${code}${stderr ? `: ${stderr}` : ''}`),
      };
    }
  }
}
