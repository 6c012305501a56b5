/**
 * `proxylab local --lab FILE` end to end, through the real CLI against a real PostgreSQL and
 * PgBouncer: the shipped labs/own-workload.json (its own pgbench script, 3 client counts relative
 * to max_connections, 3 repetitions, every target) runs its suite `lab` on the local counterparts
 * of its targets — the RDS Proxy named as not measured — with the lab's pool share; the plan
 * stored with the run holds the script text and each target's steps; the report names the lab's
 * scenario, its source (none: the lab's own) and what loopback on one machine means.
 *
 * The lab is copied beside its script with each step a fixed 10 transactions per client
 * (`transactionsPerClient`, pgbench -t) instead of its 20 s (-T): the same scenario — its script,
 * scale, client counts, repetitions and targets — each of its 27 steps over in a fraction of a
 * second instead of a second or more of pgbench and PostgreSQL at full speed on both cores (what is
 * checked is what ran and where it is written, not how fast). The cluster is a copy of the tests'
 * data directory template (initdb is not the point).
 *
 * The run directory keeps the lab file verbatim (lab.json). Beside it, started together, a second
 * run of the same lab with its pool share changed (45 → 50 %) runs the test-only suite
 * `test-steps-short` (four 1 s steps: what is checked is its lab.json, not a measurement): `compare`
 * names the changed field, and a resume of it after the lab changed again is refused before any
 * server starts.
 */
import { expect } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { labRecordSchema } from '../../lib/results/lab-record';
import { planSchema } from '../../lib/results/schemas';
import type { RunManifest, StepRecord } from '../../lib/suite/types';
import { exitedAs, spawnCli, type CliRun } from '../helpers/local-stack';
import { pgdataTemplate } from '../helpers/pg-template';
import { scratchDir } from '../helpers/scratch';

const ROOT = path.resolve(__dirname, '..', '..');
/** pgbench -t of the lab's copy (the shipped lab runs each step 20 s). */
const TRANSACTIONS_PER_CLIENT = 10;
const SQL = fs.readFileSync(path.join(ROOT, 'labs', 'own-workload.sql'), 'utf8');

let dir: string;
let run: CliRun;
/** The second run: the lab with poolPercent 50, suite test-steps-short. */
let other: CliRun;
const OTHER_RUN_ID = 'lab-pool-50';
/** `proxylab local` of the lab copy `file` as the second run (also its resume). */
const otherArgs = (file: string): string[] => [
  'local',
  '--lab',
  file,
  '--test-suite',
  'test-steps-short',
  '--out',
  path.join(dir, 'runs'),
  '--run-id',
  OTHER_RUN_ID,
  '--no-install',
  '--no-report',
  ...['--test-pgdata-template', pgdataTemplate()],
];
let summary: {
  runDir: string;
  status: string;
  allHeld: boolean;
  steps: Array<{ stepId: string; status: string; tps: number | null; held: boolean | null }>;
};

beforeAll(async () => {
  // GIVEN the shipped lab and its script, each step 10 transactions per client instead of 20 s
  dir = scratchDir('proxylab-local-lab-');
  const lab = JSON.parse(fs.readFileSync(path.join(ROOT, 'labs', 'own-workload.json'), 'utf8')) as {
    $schema?: string;
    scenarios: Array<Record<string, unknown>>;
  };
  delete lab.$schema;
  lab.scenarios = lab.scenarios.map(({ durationSec, ...s }) => {
    expect(durationSec).toBe(20); // the shipped lab's, replaced below
    return { ...s, transactionsPerClient: TRANSACTIONS_PER_CLIENT };
  });
  fs.writeFileSync(path.join(dir, 'own-workload.json'), JSON.stringify(lab));
  fs.writeFileSync(path.join(dir, 'own-workload.sql'), SQL);
  // AND its copy with the poolers' share at 50 % instead of 45 %, for the second run
  fs.writeFileSync(
    path.join(dir, 'pool-50.json'),
    JSON.stringify(lab).replace('"poolPercent":45', '"poolPercent":50'),
  );
  other = spawnCli(otherArgs(path.join(dir, 'pool-50.json')));
  // WHEN the real CLI runs it locally
  run = spawnCli([
    'local',
    '--lab',
    path.join(dir, 'own-workload.json'),
    '--out',
    path.join(dir, 'runs'),
    '--no-install',
    '--json',
    ...['--test-pgdata-template', pgdataTemplate()],
  ]);
  const exit = await exitedAs(run, 0);
  expect(exit).toEqual({ code: 0 });
  summary = JSON.parse(run.stdout()) as typeof summary;
  expect(await exitedAs(other, 0)).toEqual({ code: 0 });
}, 180_000);

