/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type-checking is done once by `tsc --noEmit` in `npm test`; ts-jest only transpiles.
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }] },
  testTimeout: 120000,
  // Removes the temporary directories tests make with scratchDir() after each file.
  setupFilesAfterEnv: ['<rootDir>/test/helpers/cleanup.ts'],
  // Integration tests start real PostgreSQL/PgBouncer; 2 cores: keep workers low.
  maxWorkers: 2,
};
