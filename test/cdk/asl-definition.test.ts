/**
 * The inlined state machine definition: placeholder substitution fails loudly, and the definition
 * extracted from the synthesized template (Fn::Join resolved with fake ARNs) passes asl-validator.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import aslValidator from 'asl-validator';
import { placeholderFor, TASK_NAMES } from '../../core/workflow/task-names';
import { MAX_TTL_HOURS } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import {
  AslDefinitionError,
  escapeLiteralDollarBraces,
  executionTimeoutSeconds,
  MAX_STANDARD_EXECUTION_SECONDS,
  readAslFile,
  substitutePlaceholders,
  taskPlaceholderValues,
} from '../../core/workflow/asl';
import { PROJECT_ROOT, repoContextConfig, resourcesOf, synthTestApp } from './cdk-fixture';

const FAKE_ARN = (name: string) => `arn:aws:lambda:eu-central-1:123456789012:function:${name}`;

/** Resolve the DefinitionString's Fn::Join: GetAtt <fn>.Arn -> a fake ARN, nothing else allowed. */
function resolveDefinition(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) throw new Error(`unexpected DefinitionString ${JSON.stringify(value).slice(0, 200)}`);
  return join[1]
    .map((part) => {
      if (typeof part === 'string') return part;
      const getAtt = (part as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
      if (getAtt && getAtt[1] === 'Arn') return FAKE_ARN(getAtt[0]);
      throw new Error(`unexpected part of DefinitionString: ${JSON.stringify(part)}`);
    })
    .join(join[0]);
}

