/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  setupFiles: ['<rootDir>/core/polyfills.ts'],
  testTimeout: 120000,
  // Suites that start MariaDB servers share the machine's two cores: run them one at a time.
  maxWorkers: 1,
};
