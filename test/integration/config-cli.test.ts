/**
 * `proxylab validate` and `cdk synth` agree: same messages, exit 0 / 2 (synth: non-zero).
 * Runs the real entry points as a user would. Each test runs its own processes on its own files:
 * they run side by side (test.concurrent), as do the processes inside a test.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { scratchDir } from '../helpers/scratch';
import { spawnToEnd } from '../helpers/spawn';

const ROOT = path.join(__dirname, '..', '..');
const dir = scratchDir('proxylab-validate-');
const BAD = path.join(dir, 'bad.json');
writeFileSync(
  BAD,
  JSON.stringify({
    name: 'bad',
    aurora: { engineVersion: '15.6', instanceClass: 'db.t2.micro' },
    proxies: [
      { name: 'a', maxConnectionsPercent: 120, maxIdleConnectionsPercent: 10 },
      { name: 'a', borrowTimeoutSeconds: 500 },
    ],
    runners: { count: 0 },
    ttlHours: 0,
    ttlHour: 4,
  }),
);
const EXPECTED_LINES = [
  /^ {2}aurora\.engineVersion: Aurora PostgreSQL 15\.6 is no longer creatable .*got "15\.6"$/m,
  /^ {2}aurora\.instanceClass: must be a DB instance class Aurora PostgreSQL offers .*got "db\.t2\.micro"$/m,
  /^ {2}proxies\[0\]\.maxConnectionsPercent: must be an integer 1–100, got 120$/m,
  /^ {2}proxies\[1\]\.borrowTimeoutSeconds: must be an integer 0–300, got 500$/m,
  /^ {2}proxies\[1\]\.name: must be unique \(case-insensitive\)/m,
  /^ {2}runners\.count: must be an integer 1–20, got 0$/m,
  /^ {2}ttlHours: must be a number of hours 1–720 \(a deploy alone takes 15–30 minutes\), got 0$/m,
  /^ {2}ttlHour: unknown key \(did you mean "ttlHours"\?\)/m,
];

interface Exit {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `command ARGS` in the checkout to its end (as spawnSync would), without blocking the worker. */
async function run(command: string, args: readonly string[]): Promise<Exit> {
  const { code, stdout, stderr } = await spawnToEnd(command, args, { cwd: ROOT });
  return { status: code, stdout, stderr };
}

function proxylab(...args: string[]): Promise<Exit> {
  return run(process.execPath, [path.join(ROOT, 'scripts', 'proxylab.js'), ...args]);
}

/** `cdk synth -q` of `lab` into `out`, as a user runs it. */
function cdkSynth(lab: string, out: string): Promise<Exit> {
  return run(path.join(ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '-q', '-c', `lab=${lab}`, '-o', out]);
}

test.concurrent('validate: every lab in labs/ is ok (exit 0) with a summary line each', async () => {
  const labs = readdirSync(path.join(ROOT, 'labs'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => `labs/${f}`);
  const res = await proxylab('validate', ...labs);
  expect(res.status).toBe(0);
  for (const lab of labs) expect(res.stdout).toContain(`${lab}: ok\n`);
  expect(res.stdout).toMatch(
    /^labs\/default\.json: ok\n {2}default: Aurora PostgreSQL 17\.9 on db\.t4g\.medium/m,
  );
  expect(res.stdout).toMatch(
    /^labs\/e1-prepared-statements\.json: ok\n {2}e1-prepared-statements: Aurora PostgreSQL 15\.8/m,
  );
});

test.concurrent('validate: a file with several bad values exits 2 and prints every problem', async () => {
  const res = await proxylab('validate', BAD);
  expect(res.status).toBe(2);
  expect(res.stderr).toContain(`error: invalid lab file ${BAD}: 8 problems`);
  for (const line of EXPECTED_LINES) expect(res.stderr).toMatch(line);
});

test.concurrent.each([
  ['missing file', path.join(dir, 'missing.json'), /\(file\): does not exist: /],
  [
    'invalid JSON',
    (() => {
      const f = path.join(dir, 'broken.json');
      writeFileSync(f, '{"name": "x",\n');
      return f;
    })(),
    /\(file\): is not valid JSON: .*\(line 2, column 1\)/,
  ],
])('validate: %s exits 2', async (_label, file, message) => {
  const res = await proxylab('validate', file);
  expect(res.status).toBe(2);
  expect(res.stderr).toMatch(message);
});

test.concurrent(
  "validate: an instance type with no price (which cost and deploy refuse) is a problem too, beside the schema's",
  async () => {
    // GIVEN types the schema accepts but the price table lacks, and one schema mistake
    const file = path.join(dir, 'unpriced.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'unpriced',
        aurora: { instanceClass: 'db.r6i.large' },
        runners: { instanceType: 'c7g.huge', count: 0 },
      }),
    );
    // WHEN validate, and cost on the same file (side by side)
    const [res, cost] = await Promise.all([proxylab('validate', file), proxylab('cost', file)]);
    // THEN all three, each naming the value and what is priced
    expect(res.status).toBe(2);
    expect(res.stderr).toContain(`error: invalid lab file ${file}: 3 problems`);
    expect(res.stderr).toMatch(
      /^ {2}aurora\.instanceClass: has no us-east-1 price \(prices as of \d{4}-\d{2}-\d{2}\), so `proxylab cost` and `proxylab deploy` refuse it; priced: db\.t4g\.medium, .*; got "db\.r6i\.large"; did you mean "db\.r6g\.large"\?/m,
    );
    expect(res.stderr).toMatch(
      /^ {2}runners\.instanceType: has no us-east-1 price .*priced: c7g\.medium, c7g\.large, .*got "c7g\.huge"/m,
    );
    expect(res.stderr).toMatch(/^ {2}runners\.count: must be an integer 1–20, got 0$/m);
    // and cost refuses the same file, as validate said it would
    expect(cost.status).toBe(2);
    expect(cost.stderr).toMatch(
      /unknown Aurora instance class db\.r6i\.large|unknown runner instance type c7g\.huge|runners\.count/,
    );
  },
);

