// Writes test/durations.json (what test/sequencer.js orders files by) from the Jest results of a
// run of scripts/test.sh (test-output/jest-*.json): each file's seconds, rounded.
const { readFileSync, writeFileSync, existsSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');
const out = {};
for (const name of ['unit', 'servers']) {
  const file = join(root, 'test-output', `jest-${name}.json`);
  if (!existsSync(file)) continue;
  for (const r of JSON.parse(readFileSync(file, 'utf8')).testResults) {
    out[relative(root, r.name)] = Math.round((r.endTime - r.startTime) / 1000);
  }
}
const sorted = Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(join(__dirname, 'durations.json'), `${JSON.stringify(sorted, null, 1)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files`);
