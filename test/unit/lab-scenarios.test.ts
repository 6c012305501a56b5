/**
 * A lab's own scenarios (lab file `scenarios[]`, the suite `lab`): validated like every other field
 * (path, value, what is allowed; every problem at once), their script files read through
 * lib/core/read.ts relative to the lab file, and turned into the catalog's scenario model so the
 * one `expandSuite` plans them.
 */
import { expect } from '@jest/globals';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkLabFile, validateLab, type LabProblem } from '../../lib/config';
import { labTargetCapacities } from '../../lib/config/targets';
import {
  labSuite,
  resolveSuite,
  resolveSuiteFlag,
  suiteNamesFor,
  type ScriptReader,
} from '../../lib/config/scenarios';
import { UsageError } from '../../lib/core/errors';
import { expandSuite } from '../../lib/suite/expand';
import { LAB_SUITE_NAME, SUITE_NAMES } from '../../lib/suite/catalog';
import { OWN_WORKLOAD_EXPECTATIONS } from '../../lib/suite/experiments/common';
import { scratchDir } from '../helpers/scratch';

const ROOT = path.resolve(__dirname, '..', '..');
const SQL = '\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n';
/** Script files by path, as a lab's folder would hold them. */
const FILES: Record<string, string> = {
  'orders.sql': SQL,
  'scripts/orders.sql': SQL,
  'empty.sql': '-- nothing but a comment\n\n',
  'nul.sql': 'SELECT 1;\u0000',
};
const reader: ScriptReader = (p) =>
  p in FILES ? { text: FILES[p] as string } : { problem: `no such file: ${p}` };

const scenario = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'orders',
  workload: [{ file: 'orders.sql' }],
  clients: [10, 20, 40],
  ...over,
});

function problemsOf(raw: Record<string, unknown>, read: ScriptReader | null = reader): readonly LabProblem[] {
  const r = validateLab({ name: 'lab', ...raw }, read ? { readScript: read } : {});
  if (r.ok) throw new Error('expected problems, the lab was valid');
  return r.problems;
}

