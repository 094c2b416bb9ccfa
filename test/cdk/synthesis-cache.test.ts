/**
 * The synthesis cache of `run --aws-rehearsal` (lib/synthesized-workflow.ts synthesizeWorkflowCached):
 * a second process reuses the first one's synthesis, and anything the synthesis depends on gives
 * another cache entry.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthesisDigest, synthesizeWorkflowCached } from '../../lib/synthesized-workflow';
import { PROJECT_ROOT } from './cdk-fixture';

describe('synthesizeWorkflowCached', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'ab-synth-cache-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('synthesizes once into the cache, then answers from it', () => {
    // Arrange
    const cacheDir = join(work, 'cache');
    const options = { projectRoot: PROJECT_ROOT, region: 'eu-west-1' };

    // Act
    const first = synthesizeWorkflowCached(options, cacheDir);
    const entries = readdirSync(cacheDir);
    // What the next process reads: marked, so the answer can only have come from the file.
    const file = join(cacheDir, entries[0]!);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { definition: Record<string, unknown>; taskByArn: [string, string][] };
    writeFileSync(file, JSON.stringify({ ...stored, definition: { ...stored.definition, Comment: 'read from the cache' } }));
    const second = synthesizeWorkflowCached(options, cacheDir);

    // Assert
    expect(entries).toEqual([`workflow-${synthesisDigest(options)}.json`]);
    expect(first.definition['States']).toBeDefined();
    expect([...first.taskByArn.keys()].every((arn) => arn.startsWith('arn:aws:lambda:eu-west-1:'))).toBe(true);
    expect(second.definition['Comment']).toBe('read from the cache');
    expect([...second.taskByArn]).toEqual([...first.taskByArn]);
  });

  it('keys the entry on the region, the account and the checkout the synthesis reads', () => {
    // Arrange: a checkout whose state machine differs from the repository's by one byte.
    const checkout = join(work, 'checkout');
    cpSync(join(PROJECT_ROOT, 'cdk.json'), join(checkout, 'cdk.json'));
    cpSync(join(PROJECT_ROOT, 'state-machines'), join(checkout, 'state-machines'), { recursive: true });
    const base = { projectRoot: checkout, region: 'eu-west-1' };
    const before = synthesisDigest(base);
    const asl = join(checkout, 'state-machines', 'benchmark.asl.json');

    // Act
    writeFileSync(asl, `${readFileSync(asl, 'utf8')} `);
    const afterEdit = synthesisDigest(base);

    // Assert
    expect(synthesisDigest({ ...base, region: 'us-east-1' })).not.toBe(before);
    expect(synthesisDigest({ ...base, account: '210987654321' })).not.toBe(before);
    expect(afterEdit).not.toBe(before);
    expect(synthesisDigest(base)).toBe(afterEdit);
  });
});
