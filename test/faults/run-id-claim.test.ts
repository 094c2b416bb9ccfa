/**
 * Two runs with one --run-id into one lake from two run roots, started at once, through the built
 * CLI on real MariaDB servers and the real sysbench: the run roots' registries cannot see each
 * other, so only the lake's claim of the id (LakeStore.createOnce) keeps them apart. Exactly one
 * runs; the other is refused before anything of it starts, in one line naming the id.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_SPEC, CLI, FaultWorld } from '../helpers/fault-cli';

let world: FaultWorld;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
beforeEach(() => {
  world = new FaultWorld('ab-faults-claim-');
});
afterEach(() => {
  world.tearDown();
  rmSync(world.work, { recursive: true, force: true });
});

it('runs one of two runs with one id from two run roots; the other is refused in one line naming it', async () => {
  // Arrange
  const spec = world.writeSpec('same.json', { ...BASE_SPEC, defaults: { ...BASE_SPEC.defaults, durationS: 1 } });
  const otherRoot = join(world.work, 'runs-other');

  // Act
  const runs = [
    world.background(['run', spec, '--run-id', 'same-1']),
    world.background(['run', spec, '--run-id', 'same-1'], { AURORA_BENCH_RUN_ROOT: otherRoot }),
  ];
  const ended = await Promise.all(runs.map((r) => r.exited));

  // Assert: one ran to the end, the other said why it did not start
  const codes = ended.map((e) => e.code);
  expect([...codes].sort()).toEqual([0, 1]);
  const refused = runs[codes.indexOf(1)]!.output();
  const ran = runs[codes.indexOf(0)]!.output();
  expect(ran.stdout).toMatch(/SUCCEEDED|succeeded/);
  expect(refused.stderr.trim().split('\n')).toEqual([
    expect.stringMatching(/run id "same-1" (is already claimed in|already has results in) file:\/\//),
  ]);
  expect(refused.stdout).not.toMatch(/step|provision/i);
  expect(world.lakeQuery('select run_id, status from runs')).toEqual([{ run_id: 'same-1', status: 'succeeded' }]);
  expect(world.lakeQuery('select count(*)::int as n from steps')).toEqual([{ n: 1 }]);
  await world.expectNothingLeft([]);
  expect(existsSync(otherRoot) ? readdirSync(otherRoot) : []).toEqual([]);
}, 120_000);
