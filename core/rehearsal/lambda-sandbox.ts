/**
 * A synthesized Lambda asset run on this machine the way its Node.js runtime runs it.
 * Each execution environment is one child process, a cold start, that answers invocations until it stops.
 * docs/decisions/lambda-bundle-sandbox.md says why a child process rather than AWS's Runtime Interface Emulator.
 *
 * The child gets what Lambda gives and nothing of this checkout.
 *  - Its asset folder alone, copied read-only, plays /var/task.
 *  - A read-only NODE_PATH holds only the AWS SDK for JavaScript v3 and its dependencies.
 *    Lambda's Node.js runtimes include that SDK. See Lambda Developer Guide, "Building Lambda functions with Node.js".
 *    The path order is the runtime bootstrap's.
 *  - Its environment is the template's plus the variables Lambda defines, and a writable temporary folder.
 *    See Lambda Developer Guide, "Defined runtime environment variables".
 *  - The heap limits are those the runtime's bootstrap derives from the memory size.
 *    The bootstrap of the public.ecr.aws/lambda/nodejs images does this.
 *  - Lambda's Node.js 22 flags are set where this Node.js knows them.
 *    See Lambda Developer Guide, "Experimental Node.js features".
 *  - An invocation still running at the function's timeout is killed with its environment.
 *  - A function whose runtime is another Node.js major than the sandbox's is refused.
 * Run as root, the child runs as `nobody`, since Lambda runs functions as an unprivileged user.
 *
 * Errors come back as Lambda reports them, with errorType and errorMessage.
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { lambdaRuntimeOf, probeNode, type NodeProbe } from './lambda-node';
import { AuroraBenchError } from '../errors';

/** The sandbox's folder cannot be entered by the user its functions run as. */
class SandboxFolderError extends AuroraBenchError {
  override readonly name = 'SandboxFolderError';
}

/** One function of the synthesized template, as Lambda would run it. */
export interface LambdaFunctionConfig {
  /** Its logical id in the template, for messages and AWS_LAMBDA_FUNCTION_NAME. */
  readonly name: string;
  /** The synthesized asset folder. */
  readonly assetDir: string;
  /** The template's Handler, such as index.handler. */
  readonly handler: string;
  /** The template's Runtime, such as nodejs22.x. */
  readonly runtime: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly memoryMb: number;
  readonly timeoutS: number;
}

/** An invocation's result, or the error Lambda would report. */
export type InvokeOutcome =
  | { readonly ok: true; readonly payload: unknown; readonly coldStart: boolean }
  | { readonly ok: false; readonly errorType: string; readonly errorMessage: string; readonly coldStart: boolean };

/** Lambda's limit on an execution environment's Init phase. */
const INIT_LIMIT_MS = 10_000;

/**
 * Load errors mean the function never ran its own code.
 * @internal exported for its tests (a test seam)
 */
export const LOAD_ERROR_TYPES: readonly string[] = [
  'Runtime.ImportModuleError',
  'Runtime.HandlerNotFound',
  'Runtime.UserCodeSyntaxError',
];

/**
 * The bootstrap each environment runs, in the role of /var/runtime/index.mjs.
 * It loads the handler module once, then answers the parent's invocations over IPC.
 * It uses only Node.js builtins, so it resolves nothing the function itself could not.
 */
