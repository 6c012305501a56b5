/**
 * A lab's script may not run shell commands (issue 38): pgbench's `\shell` and `\setshell` run a
 * program on the machine running pgbench on every transaction, and a lab file is what teams share
 * across accounts. They are refused in any case and spacing, naming the file and line — by
 * `validate` and every command that loads the lab (lib/config/scenarios.ts), by the run request's
 * schema the runners read (lib/aws/run-request.ts), and before any plan runs, stored or fresh
 * (lib/engine/plan-or-resume.ts). Which forms pgbench runs: lib/suite/pgbench-script.ts.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { buildRunRequest, runRequestSchema } from '../../lib/aws/run-request';
import { checkLabFile, loadLabFile } from '../../lib/config/load';
import { exitCodeFor } from '../../lib/core/errors';
import type { LabScenario } from '../../lib/config/types';
import { planOrResume } from '../../lib/engine/plan-or-resume';
import { validateLocalInput } from '../../lib/local/run-local';
import { runnerArgsFromOutputs } from '../../lib/operator/operator';
import { getSuite } from '../../lib/suite/catalog';
import { expandSuite } from '../../lib/suite/expand';
import { shellMetaCommands } from '../../lib/suite/pgbench-script';
import { buildPlan, type RunPlan } from '../../lib/suite/plan';
import { describeTarget } from '../../lib/suite/targets';
import { runCliInProcess } from '../helpers/cli';
import { labOutputsWith, proxyOutputs } from '../helpers/lab-outputs';
import { caught } from '../helpers/caught';
import { labWithScript } from '../helpers/lab-with-script';

const SELECT = 'SELECT abalance FROM pgbench_accounts WHERE aid = 1;\n';

describe('which lines pgbench would run as \\shell or \\setshell', () => {
  // Each form checked against pgbench 15.18: a `\shell` with no command is its syntax error
  // "missing command in command "shell"", so the parser's reading shows without a server.
  test.each<[string, string, Array<{ line: number; command: string }>]>([
    ['at the start of a line', `${SELECT}\\shell touch /tmp/x\n`, [{ line: 2, command: '\\shell' }]],
    ['upper case', '\\SHELL touch /tmp/x\n', [{ line: 1, command: '\\SHELL' }]],
    ['mixed case setshell', '\\SetShell v echo 1\n', [{ line: 1, command: '\\SetShell' }]],
    ['indented', `${SELECT}  \t\\shell touch /tmp/x\n`, [{ line: 2, command: '\\shell' }]],
    ['a space after the backslash', '\\ shell touch /tmp/x\n', [{ line: 1, command: '\\shell' }]],
    ['after SQL on the same line', 'SELECT 1; \\shell touch /tmp/x\n', [{ line: 1, command: '\\shell' }]],
    ['a continuation before the word', '\\\\\nshell touch /tmp/x\n', [{ line: 1, command: '\\shell' }]],
    ['CRLF line ends', 'SELECT 1;\r\n\\setshell v echo 1\r\n', [{ line: 2, command: '\\setshell' }]],
    ['the last line without a newline', `${SELECT}\\shell`, [{ line: 2, command: '\\shell' }]],
    [
      'both, on several lines',
      `\\shell a\n${SELECT}\\setshell v b\n`,
      [
        { line: 1, command: '\\shell' },
        { line: 3, command: '\\setshell' },
      ],
    ],
    ['\\set and \\sleep', '\\set aid random(1, 10)\n\\sleep 1 ms\nSELECT :aid;\n', []],
    ['a longer word (pgbench: invalid command "shellx")', '\\shellx a\n', []],
    ['a word that does not end at a space (invalid command "shell;")', '\\shell;\n', []],
    ['the word without a backslash', 'SELECT shell FROM t;\n', []],
  ])('%s', (_what, sql, expected) => {
    expect(shellMetaCommands(sql)).toEqual(expected);
  });
});

const EVIL = `${SELECT}  \\SHELL touch /tmp/proxylab-pwned\n${SELECT}\\setshell v id\n`;

describe('a lab whose script runs shell commands is refused before any work', () => {
  test('validate: one problem at the file field, naming the file, each line and what is allowed', () => {
    // WHEN
    const r = checkLabFile(labWithScript(EVIL));
    // THEN
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problems).toEqual([
      {
        path: 'scenarios[0].workload[0].file',
        value: 'orders.sql',
        message: expect.stringMatching(
          /^must not run shell commands: orders\.sql line 2 \(\\SHELL\), line 4 \(\\setshell\)\. .*a lab script may hold SQL and the other meta-commands \(\\set, \\sleep/,
        ) as unknown,
      },
    ]);
  });

  test('the validate command exits 2 and says so', async () => {
    const file = labWithScript(EVIL);
    const { code, out, err } = await runCliInProcess(['validate', file]);
    expect(code).toBe(2);
    expect(out).not.toContain(': ok');
    expect(err).toContain('scenarios[0].workload[0].file: must not run shell commands: orders.sql line 2');
  });

  test('every command that loads the lab (plan, run, deploy, …) and `local --lab` refuse it (exit 2)', () => {
    const file = labWithScript(EVIL);
    expect(() => loadLabFile(file)).toThrow(/must not run shell commands: orders\.sql line 2/);
    const err = caught(() => validateLocalInput({ lab: file }, path.dirname(file)));
    expect(exitCodeFor(err)).toBe(2);
    expect((err as Error).message).toContain('must not run shell commands: orders.sql line 2');
  });

  test('the same script without them is valid', () => {
    expect(checkLabFile(labWithScript(`${SELECT}\\set aid random(1, 10)\n`)).ok).toBe(true);
  });
});

/** A validated-looking lab scenario carrying `sql` as its script (as a request written by other means would). */
function scenarioWith(sql: string): LabScenario {
  return {
    name: 'orders',
    description: '',
    workload: [
      {
        file: {
          path: 'orders.sql',
          name: 'orders.sql',
          sql,
          sha256: createHash('sha256').update(sql, 'utf8').digest('hex'),
        },
        weight: 1,
      },
    ],
    scale: 1,
    clients: [2],
    durationSec: null,
    transactionsPerClient: 5,
    protocols: ['simple'],
    connects: ['persistent'],
    repetitions: 1,
    rateTps: null,
    jobs: 1,
    targets: ['all'],
  };
}

