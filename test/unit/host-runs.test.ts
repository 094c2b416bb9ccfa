/**
 * Runs on one host note their time in a shared directory; at its end a run learns which others
 * overlapped it (core/backends/local/host-runs.ts). Times are given, so the overlaps are exact.
 */
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostRuns, overlapNote } from '../../core/backends/local/host-runs';

let dir: string;
beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), 'ab-host-runs-')), 'host');
});
afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, s));

describe('runs that shared a host', () => {
  it('names the runs whose time overlapped, running or ended, and not one that ended before it started', () => {
    // Arrange: "early" ends before "mine" starts; "during" starts and ends inside it; "live" still runs
    const early = new HostRuns(dir);
    early.register('early', at(0));
    early.end('early', at(5));
    const mine = new HostRuns(dir);
    mine.register('mine', at(10));
    const during = new HostRuns(dir);
    during.register('during', at(12));
    during.end('during', at(14));
    const live = new HostRuns(dir);
    live.register('live', at(15));
    // Act
    const overlaps = mine.end('mine', at(20));
    // Assert
    expect(overlaps).toEqual([
      {
        runId: 'during',
        pid: process.pid,
        startedAt: at(12).toISOString(),
        endedAt: at(14).toISOString(),
        sharedS: 2,
        ofS: 10,
      },
      { runId: 'live', pid: process.pid, startedAt: at(15).toISOString(), endedAt: null, sharedS: 5, ofS: 10 },
    ]);
    expect(overlapNote('mine', overlaps)).toMatch(
      new RegExp(
        /^run mine shared \S+ with 2 other runs: during \(pid \d+, .* to .*: 2 s of this run's 10 s\),/.source +
          / live \(pid \d+, .* to still running: 5 s of this run's 10 s\); its figures include their load$/.source,
      ),
    );
    expect(readdirSync(dir).sort()).toHaveLength(4);
    expect(overlapNote('mine', [{ ...overlaps[1]!, sharedS: 10 }])).toMatch(
      /another run: live .*: all of this run's 10 s\)/,
    );
  });

  it('a run alone overlapped nothing; one never registered learns nothing', () => {
    // Arrange
    const alone = new HostRuns(dir);
    alone.register('alone', at(0));
    // Act / Assert
    expect(alone.end('alone', at(3))).toEqual([]);
    expect(new HostRuns(dir).end('never', at(4))).toEqual([]);
  });
});

describe('a registry folder that cannot be trusted', () => {
  it('never writes through a link planted at its file name, and still records the run', () => {
    // Arrange: a root-only file of the victim's, and a link to it where this run's file goes.
    const victim = join(dir, '..', 'victim');
    writeFileSync(victim, 'secret\n', { mode: 0o600 });
    mkdirSync(dir, { mode: 0o1777 });
    symlinkSync(victim, join(dir, `${process.pid}-planted.json`));
    const runs = new HostRuns(dir);

    // Act
    runs.register('planted', at(0));
    runs.end('planted', at(5));

    // Assert
    expect(readFileSync(victim, 'utf8')).toBe('secret\n');
    expect(lstatSync(join(dir, `${process.pid}-planted.json`)).isSymbolicLink()).toBe(false);
  });

  it('leaves alone a registry folder that is a link to another directory', () => {
    // Arrange
    const elsewhere = join(dir, '..', 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o1777 });
    symlinkSync(elsewhere, dir);
    const runs = new HostRuns(dir);

    // Act
    runs.register('linked', at(0));

    // Assert
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});
