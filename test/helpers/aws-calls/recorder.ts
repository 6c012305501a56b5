/**
 * Records every AWS SDK call the tests make, with the principal it is attributed to, and checks
 * each one after every test (./setup.ts, a global afterEach): against the principal's IAM policy
 * (./iam.ts) and against the service model (./model.ts).
 *
 * Three sources:
 *  - aws-sdk-client-mock mocks, made with `mockAws(S3Client, RUNNER)` instead of `mockClient`
 *    (the mock stubs `send`, so no middleware runs: the calls are read from `mock.calls()`);
 *  - real SDK clients talking to moto in-process: `recordAws(client, RUNNER)` adds a middleware;
 *  - the real CLI as a child process: test/helpers/cli.ts sets `PROXYLAB_AWS_CALL_LOG` (the CLI's
 *    audit log, lib/core/aws-call-log.ts) and hands the lines to `recordCallLog`.
 */
import { readFileSync } from 'node:fs';
import type { MetadataBearer } from '@smithy/types';
import type { AwsStub, mockClient } from 'aws-sdk-client-mock';
import { observeAwsCalls } from '../../../lib/core/aws-call-log';
import type * as IamChecks from './iam';
import type * as ModelChecks from './model';
import type { Principal } from './principals';
import { describePrincipal } from './principals';

// This file is a setup file of every unit and integration test file (through ./setup.ts), and jest
// loads a file's modules afresh for each test file: what only a test with AWS calls needs loads on
// first use. ./iam.ts brings lib/config, the IAM simulator and the Service Authorization Reference,
// ./model.ts the preflight, aws-sdk-client-mock brings sinon; most test files make no AWS call
// (bench/README.md "npm test time").
/* eslint-disable @typescript-eslint/no-require-imports */
const iamChecks = (): typeof IamChecks => require('./iam') as typeof IamChecks;
const modelChecks = (): typeof ModelChecks => require('./model') as typeof ModelChecks;
const mockLibrary = (): { mockClient: typeof mockClient } =>
  require('aws-sdk-client-mock') as { mockClient: typeof mockClient };
/* eslint-enable @typescript-eslint/no-require-imports */

export type CallSource = 'mock' | 'sdk' | 'cli-log';

export interface RecordedCall {
  /** The SDK client's service id: `S3`, `RDS`, `SSM`, `Secrets Manager`, … */
  readonly service: string;
  /** `PutObject`, `SendCommand`, … */
  readonly operation: string;
  readonly input: unknown;
  readonly principal: Principal;
  readonly source: CallSource;
}

let pending: RecordedCall[] = [];
/** Every call of this test file (for tests that look at what was recorded). */
const all: RecordedCall[] = [];

export function record(call: RecordedCall): void {
  pending.push(call);
  all.push(call);
}

interface Registered {
  readonly mock: AwsStub<object, MetadataBearer, unknown>;
  principal: Principal;
  harvested: number;
}
const mocks: Registered[] = [];

function harvest(r: Registered): void {
  const calls = r.mock.calls();
  for (const call of calls.slice(r.harvested)) {
    const command = call.args[0] as { constructor: { name: string }; input?: unknown };
    const client = call.thisValue as { config?: { serviceId?: string } } | undefined;
    record({
      service: client?.config?.serviceId ?? 'unknown',
      operation: command.constructor.name.replace(/Command$/, ''),
      input: command.input,
      principal: r.principal,
      source: 'mock',
    });
  }
  r.harvested = calls.length;
}

/**
 * `mockClient(Client)` whose calls are recorded as made by `principal`. `reset()`,
 * `resetHistory()` and `restore()` first take the calls made so far.
 */
export function mockAws<TInput extends object, TOutput extends MetadataBearer, TConfiguration>(
  client: Parameters<typeof mockClient<TInput, TOutput, TConfiguration>>[0],
  principal: Principal,
): AwsStub<TInput, TOutput, TConfiguration> {
  const mock = mockLibrary().mockClient<TInput, TOutput, TConfiguration>(client);
  const r: Registered = { mock: mock as unknown as Registered['mock'], principal, harvested: 0 };
  mocks.push(r);
  for (const method of ['reset', 'resetHistory', 'restore'] as const) {
    const original = mock[method].bind(mock);
    (mock as unknown as Record<string, () => unknown>)[method] = () => {
      harvest(r);
      const out = original();
      r.harvested = 0;
      return out === mock ? mock : out;
    };
  }
  return mock;
}

/** From now on, calls through `mock` are attributed to `principal` (for files that mock once). */
export function attributeMock(mock: object, principal: Principal): void {
  const r = mocks.find((m) => m.mock === mock);
  if (!r) throw new Error('attributeMock: not a mock made with mockAws');
  harvest(r);
  r.principal = principal;
}

/** A real SDK client whose calls are recorded as made by `principal` (an initialize middleware). */
export function recordAws<C>(client: C, principal: Principal): C {
  return observeAwsCalls(
    client,
    (service, operation, input) => record({ service, operation, input, principal, source: 'sdk' }),
    'proxylabTestCallRecorder',
  );
}

/** The lines of a `PROXYLAB_AWS_CALL_LOG` file, recorded as made by `principal`. */
export function recordCallLog(file: string, principal: Principal): number {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return 0;
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  for (const line of lines) {
    const e = JSON.parse(line) as { service: string; operation: string; input: unknown };
    record({ service: e.service, operation: e.operation, input: e.input, principal, source: 'cli-log' });
  }
  return lines.length;
}

/** Takes every call recorded since the last take (including unharvested mock calls). */
export function takeCalls(): RecordedCall[] {
  for (const r of mocks) harvest(r);
  const out = pending;
  pending = [];
  return out;
}

/** Every call recorded in this test file so far. */
export function recordedCalls(): readonly RecordedCall[] {
  for (const r of mocks) harvest(r);
  return all;
}

/** The checks run over every call; each returns problems (empty = fine). */
export const CALL_CHECKS: ReadonlyArray<{
  readonly name: string;
  readonly check: (call: RecordedCall) => Promise<string[]> | string[];
}> = [
  { name: 'iam', check: (c) => iamChecks().iamProblems(c, c.principal) },
  // The model check of mock calls is model-setup.ts's (unit project); the CLI's audit log keeps
  // identifiers only (incomplete inputs by design): the real SDK clients recorded here remain.
  {
    name: 'model',
    check: (c) => (c.source === 'sdk' ? modelChecks().modelProblems(c.service, c.operation, c.input) : []),
  },
];

/** Every problem of `calls`, each naming the call's principal and source; duplicates once. */
export async function checkCalls(calls: readonly RecordedCall[]): Promise<string[]> {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const call of calls) {
    for (const { name, check } of CALL_CHECKS) {
      for (const p of await check(call)) {
        const text =
          name === 'iam'
            ? p
            : `${name}: ${call.service} ${call.operation} by ${describePrincipal(call.principal)}: ${p}`;
        if (!seen.has(text)) {
          seen.add(text);
          problems.push(text);
        }
      }
    }
  }
  return problems;
}
