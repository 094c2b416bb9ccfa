/**
 * The sandbox the bundle test and `run --aws-rehearsal` run the deployed functions in
 * (core/rehearsal/lambda-sandbox.ts) gives a function what Lambda gives and nothing more: checked
 * with a hand-written asset that reports what it can reach.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthesisCacheDir } from '../../bin/aws-rehearsal';
import { lambdaNode, lambdaRuntimeOf } from '../../core/rehearsal/lambda-node';
import { LambdaSandbox, lambdaRuntimeModules, type InvokeOutcome } from '../../core/rehearsal/lambda-sandbox';
import { PROJECT_ROOT } from '../cdk/cdk-fixture';

const PROBE = `
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const tryRequire = (name) => { try { require(name); return 'loaded'; } catch (e) { return e.code; } };
const tryWrite = (dir) => {
  try { fs.writeFileSync(path.join(dir, 'probe.txt'), 'x'); return 'written'; } catch (e) { return e.code; }
};
exports.handler = async (event) => {
  if (event.sleepMs) await new Promise((r) => setTimeout(r, event.sleepMs));
  if (event.fail) { const e = new Error('the probe was asked to fail'); e.name = 'ProbeError'; throw e; }
  return {
    sdk: tryRequire('@aws-sdk/client-s3'),
    duckdb: tryRequire('@duckdb/node-api'),
    jsoncParser: tryRequire('jsonc-parser'),
    ownFolder: tryWrite(__dirname),
    tmp: tryWrite(os.tmpdir()),
    execArgv: process.execArgv,
    node: process.versions.node,
    executionEnv: process.env.AWS_EXECUTION_ENV,
    variable: process.env.PROBE_VARIABLE,
    pid: process.pid,
  };
};
`;

/** The stack's functions' runtime (lib/workflow.ts; test/bundles/bundles-load.test.ts checks the template). */
const RUNTIME = 'nodejs22.x';

let work: string;
let sandbox: LambdaSandbox;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'ab-sandbox-'));
  const asset = join(work, 'asset');
  mkdirSync(asset);
  writeFileSync(join(asset, 'index.js'), PROBE);
  sandbox = new LambdaSandbox({
    dir: mkdtempSync(join(tmpdir(), 'ab-sandbox-run-')),
    runtimeModules: lambdaRuntimeModules(join(PROJECT_ROOT, 'node_modules'), synthesisCacheDir()),
    node: lambdaNode(PROJECT_ROOT),
    region: 'eu-west-1',
  });
  sandbox.add({
    name: 'Probe',
    assetDir: asset,
    handler: 'index.handler',
    runtime: RUNTIME,
    environment: { PROBE_VARIABLE: 'from the template' },
    memoryMb: 512,
    timeoutS: 2,
  });
  sandbox.add({
    name: 'Missing',
    assetDir: asset,
    handler: 'index.missing',
    runtime: RUNTIME,
    environment: {},
    memoryMb: 128,
    timeoutS: 2,
  });
}, 120_000);
afterAll(async () => {
  await (sandbox as LambdaSandbox | undefined)?.dispose();
  rmSync(work, { recursive: true, force: true });
});

const payload = (o: InvokeOutcome) => (o.ok ? o.payload : o) as Record<string, unknown>;

test(
  "only the runtime's packages resolve; the code is read-only, its temporary folder writable; the " +
    "template's variables and memory apply",
  async () => {
    const outcome = await sandbox.invoke('Probe', {});

    expect(payload(outcome)).toMatchObject({
      sdk: 'loaded',
      duckdb: 'MODULE_NOT_FOUND',
      jsoncParser: 'MODULE_NOT_FOUND',
      ownFolder: expect.stringMatching(/^(EACCES|EROFS|EPERM)$/),
      tmp: 'written',
      variable: 'from the template',
      // 512 MB: new space 51, semi space 25, old space 461 (the runtime bootstrap's arithmetic).
      execArgv: expect.arrayContaining(['--max-old-space-size=461', '--max-semi-space-size=25']),
      executionEnv: 'AWS_Lambda_nodejs22.x',
    });
    expect(outcome.coldStart).toBe(true);
  },
);

test("a function runs on its runtime's Node.js major, whatever Node.js runs the sandbox", async () => {
  const outcome = await sandbox.invoke('Probe', {});

  expect(lambdaRuntimeOf(Number(String(payload(outcome)['node']).split('.')[0]))).toBe(RUNTIME);
});

test('a bundle for another Node.js major is refused, naming the function, its runtime and the Node.js', () => {
  const other = lambdaRuntimeOf(sandbox.node.major + 2);

  const add = () =>
    sandbox.add({
      name: 'OtherMajor',
      assetDir: join(work, 'asset'),
      handler: 'index.handler',
      runtime: other,
      environment: {},
      memoryMb: 128,
      timeoutS: 2,
    });

  expect(add).toThrow(`function OtherMajor deploys on ${other}, but the sandbox's Node.js is v${sandbox.node.version}`);
});

test("an environment is reused while warm; the function's own error comes back with its name", async () => {
  const first = await sandbox.invoke('Probe', {});
  const failed = await sandbox.invoke('Probe', { fail: true });
  const third = await sandbox.invoke('Probe', {});

  expect(failed).toMatchObject({
    ok: false,
    errorType: 'ProbeError',
    errorMessage: 'the probe was asked to fail',
    coldStart: false,
  });
  expect(payload(third)['pid']).toBe(payload(first)['pid']);
  expect(third.coldStart).toBe(false);
});

test('past its timeout an invocation ends as Sandbox.Timedout, its environment gone: next call is cold', async () => {
  const warm = await sandbox.invoke('Probe', {});

  const timedOut = await sandbox.invoke('Probe', { sleepMs: 10_000 });
  const next = await sandbox.invoke('Probe', {});

  expect(timedOut).toMatchObject({
    ok: false,
    errorType: 'Sandbox.Timedout',
    errorMessage: expect.stringMatching(/Task timed out after 2\.00 seconds/),
  });
  expect(next.coldStart).toBe(true);
  expect(payload(next)['pid']).not.toBe(payload(warm)['pid']);
  expect(sandbox.pids()).not.toContain(payload(warm)['pid']);
}, 30_000);

test('a handler the module does not export is Runtime.HandlerNotFound', async () => {
  expect(await sandbox.invoke('Missing', {})).toMatchObject({ ok: false, errorType: 'Runtime.HandlerNotFound' });
});
