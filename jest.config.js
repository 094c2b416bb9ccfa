/** @type {import('jest').Config} */
// One project per test layer. Unit tests touch no server and run in parallel (`npm run test:unit`);
// the other layers start MariaDB servers, moto, synthesize stacks or run the CLI end to end:
// scripts/test.sh and `npm run test:servers` run them three files at a time (most of their time is
// fixed-length sysbench steps and waits; each file keeps its servers, ports and directories to
// itself). `measurements` holds the tests whose assertions are about measured performance
// differences (real TPS levels judged against each other): they run alone, after the others, since a
// neighbour's load moves those levels. maxWorkers is a global Jest option, not a per-project one,
// hence the separate commands rather than a setting here.
const shared = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  setupFiles: ['<rootDir>/core/polyfills.ts'],
};

const layer = (name) => ({ ...shared, displayName: name, testMatch: [`<rootDir>/test/${name}/**/*.test.ts`] });

module.exports = {
  projects: ['unit', 'integration', 'aws', 'cdk', 'rehearsal', 'e2e', 'faults', 'measurements', 'bundles'].map(layer),
  testTimeout: 120000,
  // Running a subset by path (`npx jest test/integration/x.test.ts`) starts servers: one at a time
  // unless a command asks for more (test:unit does).
  maxWorkers: 1,
};
