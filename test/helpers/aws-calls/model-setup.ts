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
 *
 * Nothing of aws-sdk-client-mock (sinon) or of the model check is loaded here: most unit test
 * files mock no AWS client, and jest loads every module afresh per test file. The wrapper is a
 * `jest.mock` factory, which runs when a test (or ./recorder.ts's `mockAws`) first requires the
 * module; the model check loads with the first call to check.
 */
import type * as ModelMocks from './model-mocks';
import type { MockWithCalls } from './model-mocks';

interface Stub extends MockWithCalls {
  reset(): unknown;
  resetHistory(): unknown;
  restore(): void;
}

type MockClient = (...args: unknown[]) => Stub;

const stubs: Stub[] = [];
const seen = new WeakSet<object>();
const pending: string[] = [];

function collect(stub: Stub): void {
  const fresh = stub.calls().filter((c) => !seen.has(c));
  if (fresh.length === 0) return;
  for (const c of fresh) seen.add(c);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { mockModelProblems } = require('./model-mocks') as typeof ModelMocks;
  pending.push(...mockModelProblems({ calls: () => fresh }));
}

const wrap =
  (original: MockClient): MockClient =>
  (...args: unknown[]): Stub => {
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

// The package's `mockClient` as every test (and ./recorder.ts's `mockAws`) imports it; jest applies
// this factory to every require of the package (this file and the test share jest's module
// registry). A stub's own `reset()` makes a fresh sinon stub through the inner module and keeps it
// as its `send`, so the calls after a reset are still this stub's `calls()`.
jest.mock('aws-sdk-client-mock', () => {
  const actual = jest.requireActual<{ mockClient: MockClient }>('aws-sdk-client-mock');
  return { ...actual, mockClient: wrap(actual.mockClient) };
});

function flush(): void {
  for (const stub of stubs) collect(stub);
  const problems = pending.splice(0);
  if (problems.length > 0)
    throw new Error(`AWS calls that the service model rejects:\n  ${[...new Set(problems)].join('\n  ')}`);
}

afterEach(flush);
afterAll(flush);