const BOOTSTRAP = String.raw`'use strict';
const path = require('node:path');
const send = (m) => new Promise((r) => process.send(m, () => r()));
const errorOf = (e, fallback) => ({
  errorType: (e && typeof e === 'object' && typeof e.name === 'string' && e.name !== 'Error') ? e.name : fallback,
  errorMessage: e && typeof e === 'object' && 'message' in e ? String(e.message) : String(e),
});
(async () => {
  const spec = process.env._HANDLER || '';
  const dot = spec.lastIndexOf('.');
  const modulePath = path.resolve(process.env.LAMBDA_TASK_ROOT, spec.slice(0, dot));
  let handler;
  try {
    const mod = require(modulePath);
    handler = mod[spec.slice(dot + 1)];
  } catch (e) {
    const code = e && e.code;
    const type = code === 'MODULE_NOT_FOUND' || code === 'ERR_REQUIRE_ESM'
      ? 'Runtime.ImportModuleError'
      : e instanceof SyntaxError ? 'Runtime.UserCodeSyntaxError' : 'Runtime.ImportModuleError';
    await send({ kind: 'init-error', errorType: type, errorMessage: String(e && e.stack || e) });
    process.exit(1);
  }
  if (typeof handler !== 'function') {
    await send({
      kind: 'init-error', errorType: 'Runtime.HandlerNotFound', errorMessage: spec + ' is undefined or not exported',
    });
    process.exit(1);
  }
  process.on('message', async (m) => {
    if (!m || m.kind !== 'invoke') return;
    const deadline = Date.now() + m.timeoutMs;
    const context = {
      awsRequestId: m.requestId,
      functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
      functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
      memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
      logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
      logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
      invokedFunctionArn: m.functionArn,
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
      callbackWaitsForEmptyEventLoop: true,
    };
    try {
      const payload = await handler(m.event, context);
      await send({
        kind: 'result', requestId: m.requestId,
        payload: payload === undefined ? null : JSON.parse(JSON.stringify(payload)),
      });
    } catch (e) {
      await send({ kind: 'error', requestId: m.requestId, ...errorOf(e, 'Error') });
    }
  });
  await send({ kind: 'ready' });
})();
`;

/**
 * The preload that bridges the functions' AWS SDK calls to the rehearsal.
 * It patches every SDK v3 client's `send` to pass the command over IPC instead of signing an HTTP request.
 * A service error is rebuilt as the package's own exception class of that name.
 * So `instanceof`, error names and the state machine's Retry and Catch see what AWS would give.
 * Middleware the function adds, such as X-Ray's, does not run. Only Node.js builtins.
 */
const SDK_BRIDGE = String.raw`'use strict';
const Module = require('node:module');
const { Readable } = require('node:stream');
const pending = new Map();
let nextCall = 0;
process.on('message', (m) => {
  if (!m || m.kind !== 'sdk-answer') return;
  const p = pending.get(m.callId);
  if (!p) return;
  pending.delete(m.callId);
  if (m.ok) p.resolve(m.output);
  else p.reject(m.error);
});
const streamOf = (bytes) => {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stream = Readable.from([buf]);
  stream.transformToByteArray = async () => new Uint8Array(buf);
  stream.transformToString = async (encoding) => new TextDecoder(encoding || 'utf-8').decode(buf);
  stream.transformToWebStream = () => Readable.toWeb(stream);
  return stream;
};
const packageOf = new WeakMap();
const errorFor = (client, e) => {
  const exports = packageOf.get(client.constructor) || {};
  const own = exports[e.name];
  let error;
  if (typeof own === 'function' && own.prototype instanceof Error) {
    error = new own({ message: e.message, $metadata: e.$metadata, ...e.fields });
  } else {
    const base = Object.keys(exports).find((k) => /ServiceException$/.test(k));
    error = base && e.$fault
      ? new exports[base]({ name: e.name, $fault: e.$fault, $metadata: e.$metadata, message: e.message })
      : new Error(e.message);
    Object.assign(error, e.fields);
  }
  error.name = e.name;
  // An error that is no service exception still carries its HTTP status.
  if (e.$metadata !== undefined) error.$metadata = e.$metadata;
  if (e.$fault !== undefined) error.$fault = e.$fault;
  return error;
};
const patch = (Client) => {
  if (Client.prototype.send.bridgedToRehearsal) return;
  const send = function (command, optionsOrCb, cb) {
    const callback = typeof optionsOrCb === 'function' ? optionsOrCb : cb;
    const callId = ++nextCall;
    const answered = new Promise((resolve, reject) => pending.set(callId, { resolve, reject }));
    try {
      process.send({
        kind: 'sdk-call', callId, client: this.constructor.name, service: this.config && this.config.serviceId,
        command: command.constructor.name, input: command.input,
      });
    } catch (e) {
      pending.delete(callId);
      return Promise.reject(e);
    }
    const result = answered.then(
      (output) =>
        output && output.Body && output.Body.bridgedBytes
          ? { ...output, Body: streamOf(output.Body.bridgedBytes) }
          : output,
      (e) => { throw errorFor(this, e); },
    );
    if (!callback) return result;
    result.then((o) => callback(null, o), (e) => callback(e));
  };
  send.bridgedToRehearsal = true;
  Client.prototype.send = send;
};
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const exports = load.apply(this, arguments);
  if (
    exports && typeof exports === 'object' && typeof exports.__Client === 'function' && exports.__Client.prototype &&
    typeof exports.__Client.prototype.send === 'function'
  ) {
    patch(exports.__Client);
    for (const name of Object.keys(exports)) {
      const v = exports[name];
      if (typeof v === 'function' && v.prototype instanceof exports.__Client) packageOf.set(v, exports);
    }
  }
  return exports;
};
`;

