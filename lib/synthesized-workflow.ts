/**
 * The state machine as deployed, without deploying.
 * The app is synthesized offline and each function reference becomes an ARN naming its Task.
 * The Task is found through the construct tree, not through the shape of the logical id.
 * The workflow-on-moto tests run this definition. The AWS rehearsal runs the bundled one.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { isAlive } from '../core/backends/local/processes';
import { TASK_NAMES, type TaskName } from '../core/workflow/task-names';
import { buildAuroraBenchApp } from './app';
import { CONFIG_CONTEXT_KEY } from './config';

/** @internal Exported for its tests. */
export interface SynthesizedWorkflow {
  readonly definition: Record<string, unknown>;
  readonly taskByArn: ReadonlyMap<string, TaskName>;
}

/**
 * The template's DefinitionString with each function reference replaced by `functionArn`.
 * Any other reference fails.
 */
function resolveDefinitionString(value: unknown, functionArn: (logicalId: string) => string): string {
  if (typeof value === 'string') return value;
  const fnJoin = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!fnJoin) throw new Error(`DefinitionString is neither text nor Fn::Join: ${JSON.stringify(value).slice(0, 200)}`);
  return fnJoin[1]
    .map((part) => {
      if (typeof part === 'string') return part;
      const getAtt = (part as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
      if (getAtt && getAtt[1] === 'Arn') return functionArn(getAtt[0]);
      const ref = (part as { Ref?: string }).Ref;
      if (ref !== undefined) return functionArn(ref);
      throw new Error(`DefinitionString part is not a function reference: ${JSON.stringify(part)}`);
    })
    .join(fnJoin[0]);
}

export interface SynthesizeWorkflowOptions {
  /** The checkout: cdk.json, lambdas/, state-machines/, client/. */
  readonly projectRoot: string;
  /** Region and account the function ARNs are written with. */
  readonly region: string;
  readonly account?: string;
}

export interface TemplateJson {
  readonly Resources: Record<
    string,
    { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, unknown> }
  >;
}

interface Synthesis {
  readonly template: TemplateJson;
  readonly workflow: SynthesizedWorkflow;
  /** Logical id of each Task's function. */
  readonly taskByLogicalId: ReadonlyMap<string, TaskName>;
}

