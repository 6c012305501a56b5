/**
 * Jest setup (setupFilesAfterEnv of the unit and integration projects): after every test, every AWS
 * call it made (./recorder.ts) is checked against its principal's IAM policy and the service model;
 * a problem fails the test, naming the call, the principal and what is missing.
 *
 * With `PROXYLAB_RECORD_AWS_CALLS=FILE`, each checked call is also appended to FILE (one JSON line:
 * test, principal, service, operation, and the input's identifiers only) — how
 * test/fixtures/iam/recorded-calls.json, the scenario of test/unit/iam-least-privilege.test.ts, is made.
 */
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import { callIdentifiers } from '../../../lib/core/aws-call-log';
import { checkCalls, takeCalls } from './recorder';

afterEach(async () => {
  const calls = takeCalls();
  const out = process.env.PROXYLAB_RECORD_AWS_CALLS;
  if (out) {
    const state = expect.getState();
    const file = relative(process.cwd(), state.testPath ?? '');
    for (const c of calls)
      appendFileSync(
        out,
        JSON.stringify({
          file,
          test: state.currentTestName ?? '',
          principal: c.principal,
          service: c.service,
          operation: c.operation,
          input: callIdentifiers(c.input),
        }) + '\n',
      );
  }
  const problems = await checkCalls(calls);
  if (problems.length > 0)
    throw new Error(
      `${problems.length} problem(s) with the AWS calls this test made (test/helpers/aws-calls):\n- ${problems.join('\n- ')}`,
    );
});
