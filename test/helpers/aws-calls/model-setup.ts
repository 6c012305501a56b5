/**
 * jest setupFilesAfterEnv (unit project): every call an aws-sdk-client-mock stub receives is checked
 * against the service's model (./model.ts) and a test whose calls break it fails, naming each
 * problem. aws-sdk-client-mock accepts any input; this is what stands in for AWS's own validation.
 *
 * How: `mockClient` is wrapped so each stub is remembered; after each test, the calls of every
 * stub not yet checked are; a stub's `reset()` / `resetHistory()` / `restore()` first checks the calls
 * it is about to forget (tests reset in beforeEach or afterEach, in any order with this hook).
 * Remove this file from jest.config.js to turn the check off; `expectModelValid(mock)`
 * (./model-mocks.ts) does the same for chosen mocks.
 */
import { mockModelProblems, type MockWithCalls } from './model-mocks';

interface Stub extends MockWithCalls {
  reset(): unknown;
  resetHistory(): unknown;
  restore(): void;
}

// tslib's __exportStar re-exports through getters, so replacing the inner module's export is what
// the package's `mockClient` import then calls (this file and the test share jest's
// module registry).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const inner = require('aws-sdk-client-mock/dist/cjs/mockClient') as {
  mockClient: (...args: unknown[]) => Stub;
};
const original = inner.mockClient;
const stubs: Stub[] = [];
const seen = new WeakSet<object>();
const pending: string[] = [];

function collect(stub: Stub): void {
  const fresh = stub.calls().filter((c) => !seen.has(c));
  for (const c of fresh) seen.add(c);
  pending.push(...mockModelProblems({ calls: () => fresh }));
}

inner.mockClient = (...args: unknown[]): Stub => {
  const stub = original(...args);
  for (const method of ['reset', 'resetHistory', 'restore'] as const) {
    const own = stub[method].bind(stub) as () => never;
    stub[method] = (): never => {
      collect(stub);
      return own();
    };
  }
  stubs.push(stub);
  return stub;
};

function flush(): void {
  for (const stub of stubs) collect(stub);
  const problems = pending.splice(0);
  if (problems.length > 0)
    throw new Error(`AWS calls that the service model rejects:\n  ${[...new Set(problems)].join('\n  ')}`);
}

afterEach(flush);
afterAll(flush);
