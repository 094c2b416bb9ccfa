/**
 * IAM in the rehearsal: every SDK call a bundle makes is authorized against its function's role in
 * the synthesized template (core/rehearsal/iam/). Every study's rehearsal runs with every call allowed
 * and each function's actions needed (test/helpers/iam-replay.ts, from test/helpers/study-rehearsals.ts);
 * here a one-cell experiment with one action taken out of CheckCellReady's role (which creates the
 * cluster once its parameter groups settled) fails as AWS would fail it, the error naming the
 * function, the action and the resource.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RehearsalOptions } from '../../core/rehearsal/run-rehearsal';
import { rehearsalFile, rehearse, wiring } from '../helpers/rehearsal-file';

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