describe('a bad scenario → one problem naming path, value and what is allowed', () => {
  test.each<[string, Record<string, unknown>, string, RegExp]>([
    [
      'builtin and file both',
      scenario({ workload: [{ builtin: 'tpcb-like', file: 'orders.sql' }] }),
      'scenarios[0].workload[0]',
      /^must give "builtin" or "file", not both/,
    ],
    [
      'neither',
      scenario({ workload: [{ weight: 2 }] }),
      'scenarios[0].workload[0]',
      /^must give "builtin" \(a pgbench/,
    ],
    [
      'a path leaving the lab folder',
      scenario({ workload: [{ file: '../secrets.sql' }] }),
      'scenarios[0].workload[0].file',
      /^must be a path relative to the lab file's folder, ending in \.sql.*no "\.\."/,
    ],
    [
      'an absolute path',
      scenario({ workload: [{ file: '/etc/passwd.sql' }] }),
      'scenarios[0].workload[0].file',
      /^must be a path relative to the lab file's folder/,
    ],
    [
      'not .sql',
      scenario({ workload: [{ file: 'orders.txt' }] }),
      'scenarios[0].workload[0].file',
      /ending in \.sql/,
    ],
    [
      'a missing file',
      scenario({ workload: [{ file: 'missing.sql' }] }),
      'scenarios[0].workload[0].file',
      /^cannot be used: no such file: missing\.sql$/,
    ],
    [
      'only comments',
      scenario({ workload: [{ file: 'empty.sql' }] }),
      'scenarios[0].workload[0].file',
      /^must hold at least one statement or meta-command/,
    ],
    [
      'a NUL byte',
      scenario({ workload: [{ file: 'nul.sql' }] }),
      'scenarios[0].workload[0].file',
      /NUL byte/,
    ],
    [
      'two files of one name',
      scenario({ workload: [{ file: 'orders.sql' }, { file: 'scripts/orders.sql' }] }),
      'scenarios[0].workload[1].file',
      /^must not share its file name with "orders\.sql"/,
    ],
    [
      'unknown builtin',
      scenario({ workload: [{ builtin: 'tpcc' }] }),
      'scenarios[0].workload[0].builtin',
      /^must be one of "tpcb-like", "simple-update", "select-only", got "tpcc"$/,
    ],
    [
      'duration and transactions',
      scenario({ durationSec: 30, transactionsPerClient: 10 }),
      'scenarios[0].transactionsPerClient',
      /^must not be given together with durationSec \(30\)/,
    ],
    [
      'all with others',
      scenario({ targets: ['all', 'direct'] }),
      'scenarios[0].targets',
      /^must be \["all"\] alone or a list of selectors without "all"/,
    ],
    [
      'a kind name instead of a capability',
      scenario({ targets: ['rds-proxy'] }),
      'scenarios[0].targets[0]',
      /^must be one of "all", "direct", "managed-pool", "self-hosted-transaction-pool", "self-hosted-session-pool", got "rds-proxy"$/,
    ],
    [
      'zero clients',
      scenario({ clients: [0] }),
      'scenarios[0].clients[0]',
      /^must be an integer 1–50000, got 0$/,
    ],
    [
      'relative to nothing known',
      scenario({ clients: [{ times: 0.5, of: 'pool' }] }),
      'scenarios[0].clients[0].of',
      /^must be one of "maxConnections", "poolSize", got "pool"$/,
    ],
    [
      'relative, no share',
      scenario({ clients: [{ times: 0, of: 'poolSize' }] }),
      'scenarios[0].clients[0].times',
      /^must be a number > 0 and ≤ \d+, got 0$/,
    ],
    [
      'neither a count nor a share',
      scenario({ clients: ['many'] }),
      'scenarios[0].clients[0]',
      /^must be a number of clients 1–50000, or \{ "times": T/,
    ],
    [
      'no repetition',
      scenario({ repetitions: 0 }),
      'scenarios[0].repetitions',
      /^must be an integer 1–100, got 0$/,
    ],
    [
      'a name that cannot start a step id',
      scenario({ name: 'Orders_1' }),
      'scenarios[0].name',
      /^must be lowercase letters, digits and single hyphens/,
    ],
    ['a typo', scenario({ durationsec: 30 }), 'scenarios[0].durationsec', /did you mean "durationSec"/],
  ])('%s', (_what, bad, at, message) => {
    // WHEN
    const problems = problemsOf({ scenarios: [bad] });
    // THEN
    expect(problems.map((p) => ({ path: p.path, ok: message.test(p.message) }))).toContainEqual({
      path: at,
      ok: true,
    });
  });

  test('two scenarios of one name', () => {
    const problems = problemsOf({ scenarios: [scenario(), scenario({ clients: [5] })] });
    expect(problems).toEqual([
      {
        path: 'scenarios[1].name',
        value: 'orders',
        message: 'must be unique among the lab\'s scenarios: scenarios[0] is already named "orders"',
      },
    ]);
  });

  test('every problem at once, in one file', () => {
    const problems = problemsOf({
      scenarios: [
        scenario({ workload: [{ file: 'missing.sql' }], repetitions: 0 }),
        scenario({ name: 'b', clients: [0], targets: ['all', 'direct'] }),
      ],
    });
    expect(problems.map((p) => p.path).sort()).toEqual([
      'scenarios[0].repetitions',
      'scenarios[0].workload[0].file',
      'scenarios[1].clients[0]',
      'scenarios[1].targets',
    ]);
  });

  test('a script file named without a reader (a lab given as JSON, not as a file) says where scripts are read', () => {
    expect(problemsOf({ scenarios: [scenario()] }, null)).toEqual([
      {
        path: 'scenarios[0].workload[0].file',
        value: 'orders.sql',
        message: expect.stringMatching(
          /^cannot be read here: script files are read relative to the lab file's folder/,
        ),
      },
    ]);
  });

  test.each([
    [{ suites: ['lab'] }, /this lab has no "scenarios"/],
    [
      { suites: ['labb'], scenarios: [scenario()] },
      /or "lab" \(the lab's own scenarios\), got "labb"; did you mean "lab"\?$/,
    ],
  ])('suites %j', (raw, message) => {
    expect(problemsOf(raw).map((p) => p.message)).toEqual([expect.stringMatching(message)]);
  });
});

describe('a valid scenario', () => {
  test('gets every default, the script text and its SHA-256, and the lab runs `lab` unless it names suites', () => {
    // WHEN
    const r = validateLab({ name: 'lab', scenarios: [scenario()] }, { readScript: reader });
    // THEN
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.lab.suites).toEqual([LAB_SUITE_NAME]);
    expect(r.lab.scenarios).toEqual([
      {
        name: 'orders',
        description: '',
        workload: [
          {
            file: {
              path: 'orders.sql',
              name: 'orders.sql',
              sql: SQL,
              sha256: createHash('sha256').update(SQL).digest('hex'),
            },
            weight: 1,
          },
        ],
        scale: 10,
        clients: [10, 20, 40],
        durationSec: 60,
        transactionsPerClient: null,
        protocols: ['simple'],
        connects: ['persistent'],
        repetitions: 3,
        rateTps: null,
        jobs: 8,
        targets: ['all'],
      },
    ]);
    expect(suiteNamesFor(r.lab)).toEqual([...SUITE_NAMES, LAB_SUITE_NAME]);
  });

  test('transactionsPerClient replaces the default duration', () => {
    const r = validateLab(
      { name: 'lab', scenarios: [scenario({ transactionsPerClient: 100 })] },
      { readScript: reader },
    );
    if (!r.ok) throw new Error('invalid');
    expect([r.lab.scenarios[0]?.durationSec, r.lab.scenarios[0]?.transactionsPerClient]).toEqual([null, 100]);
  });

  test("no catalog suite is named `lab`: the name is the lab file's own", () => {
    expect(SUITE_NAMES).not.toContain(LAB_SUITE_NAME);
  });
});

describe("the suite `lab`: the catalog's scenario model, the one expandSuite", () => {
  const lab = checkLabFile(path.join(ROOT, 'labs', 'own-workload.json'));
  if (!lab.ok) throw new Error(JSON.stringify(lab.problems));

  test('labs/own-workload.json: its script, 3 client counts × 3 repetitions × every target', () => {
    // GIVEN the shipped lab, its script read from beside it
    const suite = resolveSuite('lab', lab.lab);
    const sql = fs.readFileSync(path.join(ROOT, 'labs', 'own-workload.sql'), 'utf8');
    // WHEN it is expanded against the lab's targets at the class's max_connections
    const steps = expandSuite(suite, labTargetCapacities(lab.lab, 1802));
    // THEN 3 × 3 steps on each of the four targets, every step carrying the script's text
    expect(suite.scenarios.map((s) => [s.name, s.experiment])).toEqual([['checkout', null]]);
    const perTarget = new Map<string, number>();
    for (const s of steps) perTarget.set(s.target.name, (perTarget.get(s.target.name) ?? 0) + 1);
    expect(Object.fromEntries(perTarget)).toEqual({
      direct: 9,
      proxy: 9,
      'bouncer-transaction': 9,
      'bouncer-session': 9,
    });
    expect([...new Set(steps.map((s) => s.params.clients))]).toEqual([180, 360, 721]);
    expect(steps.every((s) => s.experiment === null && s.params.script === 'own-workload.sql')).toBe(true);
    expect(steps[0]?.script).toEqual({ parts: [{ file: { name: 'own-workload.sql', sql } }] });
    expect(suite.scenarios[0]?.expectations).toBe(OWN_WORKLOAD_EXPECTATIONS);
  });

  test('a selector picks targets by capability: only the self-hosted pools', () => {
    const only = {
      ...lab.lab,
      scenarios: lab.lab.scenarios.map((s) => ({ ...s, targets: ['self-hosted-session-pool' as const] })),
    };
    const steps = expandSuite(labSuite(only), labTargetCapacities(only, 1802));
    expect([...new Set(steps.map((s) => s.target.name))]).toEqual(['bouncer-session']);
  });

  test('a weighted mix of a built-in and a file keeps both weights', () => {
    const r = validateLab(
      {
        name: 'lab',
        scenarios: [
          scenario({
            workload: [
              { builtin: 'select-only', weight: 8 },
              { file: 'orders.sql', weight: 2 },
            ],
          }),
        ],
      },
      { readScript: reader },
    );
    if (!r.ok) throw new Error('invalid');
    expect(labSuite(r.lab).scenarios[0]?.script.parts).toEqual([
      { builtin: 'select-only', weight: 8 },
      { file: { name: 'orders.sql', sql: SQL }, weight: 2 },
    ]);
  });

  test.each([
    [
      'lab',
      { ...lab.lab, scenarios: [] },
      /suite "lab" runs the lab file's own scenarios, and lab own-workload has none/,
    ],
    ['nope', lab.lab, /unknown suite "nope"; valid suites: .*all-published, lab$/],
  ])('resolveSuite(%s) refuses with the choices', (name, l, message) => {
    expect(() => resolveSuite(name, l)).toThrow(UsageError);
    expect(() => resolveSuite(name, l)).toThrow(message);
  });

  test.each([
    // GIVEN a name typed on the command line
    ['nope', lab.lab, /^--suite must be one of quick, smoke, .*all-published, lab; got "nope"$/],
    [
      'nope',
      { ...lab.lab, scenarios: [] },
      /^--suite must be one of quick, smoke, .*all-published; got "nope"$/,
    ],
    // the lab without scenarios keeps the message that says why `lab` is not a choice there
    [
      'lab',
      { ...lab.lab, scenarios: [] },
      /^suite "lab" runs the lab file's own scenarios, and lab own-workload has none/,
    ],
  ])('resolveSuiteFlag(%s) names the flag, the value and the choices', (name, l, message) => {
    // WHEN / THEN
    expect(() => resolveSuiteFlag(name, l)).toThrow(UsageError);
    expect(() => resolveSuiteFlag(name, l)).toThrow(message);
  });

  test('resolveSuiteFlag gives the same suite as resolveSuite for a known name', () => {
    expect(resolveSuiteFlag('lab', lab.lab)).toEqual(resolveSuite('lab', lab.lab));
    expect(resolveSuiteFlag('smoke', lab.lab).name).toBe('smoke');
  });
});

describe('script files are read through lib/core/read.ts, relative to the lab file', () => {
  function labDir(script: (dir: string) => void): string {
    const dir = scratchDir('proxylab-lab-script-');
    fs.writeFileSync(
      path.join(dir, 'lab.json'),
      JSON.stringify({ name: 'lab', scenarios: [scenario({ workload: [{ file: 'scripts/orders.sql' }] })] }),
    );
    fs.mkdirSync(path.join(dir, 'scripts'));
    script(dir);
    return path.join(dir, 'lab.json');
  }

  test.each<[string, (dir: string) => void, RegExp]>([
    [
      'a symbolic link to a file outside',
      (dir) => fs.symlinkSync('/etc/hostname', path.join(dir, 'scripts', 'orders.sql')),
      /is a symbolic link/,
    ],
    [
      'a link on the way',
      (dir) => {
        fs.rmdirSync(path.join(dir, 'scripts'));
        fs.symlinkSync('/etc', path.join(dir, 'scripts'));
      },
      /is a symbolic link/,
    ],
    [
      'a FIFO',
      (dir) => execFileSync('mkfifo', [path.join(dir, 'scripts', 'orders.sql')]),
      /expected a regular file/,
    ],
    [
      'larger than 64 KiB',
      (dir) =>
        fs.writeFileSync(path.join(dir, 'scripts', 'orders.sql'), `SELECT 1;\n${'-'.repeat(70 * 1024)}\n`),
      /a script file may be at most/,
    ],
    [
      'not UTF-8',
      (dir) => fs.writeFileSync(path.join(dir, 'scripts', 'orders.sql'), Buffer.from([0x53, 0xff, 0x3b])),
      /UTF-8/,
    ],
  ])('%s is a problem at the field, not a crash', (_what, make, message) => {
    // GIVEN a lab whose script is something other than a small regular text file
    const file = labDir(make);
    // WHEN
    const r = checkLabFile(file);
    // THEN
    expect(r.ok).toBe(false);
    const problems = r.ok ? [] : r.problems;
    expect(problems.map((p) => p.path)).toEqual(['scenarios[0].workload[0].file']);
    expect(problems[0]?.message).toMatch(/^cannot be used: /);
    expect(problems[0]?.message).toMatch(message);
  });

  test.each<[string, (dir: string) => void, (dir: string) => string]>([
    [
      'the script file is a link',
      (dir) => fs.symlinkSync('/etc/hostname', path.join(dir, 'scripts', 'orders.sql')),
      (dir) => `${path.join(dir, 'scripts', 'orders.sql')} is a symbolic link`,
    ],
    [
      'a folder on its way is a link',
      (dir) => {
        fs.rmdirSync(path.join(dir, 'scripts'));
        fs.symlinkSync('/etc', path.join(dir, 'scripts'));
      },
      (dir) =>
        `${path.join(dir, 'scripts', 'orders.sql')} is below ${path.join(dir, 'scripts')}, which is a symbolic link`,
    ],
  ])("%s: refused as the lab's script file, naming it, not as a run directory", (_what, make, named) => {
    // GIVEN a lab whose script is reached through a symbolic link
    const file = labDir(make);
    const dir = path.dirname(file);
    // WHEN
    const r = checkLabFile(file);
    // THEN the problem is the lab's script file, named, with what to do
    const message = r.ok ? '' : (r.problems[0]?.message ?? '');
    expect(message).toBe(
      `cannot be used: the lab's script file ${named(dir)}; script files are read from the lab file's folder (${dir}) without following links, so a lab cannot read files outside it: copy the script there`,
    );
    expect(message).not.toMatch(/run directory/);
  });

  test('a regular script in a sub-folder is read', () => {
    const file = labDir((dir) => fs.writeFileSync(path.join(dir, 'scripts', 'orders.sql'), SQL));
    const r = checkLabFile(file);
    expect(r.ok && r.lab.scenarios[0]?.workload[0]).toEqual({
      file: expect.objectContaining({ path: 'scripts/orders.sql', name: 'orders.sql', sql: SQL }),
      weight: 1,
    });
  });
});
