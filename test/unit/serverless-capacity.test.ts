/**
 * Aurora Serverless v2's capacity range by engine version (core/aurora/aurora-configurations.ts
 * SERVERLESS_V2_CAPACITY, sources cited there): the least minimum (0 with auto-pause, else 0.5) is
 * refused below it with the file, the JSON path and the fix; a maximum above the most the version is
 * known to take (128 before the 256-ACU versions) is warned about in the plan, and refused by the
 * AWS preflight from RDS's own DescribeDBEngineVersions ServerlessV2FeaturesSupport.
 */
import { SERVERLESS_V2_CAPACITY, serverlessCapacityLimits } from '../../core/aurora/aurora-configurations';
import { SpecError, validateSpec } from '../../core/experiment/validate';
import type { SpecInput } from '../../core/experiment/schema';
import { planRun } from '../../core/plan/plan';
import { refuseServerlessRanges } from '../../core/backends/aws/preflight';

function spec(
  variant: Record<string, unknown>,
  version: string,
  kind: 'aurora-mysql' | 'aurora-postgresql' = 'aurora-mysql',
): SpecInput {
  return {
    name: 'acu',
    engine: { kind, version },
    variants: [{ name: 'sls', instanceClass: 'db.serverless', ...variant }] as SpecInput['variants'],
    data: { tables: 1, tableSize: 1000 },
    workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1] }],
  };
}

describe('the capacity range table', () => {
  it.each([
    ['aurora-mysql', '3.02.0', 0.5, 128],
    ['aurora-mysql', '3.05.2', 0.5, 128],
    ['aurora-mysql', '3.06.0', 0.5, 256],
    ['aurora-mysql', '3.08.0', 0, 256],
    ['aurora-mysql', '8.0.mysql_aurora.3.10.4', 0, 256],
    ['aurora-postgresql', '13.6', 0.5, 128],
    ['aurora-postgresql', '13.13', 0.5, 256],
    ['aurora-postgresql', '14.12', 0, 256],
    ['aurora-postgresql', '16.2', 0.5, 256],
    ['aurora-postgresql', '16.3', 0, 256],
    ['aurora-postgresql', '17.4', 0, 256],
  ] as const)('%s %s takes %d to %d ACUs', (kind, version, min, max) => {
    const limits = serverlessCapacityLimits({ kind, version })!;
    expect([limits.min.acu, limits.max.acu]).toEqual([min, max]);
  });

  it('has no range for a version without Serverless v2', () => {
    expect(serverlessCapacityLimits({ kind: 'aurora-postgresql', version: '13.5' })).toBeUndefined();
    expect(serverlessCapacityLimits({ kind: 'aurora-mysql', version: '3.01.1' })).toBeUndefined();
  });

  it('cites a source for every line and says which are unconfirmed', () => {
    for (const line of SERVERLESS_V2_CAPACITY) {
      expect(line.source.length).toBeGreaterThan(20);
      if (!line.confirmed) expect(line.source).toMatch(/unconfirmed/);
    }
  });
});

describe('minAcu and maxAcu against the version', () => {
  it('refuses a minimum of 0 on Aurora PostgreSQL 16.2 with the file, the path and the fix', () => {
    let error: unknown;
    try {
      validateSpec(spec({ minAcu: 0, maxAcu: 8 }, '16.2', 'aurora-postgresql'), 'experiments/acu.json');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SpecError);
    expect((error as Error).message).toMatch(/^experiments\/acu\.json: invalid experiment spec/);
    expect((error as SpecError).problems).toEqual([
      {
        path: 'variants[0].minAcu',
        message: expect.stringMatching(
          new RegExp(
            /16\.3, 15\.7, 14\.12, 13\.15 .*but the version is 16\.2 \(engine\.version\): use minAcu/.source +
              / 0\.5 or more, or raise the engine version/.source,
          ),
        ),
      },
    ]);
  });

  it('warns in the plan of a maximum above 128 on a version before the 256-ACU line, naming it and the fix', () => {
    const plan = planRun(validateSpec(spec({ maxAcu: 200 }, '3.05.2'), 'acu.json'), {
      backend: 'aws',
      runId: 'r',
      now: new Date(0),
    });
    const note = plan.notes.find((n) => n.path === 'variants[0].maxAcu');
    expect(note).toMatchObject({
      level: 'warning',
      message: expect.stringMatching(
        new RegExp(
          /maxAcu 200 is above 128.*Aurora MySQL 3\.06\.0 or higher scale to 256/.source +
            / ACUs.*unconfirmed.*use maxAcu 128 or less, or raise engine\.version/.source,
        ),
      ),
    });
  });

  it('on a 256-ACU version only says the platform version must be recent too', () => {
    const plan = planRun(validateSpec(spec({ maxAcu: 200 }, '3.08.0'), 'acu.json'), {
      backend: 'aws',
      runId: 'r',
      now: new Date(0),
    });
    expect(plan.notes.find((n) => n.path === 'variants[0].maxAcu')?.message).toMatch(/recent platform version/);
  });
});

describe('the AWS preflight against RDS ServerlessV2FeaturesSupport', () => {
  it('refuses a range the engine version does not take, by path', () => {
    const refused: [string, string][] = [];
    const doc = validateSpec(spec({ minAcu: 0, maxAcu: 200 }, '3.08.0'), 'acu.json');
    refuseServerlessRanges(
      { refuse: (p, m) => refused.push([p, m]) },
      doc,
      () => true,
      { MaxCapacity: 128, MinCapacity: 0.5 },
      'aurora-mysql 3.08.0',
    );
    expect(refused).toEqual([
      [
        'variants[0].maxAcu',
        expect.stringMatching(/maxAcu 200 is above 128, the most aurora-mysql 3\.08\.0 takes .*use maxAcu 128 or less/),
      ],
      ['variants[0].minAcu', expect.stringMatching(/minAcu 0 is below 0\.5, .*use minAcu 0\.5 or more/)],
    ]);
  });

  it('accepts what RDS takes and checks nothing without its answer', () => {
    const refused: string[] = [];
    const doc = validateSpec(spec({ minAcu: 0, maxAcu: 200 }, '3.08.0'), 'acu.json');
    refuseServerlessRanges(
      { refuse: (p) => refused.push(p) },
      doc,
      () => true,
      { MaxCapacity: 256, MinCapacity: 0 },
      'v',
    );
    refuseServerlessRanges({ refuse: (p) => refused.push(p) }, doc, () => true, undefined, 'v');
    expect(refused).toEqual([]);
  });
});
