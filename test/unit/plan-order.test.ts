/**
 * The spec's order beyond interleaved: randomized (each round shuffled with a recorded seed) and
 * duet (a round's variants run together as one workflow item), and the refusals that name the file
 * and the JSON path.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { estimate, orderCells, planRun, PlanError } from '../../core/plan/plan';
import { preparePlan } from '../../core/plan/prepare';
import { loadSpecFile, SpecError, validateSpec } from '../../core/experiment/validate';
import type { SpecInput } from '../../core/experiment/schema';

const NOW = new Date('2026-11-23T01:00:00Z');
const BUILTIN = join(__dirname, '..', '..', 'client', 'workloads');

function specInput(over: Partial<SpecInput> = {}): SpecInput {
  return {
    name: 'order-test',
    engine: { version: '3.04.0' },
    variants: [
      { name: 'a', instanceClass: 'db.r6g.large' },
      { name: 'b', instanceClass: 'db.r7g.large' },
      { name: 'c', instanceClass: 'db.r6i.large' },
    ],
    data: { tables: 1, tableSize: 1000 },
    defaults: { durationS: 20, warmupS: 0 },
    workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1, 4] }],
    repeats: 6,
    ...over,
  };
}

const written: string[] = [];
afterAll(() => written.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function writeSpec(doc: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'ab-order-'));
  written.push(dir);
  const file = join(dir, 'exp.json');
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

describe('order "randomized"', () => {
  it('runs every variant once per round, in an order the seed decides and repeats', () => {
    // Act
    const first = orderCells(3, 6, 'randomized', 42);
    const again = orderCells(3, 6, 'randomized', 42);
    const other = orderCells(3, 6, 'randomized', 43);
    // Assert
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    for (let r = 1; r <= 6; r++) {
      expect(
        first
          .filter((c) => c.repeat === r)
          .map((c) => c.variantIndex)
          .sort(),
      ).toEqual([0, 1, 2]);
    }
    // Shuffled, not rotated: the rounds do not all start with the same variant, nor follow the interleaved rotation.
    const rounds = [1, 2, 3, 4, 5, 6].map((r) => first.filter((c) => c.repeat === r).map((c) => c.variantIndex));
    expect(new Set(rounds.map((round) => round.join(''))).size).toBeGreaterThan(1);
    expect(first).not.toEqual(orderCells(3, 6, 'interleaved'));
  });

  it('records the seed in the plan and its note, and draws one when the spec has none', () => {
    // Act
    const seeded = planRun(validateSpec(specInput({ order: 'randomized', orderSeed: 7 })), {
      backend: 'local',
      now: NOW,
    });
    const drawn = preparePlan(
      { spec: validateSpec(specInput({ order: 'randomized' })), scripts: {} },
      { backend: 'local', now: NOW },
    );
    // Assert
    expect(seeded.order).toBe('randomized');
    expect(seeded.orderSeed).toBe(7);
    expect(seeded.cells.map((c) => c.cellId)).toEqual(
      orderCells(3, 6, 'randomized', 7).map((c) => `${'abc'[c.variantIndex]}-r${c.repeat}`),
    );
    expect(seeded.notes.find((n) => n.path === 'order')?.message).toMatch(/seed 7;.*"orderSeed": 7/);
    expect(typeof drawn.plan.orderSeed).toBe('number');
    expect(drawn.spec.orderSeed).toBe(drawn.plan.orderSeed);
    expect(drawn.preparationNotes).toEqual([
      expect.objectContaining({
        level: 'info',
        path: 'orderSeed',
        message: expect.stringContaining(`drawn: ${drawn.plan.orderSeed}`),
      }),
    ]);
    // The spec the run starts with plans the same order again (what the workflow's PlanRun does).
    const replanned = planRun(validateSpec(JSON.parse(JSON.stringify(drawn.spec))), { backend: 'local', now: NOW });
    expect(replanned.cells.map((c) => c.cellId)).toEqual(drawn.plan.cells.map((c) => c.cellId));
  });

  it('refuses orderSeed with another order, naming the file and the JSON path', () => {
    // Arrange
    const file = writeSpec(specInput({ order: 'interleaved', orderSeed: 3 }));
    // Act
    const act = () => loadSpecFile(file, BUILTIN);
    // Assert
    expect(act).toThrow(SpecError);
    expect(act).toThrow(
      new RegExp(
        `${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: invalid experiment spec\\n  - orderSeed: orderSeed ` +
          `seeds the shuffle of order "randomized"`,
      ),
    );
  });
});

describe('order "duet"', () => {
  it('groups each round into one duet whose members run the same steps, and estimates them as running together', () => {
    // Act
    const duet = planRun(validateSpec(specInput({ order: 'duet', repeats: 2 })), { backend: 'local', now: NOW });
    const interleaved = planRun(validateSpec(specInput({ repeats: 2 })), { backend: 'local', now: NOW });
    // Assert
    expect(duet.order).toBe('duet');
    expect(duet.duets).toEqual([
      { cellId: 'r1-duet', index: 0, repeat: 1, members: ['a-r1', 'b-r1', 'c-r1'], stepCount: 2 },
      { cellId: 'r2-duet', index: 1, repeat: 2, members: ['a-r2', 'b-r2', 'c-r2'], stepCount: 2 },
    ]);
    expect(duet.cells.map((c) => [c.cellId, c.duet])).toEqual([
      ['a-r1', 'r1-duet'],
      ['b-r1', 'r1-duet'],
      ['c-r1', 'r1-duet'],
      ['a-r2', 'r2-duet'],
      ['b-r2', 'r2-duet'],
      ['c-r2', 'r2-duet'],
    ]);
    expect(interleaved.duets).toBeUndefined();
    expect(interleaved.cells.every((c) => c.duet === undefined)).toBe(true);
    // Three variants at once: a third of the one-at-a-time wall time (same steps, same provisioning per item count).
    expect(duet.estimate.stepTimeS).toBe(interleaved.estimate.stepTimeS);
    expect(estimate(duet.cells, 'local', 1).wallTimeS).toBe(
      2 * (duet.estimate.stepTimeS / 6 + duet.estimate.provisionS),
    );
    expect(interleaved.estimate.wallTimeS).toBe(
      6 * (interleaved.estimate.stepTimeS / 6 + interleaved.estimate.provisionS),
    );
    expect(duet.notes.find((n) => n.path === 'order')?.message).toMatch(
      /provisioned together and every step starts on all of them at once/,
    );
  });

  it('refuses a duet of one variant, naming the file and the JSON path', () => {
    // Arrange
    const file = writeSpec(specInput({ order: 'duet', variants: [{ name: 'a', instanceClass: 'db.r6g.large' }] }));
    // Act
    const act = () => loadSpecFile(file, BUILTIN);
    // Assert
    expect(act).toThrow(SpecError);
    expect(act).toThrow(
      new RegExp(
        /exp\.json: invalid experiment spec\n {2}- order: order "duet" .* needs at least 2 variants/.source +
          / \(this experiment has 1\)/.source,
      ),
    );
  });

  it('refuses a duet whose round keeps one variant on the backend (a local-only what-if on AWS)', () => {
    // Arrange: variant b exists only locally, so an AWS round would have "a" alone.
    const spec = validateSpec(
      specInput({
        order: 'duet',
        variants: [
          { name: 'a', instanceClass: 'db.r6g.large' },
          { name: 'b', instanceClass: 'db.r6g.large', localOnlyParameters: { thread_handling: 'pool-of-threads' } },
        ],
      }),
    );
    // Act
    const act = () => planRun(spec, { backend: 'aws', now: NOW, source: 'exp.json' });
    // Assert
    expect(act).toThrow(PlanError);
    expect(act).toThrow(
      new RegExp(
        /exp\.json: the experiment cannot run as specified:\n {2}- order: order "duet" needs at least/.source +
          / 2 variants in each round, but round 1 has only "a"/.source,
      ),
    );
    expect(planRun(spec, { backend: 'local', now: NOW }).duets?.map((d) => d.members)).toEqual(
      Array.from({ length: 6 }, (_, i) => [`a-r${i + 1}`, `b-r${i + 1}`]),
    );
  });
});
