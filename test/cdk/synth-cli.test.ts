/**
 * The real thing, offline: `npx cdk synth` as a child process with no AWS credentials or region in
 * its environment (Lambda bundling included, with the local esbuild), then cfn-lint on the output
 * (scripts/cfn-lint.sh) and asl-validator on the state machine of the written template.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import aslValidator from 'asl-validator';
import { TASK_NAMES } from '../../core/workflow/task-names';
import { PROJECT_ROOT } from './cdk-fixture';

/** The environment without anything AWS: no credentials, profile, region or endpoint. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('CDK_')),
  );
  // Never wait for an instance metadata endpoint while looking for (absent) credentials.
  return { ...env, AWS_EC2_METADATA_DISABLED: 'true', CI: 'true' };
}

let outdir: string;
let synth: ReturnType<typeof spawnSync>;
beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'aurora-bench-synth-'));
  synth = spawnSync('npx', ['cdk', 'synth', '--quiet', '--no-notices', '--output', outdir], {
    cwd: PROJECT_ROOT,
    env: offlineEnv(),
    encoding: 'utf8',
    timeout: 540_000,
  });
}, 600_000);
afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

function template(): {
  Resources: Record<string, { Type: string; Properties: Record<string, any>; Metadata?: Record<string, string> }>;
} {
  return JSON.parse(readFileSync(join(outdir, 'AuroraBench.template.json'), 'utf8'));
}

test('npx cdk synth succeeds without credentials, with cdk-nag on and every Lambda bundled', () => {
  expect({ status: synth.status, stderr: synth.status === 0 ? '' : String(synth.stderr).slice(-4000) }).toEqual({
    status: 0,
    stderr: '',
  });

  const functions = Object.values(template().Resources).filter(
    (r) => r.Type === 'AWS::Lambda::Function' && r.Properties['Runtime'] === 'nodejs22.x',
  );
  // One per Task of the workflow, plus the sweeper.
  expect(functions.length).toBe(TASK_NAMES.length + 1);
  for (const fn of functions) {
    const assetPath = fn.Metadata?.['aws:asset:path'];
    expect(assetPath).toBeDefined();
    expect(existsSync(join(outdir, assetPath!, 'index.js'))).toBe(true);
  }
});

test('cfn-lint finds no errors in the synthesized template', () => {
  const lint = spawnSync('bash', [join(PROJECT_ROOT, 'scripts', 'cfn-lint.sh'), outdir], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    timeout: 540_000,
  });

  expect({ status: lint.status, output: lint.status === 0 ? '' : `${lint.stdout}\n${lint.stderr}` }).toEqual({
    status: 0,
    output: '',
  });
  expect(lint.stdout).toMatch(/cfn-lint: no errors/);
}, 600_000);

test('the written state machine definition passes asl-validator', () => {
  const sm = Object.values(template().Resources).find((r) => r.Type === 'AWS::StepFunctions::StateMachine')!;
  const [sep, parts] = sm.Properties['DefinitionString']['Fn::Join'] as [string, unknown[]];
  const text = parts
    .map((p) =>
      typeof p === 'string'
        ? p
        : `arn:aws:lambda:eu-central-1:123456789012:function:${(p as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]}`,
    )
    .join(sep);

  const result = aslValidator(JSON.parse(text));

  expect(result.errorsText('\n')).toBe('');
  expect(result.isValid).toBe(true);
});

test("the synthesis's validation report (the CDK's built-in CloudFormation rules, cdk-nag) has no finding", () => {
  // aws-cdk-lib writes validation-report.json with one entry per plugin that found a violation or had a
  // suppression (core/lib/validation/private/report: buildPluginReports); the CloudFormation rules
  // run by default (App's builtinCloudFormationValidation), and the test fixtures leave them out.
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: { pluginName: string; violations: { ruleName: string; description: string }[] }[];
  };

  expect(
    report.pluginReports.flatMap((r) => r.violations.map((v) => `${r.pluginName} ${v.ruleName}: ${v.description}`)),
  ).toEqual([]);
  expect(report.pluginReports).toEqual([]);
});
