/** The local engine note names replicas only where a variant of that engine has readers. */
import { join } from 'node:path';
import { engineNotes } from '../../core/experiment/engine-checks';
import { loadSpecFile } from '../../core/experiment/validate';

const repoRoot = join(__dirname, '..', '..');
const { spec } = loadSpecFile(
  join(repoRoot, 'experiments', 'thread-sweep.json'),
  join(repoRoot, 'client', 'workloads'),
);

const rdsNotes = (s: typeof spec): string[] =>
  engineNotes(s, 'local')
    .map((n) => n.message)
    .filter((m) => m.startsWith('RDS for MySQL') && m.includes(' runs locally on '));

describe('engineNotes on the local backend', () => {
  it('says a writer and no replicas when no variant of the engine has readers', () => {
    // Act
    const notes = rdsNotes(spec);

    // Assert
    expect(notes.length).toBeGreaterThan(0);
    for (const m of notes) expect(m).toContain('MariaDB (a writer, no replicas)');
  });

  it('names the GTID replicas once a variant of the engine has readers', () => {
    // Arrange
    const withReaders = {
      ...spec,
      variants: spec.variants.map((v) => (v.engine?.kind === 'rds-mysql' ? { ...v, readers: 1 } : v)),
    };

    // Act
    const notes = rdsNotes(withReaders);

    // Assert
    expect(notes.length).toBeGreaterThan(0);
    for (const m of notes) expect(m).toContain('MariaDB (a writer and GTID replicas)');
  });
});