describe('the runners refuse a request that carries one (a second line of defence)', () => {
  const lab = loadLabFile(path.resolve(__dirname, '..', '..', 'labs', 'own-workload.json'));
  const outputs = labOutputsWith({ labName: lab.name, ...proxyOutputs(lab.name, 'proxy') });
  const base = runnerArgsFromOutputs(outputs, lab, {
    runId: 'cloud-1',
    suite: 'lab',
    region: 'us-east-1',
    startAt: '2026-11-21T11:00:00.000Z',
  });

  test('the request schema the runner reads it with names the field, the file and the line', () => {
    // GIVEN a request whose script (with a matching SHA-256) runs a shell command
    const request = JSON.parse(JSON.stringify(buildRunRequest(base, 1))) as { scenarios: unknown[] };
    request.scenarios = [scenarioWith(`${SELECT}\\shell curl -s http://169.254.169.254/\n`)];
    // WHEN
    const parsed = runRequestSchema.safeParse(request);
    // THEN
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => [i.path.join('.'), i.message.slice(0, 56)])).toEqual([
      ['scenarios.0.workload.0.file.sql', 'must not run shell commands: orders.sql line 2 (\\shell).'],
    ]);
  });

  test('the operator cannot build one either', () => {
    expect(() => buildRunRequest({ ...base, scenarios: [scenarioWith('\\setshell v id\n')] }, 1)).toThrow(
      /must not run shell commands: orders\.sql line 1 /,
    );
  });
});

/** The smoke suite's plan with every step's script replaced by a file holding `sql`. */
function planRunning(sql: string): RunPlan {
  const descriptor = describeTarget({ kind: 'direct', name: 'direct' }, { version: '16.4' });
  const steps = expandSuite(getSuite('smoke'), [
    { ref: { kind: 'direct', name: 'direct' }, descriptor, maxConnections: 40, poolSize: null },
  ]).map((s) => ({ ...s, script: { parts: [{ file: { name: 'evil.sql', sql } }] } }));
  return buildPlan({
    runId: 'r1',
    suite: 'smoke',
    mode: 'local',
    createdAt: '2026-11-25T00:00:00.000Z',
    environment: {
      maxConnections: 40,
      serverVersion: '16.4',
      pgbenchVersion: null,
      poolerVersion: null,
      cpus: 2,
    },
    targets: [descriptor],
    steps,
  });
}

describe('no plan that runs one is executed (local and runners, new or resumed)', () => {
  const written: RunPlan[] = [];
  const sink = {
    writePlan: (plan: RunPlan): Promise<void> => {
      written.push(plan);
      return Promise.resolve();
    },
  };
  beforeEach(() => written.splice(0));

  test('a stored plan.json (a run directory or bucket someone prepared) is refused on resume', async () => {
    const stored = planRunning(`${SELECT}\\shell touch /tmp/x\n`);
    await expect(
      planOrResume(sink, { stored, check: () => undefined, fresh: () => stored, write: true }),
    ).rejects.toMatchObject({
      code: 'shell-script-refused',
      exitCode: 2,
      message: expect.stringMatching(
        /^the stored plan \(plan\.json\) of this run: a script must not run shell commands: evil\.sql line 2 \(\\shell\)\./,
      ) as unknown,
    });
  });

  test('a fresh plan is refused before it is stored', async () => {
    await expect(
      planOrResume(sink, {
        stored: null,
        check: () => undefined,
        fresh: () => planRunning('\\SETSHELL v id\n'),
        write: true,
      }),
    ).rejects.toMatchObject({ code: 'shell-script-refused' });
    expect(written).toEqual([]);
  });

  test('a plan without one runs', async () => {
    const got = await planOrResume(sink, {
      stored: null,
      check: () => undefined,
      fresh: () => planRunning(`${SELECT}\\set aid 1\n`),
      write: true,
    });
    expect(got.isNew).toBe(true);
    expect(written).toHaveLength(1);
  });
});