/** An SDK call a function made, for the rehearsal to answer. */
export interface SdkCall {
  readonly client: string;
  readonly service: string | undefined;
  readonly command: string;
  readonly input: Record<string, unknown>;
}

/** The command's output, or the error to raise in the function. */
export type SdkAnswer =
  | { readonly ok: true; readonly output: Record<string, unknown> }
  | {
      readonly ok: false;
      readonly error: {
        readonly name: string;
        readonly message: string;
        readonly $fault?: string;
        readonly $metadata?: unknown;
        readonly fields: Record<string, unknown>;
      };
    };

/** The heap flags of the runtime's bootstrap for a memory size, and Lambda's Node.js 22 flags `node` knows. */
function runtimeNodeFlags(memoryMb: number, node: NodeProbe): string[] {
  const newSpace = Math.floor(memoryMb / 10);
  const flags = [
    '--expose-gc',
    '--max-http-header-size=81920',
    `--max-semi-space-size=${Math.floor(newSpace / 2)}`,
    `--max-old-space-size=${memoryMb - newSpace}`,
  ];
  for (const flag of ['--no-experimental-require-module', '--no-experimental-detect-module']) {
    if (node.flags.has(flag.replace(/^--no-/, '--'))) flags.push(flag);
  }
  return flags;
}

/** Packages of the runtime's node_modules: every @aws-sdk package installed here and their dependencies. */
function sdkClosure(nodeModules: string): string[] {
  const seen = new Set<string>();
  const queue = readdirSync(join(nodeModules, '@aws-sdk')).map((n) => `@aws-sdk/${n}`);
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    const manifest = join(nodeModules, name, 'package.json');
    if (!existsSync(manifest)) continue; // An optional dependency not installed for this platform.
    seen.add(name);
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    queue.push(...Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }));
  }
  return [...seen].sort();
}

/** Files become 0444, and folders 0555. */
function makeReadOnly(path: string): void {
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const e of readdirSync(path)) makeReadOnly(join(path, e));
    chmodSync(path, 0o555);
  } else {
    chmodSync(path, 0o444);
  }
}

/**
 * Links `from` file by file under `to`, since the files are tens of MB.
 * It copies where a link is impossible, as across file systems.
 */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, e.name);
    const target = join(to, e.name);
    if (e.isDirectory()) linkTree(source, target);
    else {
      try {
        linkSync(source, target);
      } catch {
        copyFileSync(source, target);
        chmodSync(target, 0o444);
      }
    }
  }
  chmodSync(to, 0o555);
}

function removeTree(path: string): void {
  if (!existsSync(path)) return;
  // Read-only folders must be made writable again, or a non-root user cannot remove their entries.
  const walk = (p: string) => {
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st?.isDirectory()) return;
    chmodSync(p, 0o755);
    for (const e of readdirSync(p)) walk(join(p, e));
  };
  walk(path);
  rmSync(path, { recursive: true, force: true });
}

/**
 * The runtime's packages under `cacheDir`, built once per set of installed SDK versions.
 * Returns the folder to put on NODE_PATH.
 */
