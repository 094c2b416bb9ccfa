// The order Jest starts test files in: the longest first, by the milliseconds each took in a run of
// scripts/test.sh on a quiet machine (test/durations.json, relative paths), so that with three files at a time
// the last file to start is a short one and no worker idles at the end. Jest orders by its cache of
// earlier runs' times, but a clean clone has none, and then it falls back to file size, which says
// little about a file whose time is sysbench steps and waits. A file not in the record (a new one)
// starts first: it may be long. Re-record with `node test/record-durations.js` after a full quiet run.
const { readFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');
const durations = JSON.parse(readFileSync(join(__dirname, 'durations.json'), 'utf8'));

class DurationSequencer {
  sort(tests) {
    const ms = (t) => durations[relative(root, t.path)] ?? Number.POSITIVE_INFINITY;
    return [...tests].sort((a, b) => ms(b) - ms(a) || (a.path < b.path ? -1 : 1));
  }

  // Jest hands every run's results to the sequencer for its cache; the record above is the cache.
  cacheResults() {}
}

module.exports = DurationSequencer;