test.concurrent('validate --json prints the lab with defaults applied', async () => {
  const res = await proxylab('validate', '--json', 'labs/default.json');
  expect(res.status).toBe(0);
  expect(JSON.parse(res.stdout)).toMatchObject({
    name: 'default',
    proxies: [{ name: 'pool100', maxIdleConnectionsPercent: 50 }],
  });
});

test.concurrent('cdk synth with the same bad file fails with the same messages', async () => {
  // WHEN
  const res = await cdkSynth(BAD, path.join(dir, 'cdk.out'));
  // THEN
  expect(res.status).not.toBe(0);
  expect(res.stderr).toContain(`error: invalid lab file ${BAD}: 8 problems`);
  for (const line of EXPECTED_LINES) expect(res.stderr).toMatch(line);
});

test.concurrent('validate and cdk synth both refuse bad poolers, naming each field', async () => {
  // GIVEN every pooler mistake the issue names, in one file
  const file = path.join(dir, 'bad-poolers.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'bad-poolers',
      poolers: [
        { name: 'a', kind: 'pgbouncer', placement: 'dedicated', processes: 0, poolPercent: 120 },
        { name: 'b', kind: 'pgbouncer', placement: 'db-host', version: '1.99.9' },
        { name: 'c', kind: 'pgbouncer', placement: 'on-runners', version: 'latest' },
      ],
    }),
  );
  const expected = [
    /^ {2}poolers\[0\]\.processes: must be an integer 1–32, got 0$/m,
    /^ {2}poolers\[0\]\.poolPercent: must be an integer 1–100, got 120$/m,
    /^ {2}poolers\[0\]\.instanceType: is required for placement "dedicated"/m,
    /^ {2}poolers\[1\]\.placement: must be one of "dedicated", "on-runners" .*got "db-host"$/m,
    /^ {2}poolers\[1\]\.version: must be a PgBouncer release .*got "1\.99\.9"$/m,
    /^ {2}poolers\[2\]\.version: must be a PgBouncer release .*got "latest"$/m,
  ];
  // WHEN validate and cdk synth (side by side)
  const [res, synth] = await Promise.all([
    proxylab('validate', file),
    cdkSynth(file, path.join(dir, 'cdk-poolers.out')),
  ]);
  // THEN validate exits 2 with all six
  expect(res.status).toBe(2);
  expect(res.stderr).toContain(`error: invalid lab file ${file}: 6 problems`);
  for (const line of expected) expect(res.stderr).toMatch(line);
  // AND cdk synth fails with the same six
  expect(synth.status).not.toBe(0);
  expect(synth.stderr).toContain(`error: invalid lab file ${file}: 6 problems`);
  for (const line of expected) expect(synth.stderr).toMatch(line);
});

const ISSUE_LAB = 'test/fixtures/labs/issue-25-rds-proxy-vs-pgbouncer.json';

