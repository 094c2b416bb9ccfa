/**
 * The smallest AWS rehearsal a test interrupts: one cell (a writer, its readers, one client) whose one
 * step lasts a minute, so a signal or a killed process reliably lands while the step runs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

function interruptibleRehearsalSpec(name: string, readers: number): Record<string, unknown> {
  return {
    name,
    engine: { version: '3.04.0' },
    region: 'us-east-1',
    variants: [
      { name: 'one', instanceClass: 'db.r6g.large', readers, clients: { count: 1, instanceType: 'c6g.large' } },
    ],
    data: { tables: 1, tableSize: 500 },
    defaults: { durationS: 60, warmupS: 0, reportIntervalS: 1 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [2] }],
    ttlHours: 1,
  };
}

/**
 * Writes interruptibleRehearsalSpec(name) to `<dir>/<name>.json` and returns the file; `readers: 0` spares a server.
 */
export function writeInterruptibleRehearsalSpec(dir: string, name: string, readers = 1): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(interruptibleRehearsalSpec(name, readers)));
  return file;
}