export function lambdaRuntimeModules(nodeModules: string, cacheDir: string): string {
  const packages = sdkClosure(nodeModules);
  const versions = packages.map(
    (p) =>
      `${p}@${(JSON.parse(readFileSync(join(nodeModules, p, 'package.json'), 'utf8')) as { version: string }).version}`,
  );
  const digest = createHash('sha256').update(versions.join('\n')).digest('hex').slice(0, 16);
  const dir = join(cacheDir, `lambda-runtime-${digest}`);
  const modules = join(dir, 'node_modules');
  if (existsSync(join(dir, 'complete'))) return modules;
  const tmp = `${dir}.${process.pid}.tmp`;
  removeTree(tmp);
  for (const p of packages)
    cpSync(join(nodeModules, p), join(tmp, 'node_modules', p), { recursive: true, dereference: true });
  writeFileSync(join(tmp, 'packages.txt'), versions.join('\n') + '\n');
  writeFileSync(join(tmp, 'complete'), '');
  makeReadOnly(tmp);
  chmodSync(tmp, 0o755);
  try {
    renameSync(tmp, dir);
  } catch {
    // Another process built it meanwhile, so use theirs.
    removeTree(tmp);
  }
  return modules;
}

/** The uid and gid the children run as: `nobody` when this process is root, else its own. */
function childIdentity(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
}

export interface LambdaSandboxOptions {
  /**
   * A folder of the sandbox's own, removed by dispose().
   * When this process is root, it and its parents must be traversable by everyone.
   */
  readonly dir: string;
  /** The runtime's packages, read-only in the sandbox's folder. */
  readonly runtimeModules: string;
  /** The Node.js executable the functions run on. Its major must be their runtime's. */
  readonly node: string;
  readonly region: string;
  /** Variables added after the template's, such as moto's endpoint and credentials. */
  readonly extraEnvironment?: Readonly<Record<string, string>>;
  /** Each line a function writes. */
  readonly onLog?: (functionName: string, line: string) => void;
  /**
   * Answers the functions' AWS SDK calls.
   * When given, every environment preloads SDK_BRIDGE and no call leaves over HTTP.
   */
  readonly sdk?: (functionName: string, call: SdkCall) => Promise<SdkAnswer>;
}

/** How often a function was invoked, and how many were cold starts. */
export interface FunctionInvocations {
  readonly invocations: number;
  readonly coldStarts: number;
  /** The process ids of the environments it ran in. */
  readonly pids: readonly number[];
}

interface Environment {
  readonly child: ChildProcess;
  readonly ready: Promise<{ ok: true } | { ok: false; errorType: string; errorMessage: string }>;
  busy: boolean;
}

/** Functions staged for running. An environment starts on a cold start and is reused while warm. */
export class LambdaSandbox {
  private readonly functions = new Map<
    string,
    {
      config: LambdaFunctionConfig;
      taskRoot: string;
      tmp: string;
      warm: Environment[];
      invocations: number;
      coldStarts: number;
      pids: number[];
    }
  >();
  private readonly bootstrap: string;
  private readonly bridge: string;
  private readonly runtimeModules: string;
  private readonly identity = childIdentity();
  readonly node: NodeProbe;
  /** Its executable where the children can run it. */
  private readonly nodeExecutable: string;
  /** The runtime's packages bind-mounted into the sandbox's folder as root, until dispose(). */
  private mounted: string | undefined;

  constructor(private readonly o: LambdaSandboxOptions) {
    this.node = probeNode(o.node);
    mkdirSync(o.dir, { recursive: true });
    chmodSync(o.dir, 0o755);
    if (this.identity.uid !== undefined) {
      // The children run as nobody, so every folder above the sandbox must let others through.
      // mkdtemp makes 0700 folders.
      for (let d = dirname(o.dir); d !== dirname(d); d = dirname(d)) {
        if ((statSync(d).mode & 0o001) === 0)
          throw new SandboxFolderError(
            `the sandbox folder ${o.dir} is inside ${d}, which others cannot enter: nobody could run the functions`,
          );
      }
    }
    const runtimeDir = join(o.dir, 'runtime');
    mkdirSync(runtimeDir, { recursive: true });
    this.bootstrap = join(runtimeDir, 'bootstrap.js');
    writeFileSync(this.bootstrap, BOOTSTRAP);
    this.bridge = join(runtimeDir, 'sdk-bridge.js');
    writeFileSync(this.bridge, SDK_BRIDGE);
    makeReadOnly(this.bootstrap);
    makeReadOnly(this.bridge);
    this.runtimeModules = this.stageRuntimeModules(o.runtimeModules, join(runtimeDir, 'node_modules'));
    this.nodeExecutable = this.stageNode(this.node.path, join(runtimeDir, 'node'));
    chmodSync(runtimeDir, 0o555);
  }

