// Writes test/durations.json (what test/sequencer.js orders files by) from the Jest results of a
// run of scripts/test.sh on a quiet machine: each file's milliseconds. Under load every file takes
// longer by how busy the machine was while it ran, which reorders them; record only a quiet run.
//   node test/record-durations.js [results directory, default test-output]
const { readFileSync, writeFileSync, existsSync } = require('node:fs');
const { join, resolve, sep } = require('node:path');

const root = join(__dirname, '..');
const dir = resolve(process.argv[2] ?? join(root, 'test-output'));
const out = {};
for (const name of ['unit', 'servers']) {
  const file = join(dir, `jest-${name}.json`);
  if (!existsSync(file)) continue;
  for (const r of JSON.parse(readFileSync(file, 'utf8')).testResults) {
    // Paths relative to the checkout the run was made in (a clean clone elsewhere): from test/ on.
    const path = r.name
      .slice(r.name.lastIndexOf(`${sep}test${sep}`) + 1)
      .split(sep)
      .join('/');
    out[path] = r.endTime - r.startTime;
  }
}
if (Object.keys(out).length === 0) throw new Error(`no jest-unit.json or jest-servers.json with results in ${dir}`);
const sorted = Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(join(__dirname, 'durations.json'), `${JSON.stringify(sorted, null, 1)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files`);