test('it says what stands in for which lab target, and which has none', () => {
  expect(run.stderr()).toMatch(
    /^Lab own-workload on the local stack: direct → direct, bouncer-transaction → bouncer-transaction, bouncer-session → bouncer-session /m,
  );
  expect(run.stderr()).toMatch(/^ {2}no local counterpart, not measured here: proxy \(RDS Proxy\)$/m);
  // the lab's poolers open 45 % of max_connections: so does the local one
  expect(run.stderr()).toMatch(/PgBouncer bouncer \(pools of 18 = 45 %\)/);
  // one line for the lab pooler: the version it pins and the one run, and its settings
  expect(run.stderr()).toMatch(
    /^ {2}bouncer: PgBouncer \S+ (\(the version the lab pins\)|instead of 1\.25\.2 \(the lab.s; .*); settings: the product.s defaults$/m,
  );
});

test("the lab's scenario ran: 3 client counts × 3 repetitions on each of the 3 local targets, every verdict held", () => {
  expect(summary.status).toBe('completed');
  expect(summary.allHeld).toBe(true);
  expect(summary.steps).toHaveLength(27);
  const cells = new Set(summary.steps.map((s) => s.stepId.replace(/\/r\d$/, '')));
  expect(cells.size).toBe(9);
  expect([...cells].every((c) => c.startsWith('checkout/'))).toBe(true);
  // relative to the local max_connections 40: 0.1 ×, 0.2 ×, 0.4 ×
  expect([...new Set(summary.steps.map((s) => /\/c(\d+)\//.exec(s.stepId)?.[1]))]).toEqual(['4', '8', '16']);
  expect(summary.steps.every((s) => s.status === 'completed' && s.tps !== null && s.tps > 0)).toBe(true);
});

test("the plan stored with the run carries the script text, each target's steps and the lab", () => {
  const plan = planSchema.parse(JSON.parse(fs.readFileSync(path.join(summary.runDir, 'plan.json'), 'utf8')));
  expect(plan.suite).toBe('lab');
  expect(plan.scenarios).toEqual([
    expect.objectContaining({
      name: 'checkout',
      experiment: null,
      source: null,
      targets: [
        { target: 'direct', steps: 9, skipped: null },
        { target: 'bouncer-transaction', steps: 9, skipped: null },
        { target: 'bouncer-session', steps: 9, skipped: null },
      ],
    }),
  ]);
  expect(
    plan.steps.every(
      (s) =>
        JSON.stringify(s.script) ===
        JSON.stringify({ parts: [{ file: { name: 'own-workload.sql', sql: SQL } }] }),
    ),
  ).toBe(true);
  const manifest = JSON.parse(
    fs.readFileSync(path.join(summary.runDir, 'manifest.json'), 'utf8'),
  ) as RunManifest;
  expect(manifest.settings).toEqual(
    expect.objectContaining({ lab: 'own-workload', poolPercent: 45, suite: 'lab' }),
  );
  // pgbench was told the scale, so the script's :scale is the 10 the data was loaded at
  const first = summary.steps[0]?.stepId ?? '';
  const record = JSON.parse(
    fs.readFileSync(path.join(summary.runDir, 'steps', `${first.replace(/\//g, '_')}.json`), 'utf8'),
  ) as StepRecord;
  expect(record.command.join(' ')).toMatch(/ -s 10 /);
  expect(record.command.join(' ')).toMatch(/own-workload\.sql/);
  // every client ran the lab copy's transactions (pgbench -t), so each step measured something
  expect(record.command.join(' ')).toMatch(new RegExp(` -t ${TRANSACTIONS_PER_CLIENT} `));
  expect(record.result?.complete).toBe(true);
});

test("the summary opens with the decision table: one row per local target, each the median of the lab's 3 repetitions", () => {
  const md = fs.readFileSync(path.join(summary.runDir, 'summary.md'), 'utf8');
  const table = md.slice(
    md.indexOf('## Decision table'),
    md.indexOf('## Findings: published, then measured'),
  );
  // THEN the decision table comes before the findings, with the lab's scenario as its own table
  expect(md.indexOf('## Decision table')).toBeGreaterThan(0);
  expect(table).toMatch(/^### checkout — own-workload\.sql · simple · persistent$/m);
  const rows = table.split('\n').filter((l) => /^\| (direct|bouncer-\w+) \|/.test(l));
  expect(rows.map((r) => r.split(' | ')[0]?.slice(2))).toEqual([
    'direct',
    'bouncer-transaction',
    'bouncer-session',
  ]);
  // every row has a measured tps with the spread of the 3 repetitions; direct is the baseline
  for (const r of rows) expect(r).toMatch(/\| [\d,.]+ \(best [\d,.]+ \/ worst [\d,.]+, n=3\) \|/);
  expect(rows[0]).toMatch(/\| baseline \|/);
  // the RDS Proxy has no local counterpart: not a row
  expect(table).not.toMatch(/^\| proxy \|/m);
});

test("the report names the lab's scenario and its source, and says what loopback means", () => {
  const md = fs.readFileSync(path.join(summary.runDir, 'summary.md'), 'utf8');
  expect(md).toContain('## checkout — Our checkout transaction (read, update, insert)');
  expect(md).toContain("none: the lab's own scenario, not a published finding");
  expect(md).toMatch(/One machine, loopback: pgbench, PgBouncer and PostgreSQL share these CPUs/);
  expect(md).toMatch(/stands in for lab own-workload's PgBouncer pools/);
  expect(run.stderr()).toMatch(/^One machine, loopback: pooled and direct share these CPUs/m);
});

test('the run directory keeps the lab file verbatim: its text, SHA-256 and the path it was given as', () => {
  const file = path.join(dir, 'own-workload.json');
  const lab = labRecordSchema.parse(
    JSON.parse(fs.readFileSync(path.join(summary.runDir, 'lab.json'), 'utf8')),
  );
  expect(lab).toEqual({
    schemaVersion: 1,
    name: 'own-workload',
    source: file,
    sha256: createHash('sha256').update(fs.readFileSync(file)).digest('hex'),
    text: fs.readFileSync(file, 'utf8'),
  });
});

test("compare names the field that differs between the two runs' lab files", async () => {
  // WHEN the real CLI compares the two runs
  const compared = spawnCli([
    'compare',
    summary.runDir,
    path.join(dir, 'runs', OTHER_RUN_ID),
    '--out',
    path.join(dir, 'compare'),
  ]);
  expect(await exitedAs(compared, 0)).toEqual({ code: 0 });
  // THEN (Markdown on stdout: brackets escaped, as every text of a run is)
  expect(compared.stdout()).toMatch(
    /^- A: lab own-workload \(\S+own-workload\.json, sha256 [0-9a-f]{12}…\)$/m,
  );
  expect(compared.stdout()).toMatch(/^- B: lab own-workload \(\S+pool-50\.json, sha256 [0-9a-f]{12}…\)$/m);
  expect(compared.stdout()).toContain(
    '1 field of the lab file differs, A → B:\n\n- poolers\\[0\\].poolPercent: 45 → 50\n',
  );
  expect(fs.readFileSync(path.join(dir, 'compare', 'compare.html'), 'utf8')).toContain(
    '<li><code>poolers[0].poolPercent: 45 → 50</code></li>',
  );
});

test('a resume after the lab file changed again is refused, naming the field, before a server starts', async () => {
  // GIVEN the second run's lab edited once more
  const file = path.join(dir, 'pool-50.json');
  const before = fs.readFileSync(path.join(dir, 'runs', OTHER_RUN_ID, 'lab.json'), 'utf8');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"poolPercent":50', '"poolPercent":55'));
  // WHEN its run is resumed
  const resumed = spawnCli(otherArgs(file));
  // THEN refused (exit 2) with what changed and what to do; lab.json is the one it started with
  expect(await exitedAs(resumed, 2)).toEqual({ code: 2 });
  expect(resumed.stderr()).toMatch(
    new RegExp(
      `cannot resume run ${OTHER_RUN_ID}: its lab file changed since it started \\(lab own-workload: poolers\\[0\\]\\.poolPercent: 50 → 55\\).*pass a new --run-id`,
    ),
  );
  expect(resumed.stderr()).not.toMatch(/Starting PostgreSQL/);
  expect(fs.readFileSync(path.join(dir, 'runs', OTHER_RUN_ID, 'lab.json'), 'utf8')).toBe(before);
});