test.concurrent(
  'plan: the own-workload lab, its scenario on every target, from the lab file alone (no AWS)',
  async () => {
    // WHEN
    const res = await proxylab('plan', '--lab', 'labs/own-workload.json', '--suite', 'lab');
    // THEN
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/^Plan: suite lab on lab own-workload: 1 scenario, 36 steps, 2 runners$/m);
    expect(res.stdout).toMatch(
      /^ {2}scenario checkout \(the lab's own scenario\): Our checkout transaction/m,
    );
    expect(res.stdout).toMatch(
      /^ {4}clients 180, 360, 721; simple × persistent, -T 20 s, 3 repetitions, scale 10, own-workload\.sql$/m,
    );
    for (const t of ['direct', 'proxy', 'bouncer-transaction', 'bouncer-session'])
      expect(res.stdout).toMatch(new RegExp(`^ {4}${t} +9 steps$`, 'm'));
    expect(res.stdout).toMatch(/^ {2}lab time: fits in ttlHours 4/m);
    expect(res.stdout).toMatch(/^ {2}cost: the lab bills about \$0\.57\/h \(us-east-1/m);
    expect(res.stdout).not.toMatch(/^warning:/m);
  },
);

test.concurrent(
  "plan and validate: e5 on the issue's lab warns that the transaction pooler gets no step, and why",
  async () => {
    // WHEN
    const [plan, validate] = await Promise.all([
      proxylab('plan', '--lab', ISSUE_LAB),
      proxylab('validate', ISSUE_LAB),
    ]);
    // THEN plan (the lab's suite, e5, by default) names the skipped target, the billed parts, the lab's time
    expect(plan.status).toBe(0);
    expect(plan.stdout).toMatch(
      /^ {4}bouncer-transaction {2}skipped: e5-short runs on targets that are .*; bouncer-transaction is pooled, multiplexing \(transaction pool\)/m,
    );
    expect(plan.stdout).toMatch(/^warning: target bouncer-transaction gets no step in suite e5/m);
    expect(plan.stdout).toMatch(/^warning: aurora\.readers 1: a reader is billed \(\$0\.26\/h\)/m);
    expect(plan.stdout).toMatch(/^ {2}lab time: does NOT fit in ttlHours 6 .*--extend adds 5 h/m);
    // AND validate says the same, still exit 0 (warnings never fail validation)
    expect(validate.status).toBe(0);
    expect(validate.stdout).toMatch(/^ {2}warning: target bouncer-transaction gets no step in suite e5/m);
    expect(validate.stdout).toMatch(/^ {2}warning: the pooler host of bouncer \(c7g\.large\) is billed/m);
  },
);

test.concurrent(
  'plan --json: steps per target, each scenario with its targets and reasons, duration, cost, warnings',
  async () => {
    const res = await proxylab('plan', '--lab', ISSUE_LAB, '--suite', 'e5', '--json');
    expect(res.status).toBe(0);
    const [plan] = JSON.parse(res.stdout) as Array<{
      stepCount: number;
      maxConnections: { value: number };
      targets: Array<{ name: string; steps: number }>;
      scenarios: Array<{
        name: string;
        source: { url: string } | null;
        targets: Array<{ target: string; skipped: string | null }>;
      }>;
      expiry: { fits: boolean; extendHours: number };
      warnings: Array<{ id: string }>;
    }>;
    expect(plan?.stepCount).toBe(378);
    expect(plan?.maxConnections.value).toBe(1802);
    expect(plan?.targets.find((t) => t.name === 'bouncer-transaction')?.steps).toBe(0);
    expect(plan?.scenarios.map((s) => s.source?.url)).toEqual([
      'https://www.enterprisedb.com/node/1263271',
      'https://www.enterprisedb.com/node/1263271',
    ]);
    expect(plan?.expiry).toEqual(expect.objectContaining({ fits: false, extendHours: 5 }));
    expect(plan?.warnings.map((w) => w.id)).toContain('proxylab:target-not-measured');
  },
);

test.concurrent(
  'plan: an unknown suite, or lab on a lab without scenarios, is a usage error naming the choices',
  async () => {
    const [unknown, noScenarios] = await Promise.all([
      proxylab('plan', '--lab', 'labs/own-workload.json', '--suite', 'e9'),
      proxylab('plan', '--lab', 'labs/default.json', '--suite', 'lab'),
    ]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/--suite must be one of quick, smoke, .*, all-published, lab; got "e9"/);
    expect(noScenarios.status).toBe(2);
    expect(noScenarios.stderr).toMatch(
      /suite "lab" runs the lab file's own scenarios, and lab default has none/,
    );
  },
);