describe('substitutePlaceholders', () => {
  const values = taskPlaceholderValues((task) => FAKE_ARN(task));
  const definitionWith = (placeholders: string[]) =>
    JSON.stringify({
      StartAt: 'A',
      States: Object.fromEntries(
        placeholders.map((p, i) => [`S${i}`, { Type: 'Task', Resource: '${' + p + '}', End: true }]),
      ),
    });

  test('replaces every Task placeholder with its value', () => {
    const all = TASK_NAMES.map(placeholderFor);

    const out = substitutePlaceholders(definitionWith(all), values, 'test.asl.json');

    for (const task of TASK_NAMES) expect(out).toContain(FAKE_ARN(task));
    expect(out).not.toContain('${');
  });

  test('fails naming a placeholder no function provides', () => {
    const defs = definitionWith([...TASK_NAMES.map(placeholderFor), 'UnknownFunctionArn']);

    expect(() => substitutePlaceholders(defs, values, 'test.asl.json')).toThrow(
      /\$\{UnknownFunctionArn\} would be left unsubstituted/,
    );
  });

  test('fails naming a function the definition never references', () => {
    const defs = definitionWith(TASK_NAMES.filter((t) => t !== 'finish-run').map(placeholderFor));

    expect(() => substitutePlaceholders(defs, values, 'test.asl.json')).toThrow(AslDefinitionError);
    expect(() => substitutePlaceholders(defs, values, 'test.asl.json')).toThrow(
      /no placeholder for \$\{FinishRunFunctionArn\}/,
    );
  });

  test('escapes text that only looks like a placeholder, keeping the parsed JSON identical', () => {
    const text = JSON.stringify({
      Comment: 'CDK substitutes the ${...FunctionArn} placeholders',
      Resource: '${PlanRunFunctionArn}',
    });

    const escaped = escapeLiteralDollarBraces(text);

    expect(escaped).not.toContain('${...');
    expect(escaped).toContain('${PlanRunFunctionArn}');
    expect(JSON.parse(escaped)).toEqual(JSON.parse(text));
  });

  test('a definition file that is not JSON fails synth with its path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aurora-bench-asl-'));
    try {
      writeFileSync(join(dir, 'broken.asl.json'), '{ "StartAt": ');
      expect(() => readAslFile(join(dir, 'broken.asl.json'))).toThrow(/broken\.asl\.json is not valid JSON/);
      expect(() => readAslFile(join(dir, 'missing.asl.json'))).toThrow(/missing\.asl\.json/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the synthesized state machine', () => {
  test('is state-machines/benchmark.asl.json with the function ARNs, and passes asl-validator', () => {
    const t = synthTestApp(repoContextConfig());
    try {
      const [, sm] = resourcesOf(t.template, 'AWS::StepFunctions::StateMachine')[0]!;

      const definition = JSON.parse(resolveDefinition(sm.Properties['DefinitionString']));
      // asl-validator fills in defaults (QueryLanguage) on the object it is given: hand it a copy.
      const { isValid, errorsText } = aslValidator(structuredClone(definition));

      expect(errorsText('\n')).toBe('');
      expect(isValid).toBe(true);
      const source = JSON.parse(readFileSync(join(PROJECT_ROOT, 'state-machines', 'benchmark.asl.json'), 'utf8'));
      const placeholdersBack = JSON.stringify(definition).replace(
        /arn:aws:lambda:eu-central-1:123456789012:function:WorkflowTask([a-z]+)Function[0-9A-F]{8}/g,
        (_m, id: string) => {
          const task = TASK_NAMES.find((n) => n.replace(/-/g, '') === id)!;
          return '${' + placeholderFor(task) + '}';
        },
      );
      expect(JSON.parse(placeholdersBack)).toEqual(source);
    } finally {
      t.dispose();
    }
  });

  test(
    'has a top-level TimeoutSeconds of the largest ttlHours a spec may ask for, within a Standard ' + "workflow's year",
    () => {
      // Arrange
      const t = synthTestApp(repoContextConfig());
      try {
        const [, sm] = resourcesOf(t.template, 'AWS::StepFunctions::StateMachine')[0]!;

        // Act
        const definition = JSON.parse(resolveDefinition(sm.Properties['DefinitionString'])) as {
          TimeoutSeconds?: number;
        };

        // Assert: the synthesized definition carries it (CDK's `timeout` would not, for a text definition).
        expect(definition.TimeoutSeconds).toBe(MAX_TTL_HOURS * 3600);
        expect(t.stack.workflow.executionTimeoutSeconds).toBe(MAX_TTL_HOURS * 3600);
        expect(definition.TimeoutSeconds).toBeLessThanOrEqual(MAX_STANDARD_EXECUTION_SECONDS);
        // MAX_TTL_HOURS is the schema's limit, not a copy of it.
        const spec = {
          name: 'x',
          engine: { version: '3.04.0' },
          variants: [{ name: 'v', instanceClass: 'db.r6g.large' }],
          data: { tables: 1, tableSize: 10 },
          workloads: [{ name: 'w', test: 'oltp_read_only', threads: [1] }],
        };
        expect(validateSpec({ ...spec, ttlHours: MAX_TTL_HOURS }).ttlHours).toBe(MAX_TTL_HOURS);
        expect(() => validateSpec({ ...spec, ttlHours: MAX_TTL_HOURS + 1 }, 'spec.json')).toThrow(/ttlHours/);
      } finally {
        t.dispose();
      }
    },
  );

  test('synth refuses a definition without TimeoutSeconds or with unreachable states, naming the file', () => {
    const source = readFileSync(join(PROJECT_ROOT, 'state-machines', 'benchmark.asl.json'), 'utf8');
    const { TimeoutSeconds: _dropped, ...withoutTimeout } = JSON.parse(source) as Record<string, unknown>;

    expect(() => executionTimeoutSeconds(JSON.stringify(withoutTimeout), 'state-machines/benchmark.asl.json')).toThrow(
      /state-machines\/benchmark\.asl\.json: no top-level TimeoutSeconds/,
    );
    expect(() =>
      executionTimeoutSeconds(
        JSON.stringify({ ...withoutTimeout, TimeoutSeconds: MAX_STANDARD_EXECUTION_SECONDS + 1 }),
        'x.asl.json',
      ),
    ).toThrow(/x\.asl\.json: TimeoutSeconds must be a whole number of seconds from 1 to 31536000/);
    expect(() =>
      executionTimeoutSeconds(JSON.stringify({ ...withoutTimeout, TimeoutSeconds: 1.5 }), 'x.asl.json'),
    ).toThrow(AslDefinitionError);
  });

  test("synth fails clearly when the definition lacks a function's placeholder", () => {
    const dir = mkdtempSync(join(PROJECT_ROOT, 'test-output-asl-'));
    try {
      const source = readFileSync(join(PROJECT_ROOT, 'state-machines', 'benchmark.asl.json'), 'utf8');
      writeFileSync(
        join(dir, 'benchmark.asl.json'),
        source.split('${FinishRunFunctionArn}').join('arn:aws:lambda:eu-central-1:123456789012:function:x'),
      );

      expect(() =>
        synthTestApp(repoContextConfig(), {
          definitionFile: join(dir.slice(PROJECT_ROOT.length + 1), 'benchmark.asl.json'),
        }),
      ).toThrow(/no placeholder for \$\{FinishRunFunctionArn\}/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
