/** @type {import('jest').Config} */
// One project per test layer: every folder under test/ except helpers and fixtures, so a new layer
// (test/<name>/**/*.test.ts) is picked up by `npx jest --selectProjects <name>` and by the server
// layers of scripts/test.sh without an edit here. Unit tests touch no server and run in parallel
// (`npm run test:unit`); the other layers start MariaDB servers, moto, synthesize stacks or run the
// CLI end to end, and scripts/test.sh runs them three files at a time: most of their time is
// fixed-length sysbench steps and waits, and each file keeps its servers, ports and directories to
// itself. maxWorkers is a global Jest option, not a per-project one, hence the separate commands.
//
// No layer asserts measured performance levels: a shared two-core machine moves them by 10-20% over
// minutes, so such a gate fails on good code. Statistical properties are proved by seeded simulation
// in the unit layer (test/unit/regression-simulation.test.ts); real-run figures are benchmarks
// under bench/, recorded in bench/results/.
const { readdirSync } = require('node:fs');
const { join } = require('node:path');

const NOT_LAYERS = new Set(['helpers', 'fixtures']);

const shared = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': '<rootDir>/test/esbuild-transform.js',
  },
  setupFiles: ['<rootDir>/core/polyfills.ts'],
  // Every module runs in a vm context whose global lookups go through interceptors: a `Math.abs` in
  // a hot loop costs about 50 times what it does outside Jest (jestjs/jest#5163, nodejs/node#49283),
  // and the seeded simulations, the change-point scans and the generator are such loops. Jest
  // passes these to every module as parameters instead (jest-runtime's sandboxInjectedGlobals).
  sandboxInjectedGlobals: [
    'Math',
    'Number',
    'Array',
    'Object',
    'Infinity',
    'Float64Array',
    'Int32Array',
    'Map',
    'Set',
    'String',
    'JSON',
  ],
};

const layers = readdirSync(join(__dirname, 'test'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && !NOT_LAYERS.has(d.name))
  .map((d) => d.name)
  .sort();

module.exports = {
  projects: layers.map((name) => ({
    ...shared,
    displayName: name,
    testMatch: [`<rootDir>/test/${name}/**/*.test.ts`],
    // The layers that start servers run client/runner.js: built once per Jest run from core/runner/.
    ...(name === 'unit' ? {} : { globalSetup: '<rootDir>/test/helpers/runner-bundle.ts' }),
  })),
  testTimeout: 120000,
  // Longest files first, from a recorded run (test/sequencer.js): a clean clone has no Jest cache.
  testSequencer: '<rootDir>/test/sequencer.js',
  // Running a subset by path (`npx jest test/integration/x.test.ts`) starts servers: one at a time
  // unless a command asks for more (test:unit does).
  maxWorkers: 1,
};
