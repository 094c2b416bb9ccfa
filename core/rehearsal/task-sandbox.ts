/**
 * The Task functions' sandbox, with the deployed stack's environment.
 * Each SDK call is authorized against the function's role and answered by the handlers' clients.
 * A shared account keeps its sandbox warm across rehearsals.
 */
import { join } from 'node:path';
import type { AwsClients } from '../backends/aws/clients';
import type { TaskName } from '../workflow/task-names';
import type { ControlPlane } from './control-plane';
import { rehearsalIam, type RehearsalIam } from './iam/rehearsal-iam';
import { motoResourceTags } from './iam/resource-tags';
import { LambdaSandbox } from './lambda-sandbox';
import { MOTO_CREDENTIALS } from './moto-server';
import type { SandboxRoute } from './rehearsal-account';
import type { Preflight } from './rehearsal-preflight';
import type { RehearsalOptions, RehearsalResult, RehearsedFunction } from './rehearsal-options';
import type { RehearsalState } from './rehearsal-state';
import type { RunClaim } from './run-claim';
import { answerSdkCall } from './sdk-bridge';
import { functionEnvironment, taskFunctions } from './task-functions';

export interface TaskSandbox {
  readonly byTask: ReadonlyMap<TaskName, RehearsedFunction>;
  readonly lambda: LambdaSandbox;
  /** Each function's last 20 log lines, by logical id. */
  readonly functionLogs: ReadonlyMap<string, readonly string[]>;
  readonly iam: RehearsalIam;
}

/** This rehearsal's invocations, since a shared account's functions served earlier ones too. */
function invocationsSince(
  lambda: LambdaSandbox,
  byTask: ReadonlyMap<TaskName, RehearsedFunction>,
): () => RehearsalResult['functions'] {
  const before = lambda.invocations();
  return () =>
    new Map(
      [...byTask].map(([task, fn]) => {
        const now = lambda.invocations().get(fn.logicalId)!;
        const earlier = before.get(fn.logicalId) ?? { invocations: 0, coldStarts: 0, pids: [] };
        return [
          task,
          {
            logicalId: fn.logicalId,
            invocations: now.invocations - earlier.invocations,
            coldStarts: now.coldStarts - earlier.coldStarts,
            pids: now.pids.slice(earlier.pids.length),
          },
        ];
      }),
    );
}

export async function startTaskSandbox(
  options: RehearsalOptions,
  { plan, definition, functionNode }: Preflight,
  { dir }: RunClaim,
  { config, raw }: ControlPlane,
  clients: AwsClients,
  state: RehearsalState,
): Promise<TaskSandbox> {
  const functionLogs = new Map<string, string[]>();
  const byTask = taskFunctions(definition.functions);
  const environment = options.taskEnvironment(config);
  const runtimeModules = options.lambdaRuntimeModules();
  const functions = [...byTask.values()].map((fn) => ({
    name: fn.logicalId,
    assetDir: fn.assetDir,
    handler: fn.handler,
    runtime: fn.runtime,
    environment: functionEnvironment(fn, environment),
    memoryMb: fn.memoryMb,
    timeoutS: fn.timeoutS,
  }));
  // Each call is authorized against its function's role before it is answered.
  const iam = (state.gated = rehearsalIam({
    repoRoot: options.repoRoot,
    region: plan.region,
    functions: [...byTask.values()].map((fn) => ({
      name: fn.logicalId,
      templateEnvironment: fn.environment,
      environment: functionEnvironment(fn, environment),
      role: fn.role,
    })),
    resourceTags: motoResourceTags(raw),
  }));
  const route: SandboxRoute = {
    sdk: async (name, call) => (await iam.gate.check(name, call)) ?? answerSdkCall(clients, call),
    onLog: (name, line) => {
      const lines = functionLogs.get(name) ?? [];
      lines.push(line);
      if (lines.length > 20) lines.shift();
      functionLogs.set(name, lines);
    },
  };
  const newSandbox = (sandboxDir: string, to: SandboxRoute): LambdaSandbox => {
    const created = new LambdaSandbox({
      dir: sandboxDir,
      runtimeModules,
      node: functionNode.path,
      region: plan.region,
      // Never used to sign, since every SDK call goes through the bridge. Lambda gives a function's role these.
      extraEnvironment: {
        AWS_ACCESS_KEY_ID: MOTO_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: MOTO_CREDENTIALS.secretAccessKey,
        AWS_SESSION_TOKEN: 'rehearsal',
      },
      sdk: to.sdk,
      onLog: to.onLog,
    });
    for (const f of functions) created.add(f);
    return created;
  };
  const shared = options.account;
  const lambda = shared
    ? await shared.sandbox(
        JSON.stringify({ region: plan.region, runtimeModules, functions }),
        (to) => newSandbox(join(shared.dir, 'lambda'), to),
        route,
      )
    : newSandbox(join(dir, 'lambda'), route);
  if (!shared) state.sandbox = lambda;
  state.functionsOf = invocationsSince(lambda, byTask);
  return { byTask, lambda, functionLogs, iam };
}
