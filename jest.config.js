/**
 * Three jest projects (`npm run test:unit` / `test:cdk` / `test:integration`; `npm test` runs all
 * three after scripts/preflight.ts, beside `tsc --noEmit` (scripts/test.ts)):
 *  - unit: in-process only, no external tool, no child process of ours, no real server;
 *  - cdk: synthesizes stacks, runs cdk-nag, cfn-lint and shellcheck on what it produces;
 *  - integration: starts real PostgreSQL/PgBouncer/moto/Chromium, or the CLI as a child process.
 */
const shared = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  // Type-checking is done once by `tsc --noEmit` beside jest in `npm test`; jest only transpiles, with swc
  // (tsconfig's isolatedModules makes each file transpilable alone). swc transpiles the unit project
  // in about a third of ts-jest's time on 2 cores (bench/README.md "npm test time").
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  // Removes the temporary directories tests make with scratchDir() after each file.
  setupFilesAfterEnv: ['<rootDir>/test/helpers/cleanup.ts'],
};

// Unit and integration tests: every AWS SDK call a test makes is checked after it against the IAM
// policy of the principal that makes it and the service model (test/helpers/aws-calls).
const CHECKED_CALLS = [...shared.setupFilesAfterEnv, '<rootDir>/test/helpers/aws-calls/setup.ts'];

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      roots: ['<rootDir>/test/unit'],
      // Every aws-sdk-client-mock call is checked against the service's botocore model.
      setupFilesAfterEnv: [...CHECKED_CALLS, '<rootDir>/test/helpers/aws-calls/model-setup.ts'],
      // botocore's data directory, found once per run (not once per test file that checks a call)
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
    },
    { ...shared, displayName: 'cdk', roots: ['<rootDir>/test/cdk'] },
    {
      ...shared,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration'],
      setupFilesAfterEnv: CHECKED_CALLS,
      // botocore's data directory found once, and one moto_server per run shared by the files that
      // ask for one (test/helpers/moto.ts), stopped after the last.
      globalSetup: '<rootDir>/test/helpers/integration-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/integration-teardown.ts',
      // Tests that name no PgBouncer run on Debian's 1.18, whatever PATH puts first.
      setupFiles: ['<rootDir>/test/helpers/default-pgbouncer.ts'],
    },
  ],
  // Global only (jest 29 rejects it per project); slow integration steps pass their own timeouts.
  testTimeout: 120000,
  // Three test files at once on 2 cores: many integration files mostly wait (a probe's window, a
  // server's stop, a runner's barrier: cloud-spot uses 6 CPU-s in 18 s), and with two workers two of
  // them side by side left a core idle (≈ 60 of ≈ 500 core-seconds); a third file keeps both cores
  // busy (jest 247–264 s with two, 198–239 s with three; bench/README.md "Fifth round").
  // Inside a file, tests that each start their own stack and wait mostly on pgbench's fixed -T run
  // side by side (test.concurrent), at most this many at once: local-server-stop's nine cases, each
  // a cheap run (test/helpers/local-stack.ts RUN_TO_INTERRUPT, a few % of a core), all at once. Runs
  // at full speed (smoke) take both cores each: a file runs at most two or three of them side by side
  // (CONTRIBUTING.md "Test time").
  maxWorkers: 3,
  maxConcurrency: 9,
  // The longest files first, also on a fresh clone that has no timings yet (test/helpers/sequencer.js).
  testSequencer: '<rootDir>/test/helpers/sequencer.js',
};