/** The app synthesized into `outdir`, with or without Lambda bundling. */
function synthesizeInto(o: SynthesizeWorkflowOptions, outdir: string, bundling: boolean): Synthesis {
  const context = (
    JSON.parse(readFileSync(join(o.projectRoot, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }
  ).context;
  const app = new App({
    outdir,
    // CloudFormation validation costs seconds of CPU per synthesis.
    // It runs where the template is deployed, in `cdk synth` and `cdk deploy`.
    builtinCloudFormationValidation: false,
    context: {
      ...context,
      [CONFIG_CONTEXT_KEY]: context[CONFIG_CONTEXT_KEY],
      // With bundling, the template names each asset folder as the CDK CLI has it do.
      ...(bundling ? { 'aws:cdk:enable-asset-metadata': true } : { 'aws:cdk:bundling-stacks': [] }),
    },
  });
  const stack = buildAuroraBenchApp(app, { projectRoot: o.projectRoot, nag: false });
  const template = app.synth().getStackByName(stack.stackName).template as TemplateJson;
  const taskByLogicalId = new Map<string, TaskName>(
    TASK_NAMES.map((task) => [
      Stack.of(stack).getLogicalId(stack.workflow.functions[task].node.defaultChild as CfnElement),
      task,
    ]),
  );
  const machines = Object.values(template.Resources).filter((r) => r.Type === 'AWS::StepFunctions::StateMachine');
  if (machines.length !== 1)
    throw new Error(`expected one state machine in the synthesized template, found ${machines.length}`);
  const taskByArn = new Map<string, TaskName>();
  const text = resolveDefinitionString(machines[0]!.Properties['DefinitionString'], (logicalId) => {
    const task = taskByLogicalId.get(logicalId);
    if (task === undefined)
      throw new Error(`the definition references ${logicalId}, which is not one of the workflow's Task functions`);
    const arn = `arn:aws:lambda:${o.region}:${o.account ?? '123456789012'}:function:${logicalId}`;
    taskByArn.set(arn, task);
    return arn;
  });
  return {
    template,
    workflow: { definition: JSON.parse(text) as Record<string, unknown>, taskByArn },
    taskByLogicalId,
  };
}

/**
 * The workflow synthesized now, which takes seconds. The CLI goes through synthesizeWorkflowCached.
 * @internal Exported for the tests that need a fresh synthesis.
 */
export function synthesizeWorkflow(o: SynthesizeWorkflowOptions): SynthesizedWorkflow {
  const outdir = mkdtempSync(join(tmpdir(), 'aurora-bench-synth-'));
  try {
    return synthesizeInto(o, outdir, false).workflow;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** A Lambda function of the template as `cdk deploy` uploads it. */
interface SynthesizedFunction {
  readonly logicalId: string;
  /** The workflow Task it runs. Undefined for the sweeper, which is outside the workflow. */
  readonly task?: TaskName;
  /** The asset folder NodejsFunction bundled. */
  readonly assetDir: string;
  readonly runtime: string;
  readonly handler: string;
  /**
   * The template's Environment.Variables.
   * CloudFormation intrinsics among them are resolved at deploy time.
   */
  readonly environment: Readonly<Record<string, unknown>>;
  readonly memoryMb: number;
  readonly timeoutS: number;
  /**
   * Its execution role, as the template writes it. References stay unresolved.
   * The rehearsal authorizes each of its SDK calls against these statements.
   */
  readonly role: { readonly logicalId: string; readonly statements: readonly Record<string, unknown>[] };
}

interface BundledSynthesis extends SynthesizedWorkflow {
  /** The cloud assembly: the template and the asset folders. */
  readonly outdir: string;
  readonly functions: readonly SynthesizedFunction[];
}

/** Every Lambda function of a synthesized template, with its asset folder under `outdir`. */
function functionsOf(
  template: TemplateJson,
  outdir: string,
  taskByLogicalId: ReadonlyMap<string, TaskName>,
): SynthesizedFunction[] {
  return Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
    .map(([logicalId, r]) => {
      const assetPath = r.Metadata?.['aws:asset:path'];
      if (typeof assetPath !== 'string')
        throw new Error(`function ${logicalId} has no aws:asset:path metadata: was bundling skipped?`);
      const task = taskByLogicalId.get(logicalId);
      const p = r.Properties;
      return {
        logicalId,
        ...(task !== undefined ? { task } : {}),
        assetDir: join(outdir, assetPath),
        runtime: String(p['Runtime']),
        handler: String(p['Handler']),
        environment: (p['Environment'] as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {},
        // Lambda's defaults when the template leaves them out. See CreateFunction.
        memoryMb: Number(p['MemorySize'] ?? 128),
        timeoutS: Number(p['Timeout'] ?? 3),
        role: executionRole(template, logicalId, p['Role']),
      };
    });
}

/**
 * Every statement that applies to a function's role.
 * CDK moves what exceeds the inline quota into attached policy resources, so those count too.
 * AWS managed policies are not in the template. The stack's roles have none.
 * A permissions boundary would narrow the statements, so it is refused.
 */
function executionRole(template: TemplateJson, functionId: string, role: unknown): SynthesizedFunction['role'] {
  const roleId = (role as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0];
  const resource = roleId === undefined ? undefined : template.Resources[roleId];
  if (roleId === undefined || resource?.Type !== 'AWS::IAM::Role')
    throw new Error(`function ${functionId}: its Role is not a role of the template (${JSON.stringify(role)})`);
  const props = resource.Properties;
  const documents: unknown[] = ((props['Policies'] as { PolicyDocument: unknown }[] | undefined) ?? []).map(
    (p) => p.PolicyDocument,
  );
  for (const r of Object.values(template.Resources)) {
    if (r.Type !== 'AWS::IAM::Policy' && r.Type !== 'AWS::IAM::ManagedPolicy') continue;
    const roles = (r.Properties['Roles'] as { Ref?: string }[] | undefined) ?? [];
    if (roles.some((x) => x.Ref === roleId)) documents.push(r.Properties['PolicyDocument']);
  }
  const statements = documents.flatMap((d) => {
    const s = (d as { Statement: unknown }).Statement;
    return (Array.isArray(s) ? s : [s]) as Record<string, unknown>[];
  });
  // CloudFormation documents a bucket's Arn from its name. Written so, it resolves from the name the functions get.
  const bucketArns = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(bucketArns);
    if (v === null || typeof v !== 'object') return v;
    const att = (v as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
    if (att && att[1] === 'Arn' && template.Resources[att[0]]?.Type === 'AWS::S3::Bucket')
      return { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: att[0] }]] };
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, bucketArns(x)]));
  };
  if (props['PermissionsBoundary'] !== undefined)
    throw new Error(`function ${functionId}: its role ${roleId} has a permissions boundary the rehearsal cannot read`);
  return { logicalId: roleId, statements: statements.map((x) => bucketArns(x) as Record<string, unknown>) };
}

/**
 * The app as `cdk synth` writes it for `cdk deploy`, bundling included, which takes tens of seconds.
 * It is cached under a digest of what it depends on.
 * The folder is written under a temporary name and renamed, so readers see all or nothing.
 * Processes that miss the same entry at once write it only once.
 * Writing one prunes the cache to the KEEP_BUNDLED most recently used.
 */
