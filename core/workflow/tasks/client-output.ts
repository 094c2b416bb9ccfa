/** What a runner job left in the lake, read and parsed. */
import type { JobHandle } from '../../backend';
import type { ClientStepOutput } from '../../lake/step-rows';
import type { StepPlan } from '../../plan/types';
import { parseClientCpu, parseSysbenchOutput } from '../../sysbench/parser';
import type { ParsedOutput, RunnerResult } from '../../sysbench/types';
import { readJson } from './lake-json';
import type { TaskDeps } from './types';

export interface ClientOutput extends ClientStepOutput {
  readonly job: JobHandle;
}

export async function readClientOutput(
  deps: TaskDeps,
  job: JobHandle,
  step: StepPlan,
  lostDetail: string | undefined,
): Promise<ClientOutput> {
  const lake = deps.backend.lake;
  const [log, resultText, cpuText] = await Promise.all([
    lake.get(job.outputPrefix + 'output.log'),
    lake.get(job.outputPrefix + 'result.json'),
    lake.get(job.outputPrefix + 'client_cpu.jsonl'),
  ]);
  const result = resultText !== undefined ? (JSON.parse(resultText) as RunnerResult) : undefined;
  let parsed: ParsedOutput;
  if (log === undefined) {
    parsed = {
      status: 'failed',
      error: lostDetail ?? `runner left no output.log under ${job.outputPrefix}`,
      summary: null,
      intervals: [],
    };
  } else {
    parsed = parseSysbenchOutput(log, {
      ...(result ? { exitCode: result.exitCode } : {}),
      percentile: step.percentile,
    });
    if (result === undefined && parsed.status === 'ok') {
      parsed = { ...parsed, status: 'failed', error: lostDetail ?? 'runner did not finish (no result.json)' };
    } else if (result !== undefined && lostDetail !== undefined) {
      // A job stopped for a reason still writes result.json.
      // The reason comes first, and what sysbench said of being stopped after it.
      parsed = {
        ...parsed,
        status: 'failed',
        error: parsed.error !== null && parsed.error !== lostDetail ? `${lostDetail} (${parsed.error})` : lostDetail,
      };
    }
  }
  return {
    job,
    clientId: job.clientId,
    jobStartedAt: job.startedAt,
    parsed,
    result,
    cpuSamples: cpuText !== undefined ? parseClientCpu(cpuText) : [],
  };
}

/** Seconds a prepare took, from its result.json, or undefined when that does not read. */
export async function preparedSeconds(deps: TaskDeps, outputPrefix: string): Promise<number | undefined> {
  const result = await readJson<RunnerResult>(deps, outputPrefix + 'result.json');
  const seconds = result ? (Date.parse(result.endedAt) - Date.parse(result.startedAt)) / 1000 : NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}
