/**
 * A plan made without its backend at hand (the CLI's preview, the cost estimate) assumes the write
 * forwarding the backend kind's implementation declares (core/plan/plan.ts DECLARED_WRITE_FORWARDING):
 * it must be what the local backend and the AWS backend really declare (Backend.writeForwarding),
 * which the workflow's PlanRun passes through PlanOptions.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeAwsBackend } from '../../core/backends/aws/parts/compose';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { LocalBackend } from '../../core/backends/local/local-backend';
import { DECLARED_WRITE_FORWARDING } from '../../core/plan/plan';

describe('the write forwarding a plan assumes per backend kind', () => {
  it("is each backend's own declaration", () => {
    // Arrange
    const local = new LocalBackend({
      lakeDir: join(tmpdir(), 'ab-wf-declared-lake'),
      repoRoot: join(__dirname, '..', '..'),
    });
    const aws = composeAwsBackend(
      { metricsPublishDelayS: 0 },
      new S3LakeStore(new S3Client({ region: 'us-east-1' }), 'bucket', 'lake/'),
      {},
      'test',
    );
    // Act / Assert
    expect({ [local.kind]: local.writeForwarding, [aws.kind]: aws.writeForwarding }).toEqual(DECLARED_WRITE_FORWARDING);
  });
});