  /**
   * The runtime's packages where the children read them.
   * As this process's own user, that is the cached folder itself.
   * As root, the children are nobody, who cannot enter the cache under root's home.
   * So the folder is bind-mounted read-only, since linking its ~13,000 files took seconds of CPU.
   * It is linked file by file where mounting is not allowed.
   */
  private stageRuntimeModules(cached: string, staged: string): string {
    if (this.identity.uid === undefined) return cached;
    mkdirSync(staged);
    const bind = spawnSync('mount', ['--bind', cached, staged], { encoding: 'utf8' });
    if (bind.status === 0) {
      this.mounted = staged;
      process.once('exit', this.unmountAtExit);
      // Read-only as a mount, so removing the sandbox's folder cannot reach into the cache.
      // That holds even when the unmount failed.
      if (spawnSync('mount', ['-o', 'remount,bind,ro', staged]).status === 0) return staged;
      this.unmount();
    }
    linkTree(cached, staged);
    return staged;
  }

  /**
   * The Node.js executable where the children run it.
   * As root they are nobody, who cannot enter root's home, so it gets a hard link in the sandbox's folder.
   */
  private stageNode(path: string, staged: string): string {
    if (this.identity.uid === undefined) return path;
    const real = realpathSync(path);
    try {
      linkSync(real, staged);
    } catch {
      copyFileSync(real, staged);
      chmodSync(staged, 0o555);
    }
    return staged;
  }

  private readonly unmountAtExit = (): void => this.unmount();

  private unmount(): void {
    if (this.mounted === undefined) return;
    if (spawnSync('umount', [this.mounted]).status !== 0) spawnSync('umount', ['-l', this.mounted]);
    this.mounted = undefined;
    process.off('exit', this.unmountAtExit);
  }

  /** Copies the function's asset folder alone, read-only, and gives it an empty writable temporary folder. */
  add(config: LambdaFunctionConfig): void {
    if (this.functions.has(config.name)) throw new Error(`function ${config.name} is already in the sandbox`);
    // A bundle built for one major can fail on another.
    // So a function runs only on the major Lambda would run it on.
    if (config.runtime !== lambdaRuntimeOf(this.node.major))
      throw new Error(
        `function ${config.name} deploys on ${config.runtime}, but the sandbox's Node.js is ` +
          `v${this.node.version} (${this.node.path}): run scripts/setup.sh, which links the runtime's ` +
          `major as .node/bin/node`,
      );
    const base = join(this.o.dir, 'functions', config.name);
    const taskRoot = join(base, 'task');
    cpSync(config.assetDir, taskRoot, { recursive: true, dereference: true });
    makeReadOnly(taskRoot);
    const tmp = join(base, 'tmp');
    mkdirSync(tmp, { recursive: true });
    if (this.identity.uid !== undefined) chownSync(tmp, this.identity.uid, this.identity.gid!);
    chmodSync(dirname(taskRoot), 0o755);
    chmodSync(join(this.o.dir, 'functions'), 0o755);
    this.functions.set(config.name, { config, taskRoot, tmp, warm: [], invocations: 0, coldStarts: 0, pids: [] });
  }