export function synthesizeBundledCached(o: SynthesizeWorkflowOptions, cacheDir: string): BundledSynthesis {
  const digest = createHash('sha256')
    .update(synthesisDigest(o))
    .update(readFileSync(join(o.projectRoot, 'package-lock.json')))
    // Its sideEffects list decides what esbuild leaves out of each bundle.
    .update(readFileSync(join(o.projectRoot, 'package.json')))
    .digest('hex')
    .slice(0, 32);
  const dir = join(cacheDir, `bundled-${digest}`);
  const index = join(dir, 'synthesis.json');
  const load = (): BundledSynthesis => {
    const stored = JSON.parse(readFileSync(index, 'utf8')) as {
      definition: Record<string, unknown>;
      taskByArn: [string, TaskName][];
      functions: (Omit<SynthesizedFunction, 'assetDir'> & { assetDir: string })[];
    };
    return {
      outdir: dir,
      definition: stored.definition,
      taskByArn: new Map(stored.taskByArn),
      functions: stored.functions.map((f) => ({ ...f, assetDir: join(dir, f.assetDir) })),
    };
  };
  if (existsSync(index)) {
    touch(dir);
    return load();
  }
  mkdirSync(cacheDir, { recursive: true });
  // Rehearsals start together after a code change. The first bundles and the others wait for its entry.
  const release = lockSynthesis(`${dir}.lock`, () => existsSync(index));
  if (release === undefined) {
    touch(dir);
    return load();
  }
  try {
    writeBundled(o, dir, cacheDir);
  } finally {
    release();
  }
  return load();
}

/** Synthesizes with bundling into a temporary folder, renames it to `dir`, prunes the cache. */
function writeBundled(o: SynthesizeWorkflowOptions, dir: string, cacheDir: string): void {
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const { template, workflow, taskByLogicalId } = synthesizeInto(o, tmp, true);
  const functions = functionsOf(template, tmp, taskByLogicalId);
  writeFileSync(
    join(tmp, 'synthesis.json'),
    JSON.stringify({
      definition: workflow.definition,
      taskByArn: [...workflow.taskByArn],
      functions: functions.map((f) => ({ ...f, assetDir: relative(tmp, f.assetDir) })),
    }),
  );
  try {
    renameSync(tmp, dir);
  } catch {
    // Another process wrote the same entry meanwhile. Theirs is as good.
    rmSync(tmp, { recursive: true, force: true });
  }
  pruneSynthesisCache(cacheDir, 'bundled', KEEP_BUNDLED);
}

/** How long a waiter sleeps between looks at a synthesis another process is writing. */
const LOCK_POLL_MS = 250;
/** A lock older than this is taken over. A bundled synthesis takes tens of seconds, and pids get reused. */
const LOCK_STALE_MS = 10 * 60_000;
/** A lock folder still without its holder's pid after this was left by a process that died creating it. */
const LOCK_PID_GRACE_MS = 10_000;

/**
 * Takes the lock folder `lock` and returns its release. mkdir is atomic, so one process wins.
 * While another live process holds it, this waits.
 * It returns undefined once `done()` holds, because the holder wrote the entry.
 * A lock that is gone, stale or held by a dead process is taken over.
 * @internal Exported for its tests.
 */
export function lockSynthesis(lock: string, done: () => boolean): (() => void) | undefined {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      const release = () => rmSync(lock, { recursive: true, force: true });
      // The holder it waited for may have written the entry and released the lock since the last look.
      if (!done()) return release;
      release();
      return undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (done()) return undefined;
    if (lockHeld(lock)) Atomics.wait(sleeper, 0, 0, LOCK_POLL_MS);
    else rmSync(lock, { recursive: true, force: true });
  }
}

/** Whether the lock's holder still runs and the lock is not stale. */
function lockHeld(lock: string): boolean {
  let ageMs: number;
  try {
    ageMs = Date.now() - statSync(lock).mtimeMs;
  } catch {
    return true; // released meanwhile, so the next mkdir tells
  }
  if (ageMs > LOCK_STALE_MS) return false;
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    return ageMs < LOCK_PID_GRACE_MS; // the holder has not written its pid yet, or died first
  }
  if (!Number.isInteger(pid) || pid <= 0) return ageMs < LOCK_PID_GRACE_MS; // being written
  return isAlive(pid);
}

/** Cache entries kept of each kind. A bundled synthesis is about 70 MB, a definition tens of kB. */
const KEEP_BUNDLED = 3;
const KEEP_WORKFLOWS = 10;
/** The names the cache writes. Temporary names of a write under way never match. */
const CACHE_ENTRY: Readonly<Record<'bundled' | 'workflow' | 'template', RegExp>> = {
  bundled: /^bundled-[0-9a-f]{32}$/,
  workflow: /^workflow-[0-9a-f]{32}\.json$/,
  template: /^template-[0-9a-f]{32}\.json$/,
};

