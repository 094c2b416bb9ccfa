/**
 * A snapshot of the whole template: any change to the infrastructure shows up in review. Asset
 * hashes are blanked, and so is content owned by other files that their own tests cover (the ASL
 * text, the nightly experiment, the view SQL, the lake columns), so the snapshot moves only when
 * the stack itself changes. Update with `npx jest test/cdk/snapshot.test.ts -u` and review the diff.
 */
import { nightlyOnConfig, synthTestApp } from './cdk-fixture';

/** Replace 64-hex asset hashes and other-owned content with markers, recursively. */
function blank(value: unknown, key = ''): unknown {
  if (key === 'DefinitionString') return '<definition: test/cdk/asl-definition.test.ts>';
  if (key === 'QueryString') return '<view sql: core/lake/sql>';
  if (key === 'Columns') return '<columns: core/lake/schema.ts>';
  if (key === 'Input' && JSON.stringify(value).includes('spec')) {
    // The experiment is nightly-regression.json's (test/cdk/stack.test.ts); the tokens embedded in it are the stack's.
    const tokens = JSON.stringify(value).match(/\{"Ref":"[^"]+"\}/g) ?? [];
    return `<nightly experiment${tokens.length > 0 ? ` with ${tokens.join(', ')}` : ''}>`;
  }
  if (typeof value === 'string') return value.replace(/[0-9a-f]{64}/g, '<asset-hash>');
  if (Array.isArray(value)) return value.map((v) => blank(v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, blank(v, k)]));
  }
  return value;
}

test('the synthesized template matches the reviewed snapshot', () => {
  const t = synthTestApp(nightlyOnConfig());
  try {
    expect(blank(t.template.toJSON())).toMatchSnapshot();
  } finally {
    t.dispose();
  }
});

test('blanking only touches hashes and other-owned content', () => {
  const hash = 'a'.repeat(64);
  expect(blank({ S3Key: `${hash}.zip`, Name: 'keep', DefinitionString: 'x', Nested: [{ Columns: [1] }] })).toEqual({
    S3Key: '<asset-hash>.zip',
    Name: 'keep',
    DefinitionString: '<definition: test/cdk/asl-definition.test.ts>',
    Nested: [{ Columns: '<columns: core/lake/schema.ts>' }],
  });
});
