/**
 * cdk-nag AwsSolutions: no unacknowledged finding, and every acknowledgement says why.
 * cdk-nag 3 is a CDK validation plugin (it reports through the synthesis validation report, not
 * Annotations): the app fails to synthesize with a finding, and validateScope returns them.
 */
import { Validations } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { nightlyOnConfig, synthTestApp, type TestApp } from './cdk-fixture';

let t: TestApp;
beforeAll(() => {
  t = synthTestApp(nightlyOnConfig());
});
afterAll(() => t.dispose());

describe('cdk-nag AwsSolutions', () => {
  test('reports no unacknowledged finding', () => {
    const report = new AwsSolutionsChecks().validateScope(t.app);

    const findings = report.violations.map(
      (v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
    );
    expect(findings).toEqual([]);
    expect(report.success).toBe(true);
  });

  test('every acknowledgement carries a reason of at least a sentence', () => {
    const acknowledged = t.app.node
      .findAll()
      .flatMap((c) =>
        c.node.metadata
          .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
          .map((m) => ({ path: c.node.path, data: m.data as Record<string, string> })),
      );

    expect(acknowledged.length).toBeGreaterThan(0);
    for (const { path, data } of acknowledged) {
      for (const [id, reason] of Object.entries(data)) {
        expect({ path, id, reason: reason.length >= 30 }).toEqual({ path, id, reason: true });
      }
    }
  });

  test('a finding without acknowledgement is reported (the check can fail)', () => {
    const fresh = synthTestApp(nightlyOnConfig());
    try {
      // A plain bucket (no access logs, no TLS-only policy) next to the stack's own resources.
      new s3.Bucket(fresh.stack, 'UnreviewedBucket');

      const report = new AwsSolutionsChecks().validateScope(fresh.app);

      expect(report.violations.map((v) => v.ruleName)).toEqual(
        expect.arrayContaining(['AwsSolutions-S1', 'AwsSolutions-S10']),
      );
      expect(
        report.violations
          .flatMap((v) => v.violatingResources.map((r) => r.constructPath))
          .every((p) => p?.includes('UnreviewedBucket')),
      ).toBe(true);
    } finally {
      fresh.dispose();
    }
  });
});
