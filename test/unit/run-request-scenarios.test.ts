/**
 * `--suite lab` in the cloud: the operator ships the lab's own scenarios, script texts included,
 * in the run request; the runners build the suite from the request alone (never from a file of
 * their own) and plan the same steps the operator's `proxylab plan` shows.
 */
import * as path from 'node:path';
import { loadLabFile } from '../../lib/config/load';
import { labSuite } from '../../lib/config/scenarios';
import { labTargetCapacities } from '../../lib/config/targets';
import { UsageError } from '../../lib/core/errors';
import { buildRunRequest, runnerArgsFromRequest, runRequestSchema } from '../../lib/aws/run-request';
import { runnerArgsFromOutputs } from '../../lib/operator/operator';
import { placeholderLabOutputs } from '../../lib/operator/outputs';
import { buildRunCommands } from '../../lib/operator/ssm';
import { runnerSuite } from '../../lib/runner/runner';
import { expandSuite } from '../../lib/suite/expand';
import { labOutputsWith, proxyOutputs } from '../helpers/lab-outputs';
import { SHIPPED_LABS } from '../helpers/shipped-labs';

const LAB = loadLabFile(path.resolve(__dirname, '..', '..', 'labs', 'own-workload.json'));
const OUTPUTS = labOutputsWith({ labName: LAB.name, ...proxyOutputs(LAB.name, 'proxy') });
const RUN = { runId: 'cloud-1', region: 'us-east-1', startAt: '2026-11-21T11:00:00.000Z' };

describe('the run request of suite lab', () => {
  test('carries the scenarios with their scripts; the runner builds the same suite and the same steps from it', () => {
    // GIVEN what `proxylab run --suite lab` resolves from the outputs and the lab file
    const base = runnerArgsFromOutputs(OUTPUTS, LAB, { ...RUN, suite: 'lab' });
    // WHEN it becomes the request in S3 (JSON), and a runner reads it back
    const request = runRequestSchema.parse(JSON.parse(JSON.stringify(buildRunRequest(base, 2))));
    const args = runnerArgsFromRequest(request, 1);
    // THEN the scenarios travelled whole, script text and hash included, and no secret with them
    expect(request.scenarios).toEqual(LAB.scenarios);
    expect(JSON.stringify(request)).toContain('UPDATE pgbench_accounts SET abalance');
    expect(JSON.stringify(request)).not.toMatch(/password/i);
    // AND the runner's suite expands to exactly the operator's steps
    const capacities = labTargetCapacities(LAB, 1802);
    const runner = expandSuite(runnerSuite(args, {}), capacities);
    expect(runner).toEqual(expandSuite(labSuite(LAB), capacities));
    expect(runner.length).toBe(36);
  });

  test('a catalog suite carries none', () => {
    const base = runnerArgsFromOutputs(OUTPUTS, LAB, { ...RUN, suite: 'e3' });
    expect(base.scenarios).toBeUndefined();
    expect(buildRunRequest(base, 1).scenarios).toBeNull();
  });

  test('a script changed after validation does not pass the request schema', () => {
    // GIVEN a request whose script text no longer matches its SHA-256
    const request = buildRunRequest(runnerArgsFromOutputs(OUTPUTS, LAB, { ...RUN, suite: 'lab' }), 1);
    const tampered = JSON.parse(
      JSON.stringify(request).replace('SELECT abalance', 'SELECT pg_sleep(1), abalance'),
    ) as unknown;
    // WHEN / THEN
    const parsed = runRequestSchema.safeParse(tampered);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['scenarios.0.workload.0.file', 'the script text does not match its sha256'],
    ]);
  });

  test.each([
    ['lab', null, /a run of suite "lab" needs the lab's scenarios in its request; it has none/],
    ['smoke', LAB.scenarios, /a run of suite "smoke" carries no scenarios of its own/],
  ] as const)('suite %s with scenarios %j is refused', (suite, scenarios, message) => {
    const base = { ...runnerArgsFromOutputs(OUTPUTS, LAB, { ...RUN, suite: 'e3' }), suite, scenarios };
    expect(() => buildRunRequest(base, 1)).toThrow(UsageError);
    expect(() => buildRunRequest(base, 1)).toThrow(message);
  });

  test('a runner asked for suite lab without scenarios stops with a usage error', () => {
    expect(() => runnerSuite({ suite: 'lab', scenarios: null }, {})).toThrow(
      /the run request carries no scenarios/,
    );
  });
});

describe('run --dry-run without the stack outputs: placeholders, named as such', () => {
  test.each(SHIPPED_LABS)(
    'labs/%s.json: the request and the commands build; every value the stack decides is a placeholder',
    (name) => {
      // GIVEN a shipped lab, and no stack outputs to read (no --outputs, no credentials)
      const lab = loadLabFile(path.resolve(__dirname, '..', '..', 'labs', `${name}.json`));
      const suite = lab.scenarios.length > 0 ? 'lab' : (lab.suites[0] ?? 'quick');
      // WHEN the dry run builds its requests on the stand-ins
      const { outputs, placeholders } = placeholderLabOutputs(lab);
      const request = buildRunRequest(
        runnerArgsFromOutputs(outputs, lab, { ...RUN, suite }),
        outputs.runnerInstanceIds.length,
      );
      const commands = buildRunCommands(outputs.runnerInstanceIds, request);
      // THEN one command per runner of the lab, with the lab's targets, and each stand-in says what it is
      expect(commands).toHaveLength(lab.runners.count);
      expect(request.targets.proxies.map((p) => p.name)).toEqual(lab.proxies.map((p) => p.name));
      expect(request.targets.poolers.map((p) => p.name)).toEqual(lab.poolers.map((p) => p.name));
      expect([request.bucket, request.secretArn, request.targets.writer.host]).toEqual([
        '<results bucket: from the stack outputs>',
        '<DB secret ARN: from the stack outputs>',
        'writer-endpoint.from-the-stack-outputs.invalid',
      ]);
      expect(commands.map((c) => c.instanceId)).toEqual(
        Array.from(
          { length: lab.runners.count },
          (_, i) => `<runner instance id ${i + 1} of ${lab.runners.count}: from the stack outputs>`,
        ),
      );
      for (const p of placeholders)
        expect(p).toMatch(/^<[^<>]+: from the stack outputs>$|^[a-z0-9-]+\.from-the-stack-outputs\.invalid$/);
      const text = JSON.stringify({ request, commands: commands.map((c) => c.input) });
      for (const p of placeholders) expect(text).toContain(p);
    },
  );
});