  private environmentVariables(config: LambdaFunctionConfig, taskRoot: string, tmp: string): Record<string, string> {
    const runtimeDir = dirname(this.bootstrap);
    return {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      LANG: 'en_US.UTF-8',
      TZ: ':UTC',
      TMPDIR: tmp,
      HOME: tmp,
      LAMBDA_TASK_ROOT: taskRoot,
      LAMBDA_RUNTIME_DIR: runtimeDir,
      NODE_PATH: [this.runtimeModules, runtimeDir, taskRoot].join(':'),
      _HANDLER: config.handler,
      AWS_REGION: this.o.region,
      AWS_DEFAULT_REGION: this.o.region,
      AWS_EXECUTION_ENV: `AWS_Lambda_${config.runtime}`,
      AWS_LAMBDA_FUNCTION_NAME: config.name,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(config.memoryMb),
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${config.name}`,
      AWS_LAMBDA_LOG_STREAM_NAME: `sandbox/[$LATEST]${randomUUID().replace(/-/g, '')}`,
      AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
      // Nothing needs to listen for X-Ray segments here.
      AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000',
      _X_AMZN_TRACE_ID:
        `Root=1-` +
        Math.floor(Date.now() / 1000).toString(16) +
        `-` +
        randomUUID().replace(/-/g, '').slice(0, 24) +
        `;Parent=` +
        randomUUID().replace(/-/g, '').slice(0, 16) +
        `;Sampled=0`,
      ...config.environment,
      ...this.o.extraEnvironment,
    };
  }

  private start(name: string): Environment {
    const fn = this.functions.get(name)!;
    const env = this.environmentVariables(fn.config, fn.taskRoot, fn.tmp);
    const child = fork(this.bootstrap, [], {
      cwd: fn.taskRoot,
      env,
      execPath: this.nodeExecutable,
      execArgv: [...runtimeNodeFlags(fn.config.memoryMb, this.node), ...(this.o.sdk ? ['--require', this.bridge] : [])],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // Structured clone keeps the Dates and bytes of SDK inputs and outputs.
      serialization: 'advanced',
      ...this.identity,
    });
    fn.pids.push(child.pid!);
    const sdk = this.o.sdk;
    if (sdk) {
      child.on('message', (m: { kind?: string; callId?: number } & Partial<SdkCall>) => {
        if (m.kind !== 'sdk-call') return;
        const call: SdkCall = {
          client: m.client ?? '',
          service: m.service,
          command: m.command ?? '',
          input: m.input ?? {},
        };
        void sdk(name, call)
          .catch((e: unknown): SdkAnswer => ({
            ok: false,
            error: { name: 'Error', message: e instanceof Error ? e.message : String(e), fields: {} },
          }))
          .then((answer) => {
            if (child.connected)
              child.send(
                { kind: 'sdk-answer', callId: m.callId, ...answer },
                (e) => e && this.o.onLog?.(name, `the answer to ${call.command} could not be sent: ${e.message}`),
              );
          });
      });
    }
    // The last lines written, for the message of a runtime that dies before it can report.
    const lastLines: string[] = [];
    const emit = (line: string) => {
      lastLines.push(line);
      if (lastLines.length > 8) lastLines.shift();
      this.o.onLog?.(name, line);
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      let pending = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) emit(line);
      });
      stream.on('end', () => {
        if (pending) emit(pending);
      });
    }
    const ready = new Promise<{ ok: true } | { ok: false; errorType: string; errorMessage: string }>((resolve) => {
      const onMessage = (m: { kind: string; errorType?: string; errorMessage?: string }) => {
        if (m.kind === 'ready') resolve({ ok: true });
        else if (m.kind === 'init-error')
          resolve({ ok: false, errorType: m.errorType!, errorMessage: m.errorMessage! });
        else return;
        child.off('message', onMessage);
      };
      child.on('message', onMessage);
      child.once('exit', (code, signal) =>
        resolve({
          ok: false,
          errorType: 'Runtime.ExitError',
          errorMessage:
            `the runtime exited during its initialization (` +
            (signal ?? `exit status ${code}`) +
            `): ${lastLines.join('\n')}`,
        }),
      );
    });
    return { child, ready, busy: false };
  }

  private static stop(environment: Environment): void {
    if (environment.child.exitCode === null && environment.child.signalCode === null) environment.child.kill('SIGKILL');
  }

  /**
   * Invokes the function in an idle warm environment, else in a new one.
   * Past the function's timeout the environment is killed.
   * An initialization gets Lambda's 10 s Init limit plus the function's timeout.
   * Lambda runs a timed-out Init again within the invocation.
   * See Lambda Developer Guide, "Understanding the Lambda execution environment lifecycle".
   */
  async invoke(name: string, event: unknown): Promise<InvokeOutcome> {
    const fn = this.functions.get(name);
    if (!fn) throw new Error(`no function ${name} in the sandbox`);
    let environment = fn.warm.find((e) => !e.busy && e.child.exitCode === null && e.child.signalCode === null);
    const coldStart = environment === undefined;
    environment ??= this.start(name);
    fn.invocations++;
    if (coldStart) fn.coldStarts++;
    environment.busy = true;
    if (coldStart) fn.warm.push(environment);
    const timeoutMs = fn.config.timeoutS * 1000;
    const requestId = randomUUID();
    const child = environment.child;
    let timer: NodeJS.Timeout | undefined;
    const deadline = (ms: number, message: string) =>
      new Promise<InvokeOutcome>((resolve) => {
        clearTimeout(timer);
        timer = setTimeout(
          () =>
            resolve({
              ok: false,
              errorType: 'Sandbox.Timedout',
              errorMessage: `RequestId: ${requestId} Error: ${message}`,
              coldStart,
            }),
          ms,
        );
      });
    const run = async (): Promise<InvokeOutcome> => {
      const ready = await Promise.race([
        environment.ready,
        deadline(
          INIT_LIMIT_MS + timeoutMs,
          `the initialization did not finish within ${INIT_LIMIT_MS / 1000} s + the function's timeout`,
        ),
      ]);
      if ('coldStart' in ready) return ready;
      if (!ready.ok) return { ...ready, coldStart };
      const answered = new Promise<InvokeOutcome>((resolve) => {
        const onMessage = (m: {
          kind: string;
          requestId?: string;
          payload?: unknown;
          errorType?: string;
          errorMessage?: string;
        }) => {
          if (m.requestId !== requestId) return;
          child.off('message', onMessage);
          child.off('exit', onExit);
          resolve(
            m.kind === 'result'
              ? { ok: true, payload: m.payload, coldStart }
              : { ok: false, errorType: m.errorType!, errorMessage: m.errorMessage!, coldStart },
          );
        };
        const onExit = (code: number | null, signal: string | null) => {
          child.off('message', onMessage);
          resolve({
            ok: false,
            errorType: 'Runtime.ExitError',
            errorMessage: `RequestId: ${requestId} Error: Runtime exited (${signal ?? `exit status ${code}`})`,
            coldStart,
          });
        };
        child.on('message', onMessage);
        child.once('exit', onExit);
        child.send({
          kind: 'invoke',
          requestId,
          event,
          timeoutMs,
          functionArn: `arn:aws:lambda:${this.o.region}:123456789012:function:${name}`,
        });
      });
      return Promise.race([
        answered,
        deadline(timeoutMs, `Task timed out after ${fn.config.timeoutS.toFixed(2)} seconds`),
      ]);
    };
    try {
      const outcome = await run();
      // Lambda starts a new environment after a failed load, a timeout or a death.
      if (!outcome.ok && (outcome.errorType === 'Sandbox.Timedout' || outcome.errorType.startsWith('Runtime.'))) {
        LambdaSandbox.stop(environment);
        fn.warm.splice(fn.warm.indexOf(environment), 1);
      }
      return outcome;
    } finally {
      clearTimeout(timer);
      environment.busy = false;
    }
  }

  /** Each function's invocations so far, by name. */
  invocations(): ReadonlyMap<string, FunctionInvocations> {
    return new Map(
      [...this.functions].map(([name, f]) => [
        name,
        { invocations: f.invocations, coldStarts: f.coldStarts, pids: [...f.pids] },
      ]),
    );
  }

  /** The pids of the environments still running. */
  pids(): number[] {
    return [...this.functions.values()].flatMap((f) =>
      f.warm.filter((e) => e.child.exitCode === null && e.child.signalCode === null).map((e) => e.child.pid!),
    );
  }

  /** Stops every environment and removes the sandbox's folder. */
  async dispose(): Promise<void> {
    const exits: Promise<unknown>[] = [];
    for (const fn of this.functions.values()) {
      for (const e of fn.warm) {
        if (e.child.exitCode === null && e.child.signalCode === null) {
          exits.push(new Promise((r) => e.child.once('exit', r)));
          LambdaSandbox.stop(e);
        }
      }
      fn.warm.length = 0;
    }
    await Promise.all(exits);
    this.unmount();
    removeTree(this.o.dir);
  }
}