/** Marks a cache entry as used now. Pruning keeps the most recently used. */
function touch(path: string): void {
  try {
    const now = new Date();
    utimesSync(path, now, now);
  } catch {
    // Read-only cache. It still answers.
  }
}

/**
 * Removes all but the `keep` most recently used entries of a kind.
 * So a checkout that changes often does not fill the disk with stale syntheses.
 * Entries being written and other files are left alone. An entry that cannot be removed stays.
 * @internal Exported for its tests.
 */
export function pruneSynthesisCache(
  cacheDir: string,
  kind: 'bundled' | 'workflow' | 'template',
  keep: number,
): string[] {
  let names: string[];
  try {
    names = readdirSync(cacheDir).filter((n) => CACHE_ENTRY[kind].test(n));
  } catch {
    return [];
  }
  const byUse = names
    .flatMap((n) => {
      try {
        return [{ n, mtimeMs: statSync(join(cacheDir, n)).mtimeMs }];
      } catch {
        return []; // removed meanwhile
      }
    })
    .sort((a, b) => b.mtimeMs - a.mtimeMs || a.n.localeCompare(b.n));
  const removed: string[] = [];
  for (const { n } of byUse.slice(keep)) {
    try {
      rmSync(join(cacheDir, n), { recursive: true, force: true });
      removed.push(n);
    } catch {
      // In use or not ours to remove. It stays.
    }
  }
  return removed;
}

/**
 * What a synthesis depends on, as one digest. Any change to the code that builds the app gives a new one.
 * @internal Exported for its tests.
 */
export function synthesisDigest(o: SynthesizeWorkflowOptions): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ region: o.region, account: o.account ?? null, cdk: cdkLibVersion() }));
  const codeRoot = join(__dirname, '..');
  const files = [
    join(o.projectRoot, 'cdk.json'),
    ...filesUnder(join(o.projectRoot, 'state-machines')),
    ...['lib', 'core', 'lambdas'].flatMap((d) => filesUnder(join(codeRoot, d))),
  ];
  for (const file of files) {
    hash.update(`\0${relative(codeRoot, file)}\0`);
    hash.update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 32);
}

function cdkLibVersion(): string {
  return (JSON.parse(readFileSync(require.resolve('aws-cdk-lib/package.json'), 'utf8')) as { version: string }).version;
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js|json)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * The stack's template synthesized without bundling, cached under synthesizeWorkflowCached's digest.
 * The rehearsal creates the lake's Glue tables from it, and its tests read the roles from it.
 */
export function synthesizeTemplateCached(o: SynthesizeWorkflowOptions, cacheDir: string): TemplateJson {
  const file = join(cacheDir, `template-${synthesisDigest(o)}.json`);
  try {
    const cached = JSON.parse(readFileSync(file, 'utf8')) as TemplateJson;
    if (typeof cached.Resources === 'object') {
      touch(file);
      return cached;
    }
  } catch {
    // Not cached yet, or unreadable. Synthesize.
  }
  const outdir = mkdtempSync(join(tmpdir(), 'ab-template-'));
  try {
    const { template } = synthesizeInto(o, outdir, false);
    try {
      mkdirSync(cacheDir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(template));
      renameSync(tmp, file);
      pruneSynthesisCache(cacheDir, 'template', KEEP_WORKFLOWS);
    } catch {
      // A read-only or full disk. The synthesis is still good.
    }
    return template;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * synthesizeWorkflow, cached under the digest of everything it depends on.
 * A synthesis takes seconds and every `run --aws-rehearsal` process needs one.
 * An unreadable entry is synthesized again. An unwritable one only costs the next run its synthesis.
 * @internal Exported for its tests.
 */
export function synthesizeWorkflowCached(o: SynthesizeWorkflowOptions, cacheDir: string): SynthesizedWorkflow {
  const file = join(cacheDir, `workflow-${synthesisDigest(o)}.json`);
  try {
    const cached = JSON.parse(readFileSync(file, 'utf8')) as {
      definition: Record<string, unknown>;
      taskByArn: [string, TaskName][];
    };
    if (typeof cached.definition === 'object' && Array.isArray(cached.taskByArn)) {
      touch(file);
      return { definition: cached.definition, taskByArn: new Map(cached.taskByArn) };
    }
  } catch {
    // Not cached yet, or unreadable. Synthesize.
  }
  const synthesized = synthesizeWorkflow(o);
  try {
    mkdirSync(cacheDir, { recursive: true });
    // Written under a temporary name and renamed, so a concurrent reader sees all or nothing.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ definition: synthesized.definition, taskByArn: [...synthesized.taskByArn] }));
    renameSync(tmp, file);
    pruneSynthesisCache(cacheDir, 'workflow', KEEP_WORKFLOWS);
  } catch {
    // A read-only or full disk. The synthesis is still good.
  }
  return synthesized;
}
