/**
 * The lab file format is a public interface: these tables pin the messages (path, value, what is
 * allowed) users see from `proxylab validate` and `cdk synth`.
 */
import { expect } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as rds from 'aws-cdk-lib/aws-rds';
import { UsageError } from '../../lib/core/errors';
import {
  AURORA_POSTGRES_INSTANCE_CLASSES,
  checkLabFile,
  closestAcceptedVersion,
  DEFAULT_RDS_POSTGRES_VERSION,
  RDS_POSTGRES_INSTANCE_CLASSES,
  RDS_POSTGRES_VERSIONS,
  DEFAULT_PGBOUNCER_VERSION,
  findPgbouncerRelease,
  PGBOUNCER_RELEASES,
  formatPath,
  formatProblems,
  LabProblem,
  LIMITS,
  loadLabFile,
  parseLabOutputs,
  suggestKey,
  summarizeLab,
  validateLab,
} from '../../lib/config';
import { unpricedProblems } from '../../lib/cost/price-check';
import { pgbouncerDriver } from '../../lib/poolers/pgbouncer/driver';
import { scratchDir } from '../helpers/scratch';

const BASE = { name: 'lab' };

/** Validates `raw`, expecting failure; returns the problems. */
function problemsOf(raw: unknown): readonly LabProblem[] {
  const r = validateLab(raw);
  if (r.ok) throw new Error(`expected problems, lab was valid: ${JSON.stringify(r.lab)}`);
  return r.problems;
}

describe('single bad value → one problem naming path, value and what is allowed', () => {
  test.each<[string, Record<string, unknown>, string, unknown, RegExp]>([
    [
      'pool max above 100',
      { proxies: [{ name: 'a' }, { name: 'b', maxConnectionsPercent: 120 }] },
      'proxies[1].maxConnectionsPercent',
      120,
      /^must be an integer 1–100, got 120$/,
    ],
    [
      'pool max zero',
      { proxies: [{ name: 'a', maxConnectionsPercent: 0 }] },
      'proxies[0].maxConnectionsPercent',
      0,
      /^must be an integer 1–100, got 0$/,
    ],
    [
      'pool max fractional',
      { proxies: [{ name: 'a', maxConnectionsPercent: 50.5 }] },
      'proxies[0].maxConnectionsPercent',
      50.5,
      /integer 1–100, got 50\.5$/,
    ],
    [
      'pool max as string',
      { proxies: [{ name: 'a', maxConnectionsPercent: '50' }] },
      'proxies[0].maxConnectionsPercent',
      '50',
      /integer 1–100, got "50"$/,
    ],
    [
      'idle above max',
      { proxies: [{ name: 'a', maxConnectionsPercent: 40, maxIdleConnectionsPercent: 60 }] },
      'proxies[0].maxIdleConnectionsPercent',
      60,
      /^must be an integer 0–40 \(≤ maxConnectionsPercent 40\), got 60$/,
    ],
    [
      'idle above the default max (100)',
      { proxies: [{ name: 'a', maxIdleConnectionsPercent: 101 }] },
      'proxies[0].maxIdleConnectionsPercent',
      101,
      /^must be an integer 0–100, got 101$/,
    ],
    [
      'borrow timeout above 300',
      { proxies: [{ name: 'a', borrowTimeoutSeconds: 301 }] },
      'proxies[0].borrowTimeoutSeconds',
      301,
      /^must be an integer 0–300, got 301$/,
    ],
    [
      'borrow timeout negative',
      { proxies: [{ name: 'a', borrowTimeoutSeconds: -1 }] },
      'proxies[0].borrowTimeoutSeconds',
      -1,
      /0–300, got -1$/,
    ],
    [
      'proxy name not an RDS identifier',
      { proxies: [{ name: '1pool' }] },
      'proxies[0].name',
      '1pool',
      /valid RDS identifier.*got "1pool"$/,
    ],
    [
      'proxy name double hyphen',
      { proxies: [{ name: 'a--b' }] },
      'proxies[0].name',
      'a--b',
      /valid RDS identifier/,
    ],
    [
      'proxy name trailing hyphen',
      { proxies: [{ name: 'ab-' }] },
      'proxies[0].name',
      'ab-',
      /not ending in a hyphen/,
    ],
    [
      'duplicate proxy names',
      { proxies: [{ name: 'pool' }, { name: 'POOL' }] },
      'proxies[1].name',
      'POOL',
      /^must be unique \(case-insensitive\): proxies\[0\] is already named "pool", got "POOL"$/,
    ],
    [
      'requireTls not boolean',
      { proxies: [{ name: 'a', requireTls: 'yes' }] },
      'proxies[0].requireTls',
      'yes',
      /^must be true or false, got "yes"$/,
    ],
    [
      'instance class unknown',
      { aurora: { instanceClass: 'db.m5.large' } },
      'aurora.instanceClass',
      'db.m5.large',
      /^must be a DB instance class Aurora PostgreSQL offers \(families .*t4g.*r6g.*\), got "db\.m5\.large"/,
    ],
    [
      'instance class without db. prefix',
      { aurora: { instanceClass: 't4g.medium' } },
      'aurora.instanceClass',
      't4g.medium',
      /did you mean "db\.t4g\.medium"\?$/,
    ],
    [
      'serverless max above 256',
      { aurora: { serverless: { minCapacity: 0.5, maxCapacity: 512 } } },
      'aurora.serverless.maxCapacity',
      512,
      /ACU 1–256 in steps of 0\.5, got 512$/,
    ],
    [
      'serverless min negative',
      { aurora: { serverless: { minCapacity: -1, maxCapacity: 4 } } },
      'aurora.serverless.minCapacity',
      -1,
      /ACU 0–256.*got -1$/,
    ],
    [
      'serverless step',
      { aurora: { serverless: { minCapacity: 0.3, maxCapacity: 4 } } },
      'aurora.serverless.minCapacity',
      0.3,
      /steps of 0\.5, got 0\.3$/,
    ],
    [
      'serverless min above max',
      { aurora: { serverless: { minCapacity: 8, maxCapacity: 4 } } },
      'aurora.serverless.minCapacity',
      8,
      /^must be ≤ aurora\.serverless\.maxCapacity \(4\), got 8$/,
    ],
    [
      'engine version unknown',
      { aurora: { engineVersion: '16.99' } },
      'aurora.engineVersion',
      '16.99',
      /^must be an Aurora PostgreSQL version aws-cdk-lib knows and AWS still creates \(closest: 16\.13\): 14\.13,.*17\.9; got "16\.99"$/,
    ],
    [
      'engine version retired (E1 15.6)',
      { aurora: { engineVersion: '15.6' } },
      'aurora.engineVersion',
      '15.6',
      /^Aurora PostgreSQL 15\.6 is no longer creatable \(AWS retired it\); use a creatable version \(closest: 15\.8\): .*15\.8, 15\.10.*; got "15\.6"$/,
    ],
    [
      'engine version as number',
      { aurora: { engineVersion: 16.9 } },
      'aurora.engineVersion',
      16.9,
      /^must be a version string, one of 14\.13.*got 16\.9$/,
    ],
    [
      'readers negative',
      { aurora: { readers: -1 } },
      'aurora.readers',
      -1,
      /^must be an integer 0–15, got -1$/,
    ],
    [
      'max_connections too small',
      { aurora: { maxConnections: 5 } },
      'aurora.maxConnections',
      5,
      /^must be an integer 6–262143, got 5$/,
    ],
    ['runner count zero', { runners: { count: 0 } }, 'runners.count', 0, /^must be an integer 1–20, got 0$/],
    [
      'runner type malformed',
      { runners: { instanceType: 'c7g' } },
      'runners.instanceType',
      'c7g',
      /EC2 instance type such as "c7g\.large", got "c7g"$/,
    ],
    [
      'placement unknown',
      { runners: { placement: 'partition' } },
      'runners.placement',
      'partition',
      /one of "any", "cluster", "spread", got "partition"$/,
    ],
    [
      'ttlHours zero',
      { ttlHours: 0 },
      'ttlHours',
      0,
      /^must be a number of hours 1–720 \(a deploy alone takes 15–30 minutes\), got 0$/,
    ],
    ['ttlHours negative', { ttlHours: -2 }, 'ttlHours', -2, /hours 1–720.*got -2$/],
    [
      'expireAfterDays zero',
      { results: { expireAfterDays: 0 } },
      'results.expireAfterDays',
      0,
      /^must be an integer 1–3650, got 0$/,
    ],
    [
      'tag value not a string',
      { tags: { team: 7 } },
      'tags.team',
      7,
      /string of at most 256 characters, got 7$/,
    ],
    [
      'reserved tag key',
      { tags: { 'aws:cost': 'x' } },
      'tags["aws:cost"]',
      'aws:cost',
      /^key must be a tag key not starting with "aws:"/,
    ],
    ['empty suites', { suites: [] }, 'suites', [], /^must be a non-empty list of suite names, got \[\]$/],
    [
      'unknown suite',
      { suites: ['quick', 'e7'] },
      'suites[1]',
      'e7',
      /^must be a suite in the catalog \(quick, smoke, e1, .*\), got "e7"; did you mean "e1"\?$/,
    ],
    [
      'suite name malformed',
      { suites: ['Quick!'] },
      'suites[0]',
      'Quick!',
      /^must be a suite name \(lowercase letters, digits, hyphens\), got "Quick!"$/,
    ],
    ['bad region', { region: 'europe' }, 'region', 'europe', /AWS region such as "eu-west-1", got "europe"$/],
    [
      'budget not positive',
      { budget: { maxHourlyUsd: 0 } },
      'budget.maxHourlyUsd',
      0,
      /US dollars per hour ≥ 0\.01, got 0$/,
    ],
    [
      'reserved proxylab: tag key (would retag the lab and hand its runners to another operator)',
      { tags: { 'proxylab:lab': 'other' } },
      'tags["proxylab:lab"]',
      'proxylab:lab',
      /^key must be a tag key not starting with "proxylab:" \(proxylab sets proxylab:lab/,
    ],
    [
      'reserved proxylab: tag key in another case',
      { tags: { 'ProxyLab:Owner': 'x' } },
      'tags["ProxyLab:Owner"]',
      'ProxyLab:Owner',
      /not starting with "proxylab:"/,
    ],
    [
      'tag key with a control character',
      { tags: { 'team\u001b[2J': 'x' } },
      'tags["team\\u001b[2J"]',
      'team\u001b[2J',
      /^key must be a tag key of letters, digits, spaces and \+ - = \. _ : \/ @ \(AWS's tag characters\), got "team\\u001b\[2J"$/,
    ],
    [
      'tag key too long',
      { tags: { ['k'.repeat(129)]: 'x' } },
      `tags.${'k'.repeat(129)}`,
      'k'.repeat(129),
      /^key must be a tag key of at most 128 characters/,
    ],
    [
      'tag value with a character AWS refuses',
      { tags: { team: 'a;b' } },
      'tags.team',
      'a;b',
      /^must be a tag value of letters, digits, spaces and .*, got "a;b"$/,
    ],
    [
      'tag value too long',
      { tags: { team: 'v'.repeat(257) } },
      'tags.team',
      'v'.repeat(257),
      /^must be a string of at most 256 characters/,
    ],
    [
      'tag value starting with aws:',
      { tags: { team: 'AWS:x' } },
      'tags.team',
      'AWS:x',
      /not starting with "aws:"/,
    ],
    [
      'too many tags',
      { tags: Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`k${i}`, 'v'])) },
      'tags',
      '48 tags',
      /^must hold at most 47 tags \(AWS allows 50 per resource; proxylab sets 3 itself\), got 48$/,
    ],
    [
      'owner with a control character',
      { owner: 'me\u0007' },
      'owner',
      'me\u0007',
      /^must be letters, digits, spaces and .*\(it becomes a tag value\), got "me\\u0007"$/,
    ],
    [
      'owner with a character a tag value cannot hold',
      { owner: 'me <me@example.com>' },
      'owner',
      'me <me@example.com>',
      /^must be letters, digits, spaces and .* \(it becomes a tag value\)/,
    ],
    [
      'description with an escape sequence',
      { description: 'x\u001b]0;pwned\u0007' },
      'description',
      'x\u001b]0;pwned\u0007',
      /^must be text without control characters \(newlines and tabs are allowed\)/,
    ],
    ['ttlHours vanishingly small', { ttlHours: 1e-300 }, 'ttlHours', 1e-300, /hours 1–720.*got 1e-300$/],
    ['ttlHours shorter than a deploy', { ttlHours: 0.25 }, 'ttlHours', 0.25, /hours 1–720.*got 0\.25$/],
    [
      'budget vanishingly small',
      { budget: { maxHourlyUsd: 1e-300 } },
      'budget.maxHourlyUsd',
      1e-300,
      /≥ 0\.01, got 1e-300$/,
    ],
    ['lab name with capitals', { name: 'MyLab' }, 'name', 'MyLab', /lowercase letters.*got "MyLab"$/],
    ['lab name too long', { name: 'a'.repeat(25) }, 'name', 'a'.repeat(25), /at most 24 characters/],
  ])('%s', (_label, patch, expectedPath, expectedValue, message) => {
    // GIVEN / WHEN
    const problems = problemsOf({ ...BASE, ...patch });
    // THEN
    expect(problems).toHaveLength(1);
    expect(problems[0]).toEqual({
      path: expectedPath,
      value: expectedValue,
      message: expect.stringMatching(message),
    });
  });
});

describe('unknown keys are errors, with a suggestion when close to a known key', () => {
  test.each<[string, Record<string, unknown>, string, RegExp]>([
    [
      'typo at top level',
      { ttlHour: 8 },
      'ttlHour',
      /^unknown key \(did you mean "ttlHours"\?\); allowed keys here: name, description,/,
    ],
    ['transposed letters', { nmae: 'x' }, 'nmae', /did you mean "name"\?/],
    [
      'typo in aurora',
      { aurora: { maxConections: 100 } },
      'aurora.maxConections',
      /did you mean "maxConnections"\?\); allowed keys here: engineVersion,/,
    ],
    [
      'case slip in a proxy',
      { proxies: [{ name: 'a', requireTLS: true }] },
      'proxies[0].requireTLS',
      /did you mean "requireTls"\?/,
    ],
    ['unrelated key', { aurora: { colour: 'blue' } }, 'aurora.colour', /^unknown key; allowed keys here: /],
  ])('%s', (_label, patch, expectedPath, message) => {
    const problems = problemsOf({ ...BASE, ...patch });
    expect(problems).toEqual([
      expect.objectContaining({ path: expectedPath, message: expect.stringMatching(message) }),
    ]);
  });

  test('the unknown key’s value is reported', () => {
    expect(problemsOf({ ...BASE, ttlHour: 8 })[0]?.value).toBe(8);
  });
});

describe('structure', () => {
  test.each<[string, unknown, string, RegExp]>([
    ['not an object', [], '(root)', /^must be a JSON object, got \[\]$/],
    ['null', null, '(root)', /got null$/],
    ['missing name', {}, 'name', /^is required: must be a string$/],
    [
      'proxies not a list',
      { ...BASE, proxies: { name: 'a' } },
      'proxies',
      /^must be a list of proxies, got \{"name":"a"\}$/,
    ],
    [
      'instanceClass and serverless together',
      { ...BASE, aurora: { instanceClass: 'db.t4g.medium', serverless: { minCapacity: 0, maxCapacity: 2 } } },
      'aurora.serverless',
      /^must not be given together with aurora\.instanceClass/,
    ],
    [
      'proxy without name',
      { ...BASE, proxies: [{ maxConnectionsPercent: 50 }] },
      'proxies[0].name',
      /^is required: must be a string$/,
    ],
    // a section that is not an object says what one looks like (not zod's "Invalid input")
    [
      'budget null',
      { ...BASE, budget: null },
      'budget',
      /^must be an object such as \{ "maxHourlyUsd": 1\.5 \}, got null$/,
    ],
    [
      'aurora a string',
      { ...BASE, aurora: 'big' },
      'aurora',
      /^must be an object such as \{ "instanceClass": "db\.t4g\.medium" \}.*, got "big"$/,
    ],
    [
      'a proxy that is null',
      { ...BASE, proxies: [null] },
      'proxies[0]',
      /^must be a proxy object such as \{ "name": "pool100"/,
    ],
    [
      'runners a number',
      { ...BASE, runners: 2 },
      'runners',
      /^must be an object such as \{ "instanceType": "c7g\.large", "count": 1 \}, got 2$/,
    ],
    [
      'results a list',
      { ...BASE, results: [] },
      'results',
      /^must be an object such as \{ "retainOnDestroy": false/,
    ],
    [
      'serverless true',
      { ...BASE, aurora: { serverless: true } },
      'aurora.serverless',
      /^must be an object such as \{ "minCapacity": 0\.5, "maxCapacity": 4 \}, got true$/,
    ],
  ])('%s', (_label, raw, expectedPath, message) => {
    expect(problemsOf(raw)).toEqual([
      expect.objectContaining({ path: expectedPath, message: expect.stringMatching(message) }),
    ]);
  });

  test('the longest lab and proxy names still make a valid 63-character RDS proxy name', () => {
    const r = validateLab({
      name: 'a'.repeat(LIMITS.labNameMaxLength),
      proxies: [{ name: 'p'.repeat(LIMITS.proxyNameMaxLength) }],
    });
    expect(r.ok).toBe(true);
    expect(LIMITS.labNameMaxLength + 1 + LIMITS.proxyNameMaxLength).toBeLessThanOrEqual(63);
    expect(problemsOf({ name: 'x', proxies: [{ name: 'p'.repeat(LIMITS.proxyNameMaxLength + 1) }] })).toEqual(
      [
        expect.objectContaining({
          path: 'proxies[0].name',
          message: expect.stringMatching(/^must be at most 32 characters/),
        }),
      ],
    );
  });
});

test('every problem is reported at once, in file order', () => {
  // GIVEN a file with five unrelated mistakes
  const raw = {
    name: 'demo',
    aurora: { engineVersion: '15.6', readers: -1 },
    proxies: [{ name: 'a', maxConnectionsPercent: 120 }, { name: 'a' }],
    runners: { count: 0 },
    ttlHours: 0,
  };
  // WHEN
  const problems = problemsOf(raw);
  // THEN
  expect(problems.map((p) => p.path)).toEqual([
    'aurora.readers',
    'aurora.engineVersion',
    'proxies[0].maxConnectionsPercent',
    'proxies[1].name',
    'runners.count',
    'ttlHours',
  ]);
  expect(formatProblems(problems, 'demo.json').split('\n')).toEqual([
    'demo.json: 6 problems',
    '  aurora.readers: must be an integer 0–15, got -1',
    expect.stringMatching(/^ {2}aurora\.engineVersion: Aurora PostgreSQL 15\.6 is no longer creatable/),
    '  proxies[0].maxConnectionsPercent: must be an integer 1–100, got 120',
    '  proxies[1].name: must be unique (case-insensitive): proxies[0] is already named "a", got "a"',
    '  runners.count: must be an integer 1–20, got 0',
    '  ttlHours: must be a number of hours 1–720 (a deploy alone takes 15–30 minutes), got 0',
  ]);
});

describe('poolers', () => {
  const DEDICATED = {
    name: 'bouncer',
    kind: 'pgbouncer',
    placement: 'dedicated',
    instanceType: 'c7g.xlarge',
  };
  const withPooler = (extra: Record<string, unknown>) => ({ ...BASE, poolers: [{ ...DEDICATED, ...extra }] });

  test.each<[string, Record<string, unknown>, string, unknown, RegExp]>([
    [
      'processes 0',
      withPooler({ processes: 0 }),
      'poolers[0].processes',
      0,
      /^must be an integer 1–32, got 0$/,
    ],
    [
      'poolPercent 120',
      withPooler({ poolPercent: 120 }),
      'poolers[0].poolPercent',
      120,
      /^must be an integer 1–100, got 120$/,
    ],
    [
      'placement db-host',
      withPooler({ placement: 'db-host' }),
      'poolers[0].placement',
      'db-host',
      /^must be one of "dedicated", "on-runners" \(a managed database's own host — Aurora or RDS — cannot run a pooler.*got "db-host"$/,
    ],
    [
      'dedicated without instanceType',
      { ...BASE, poolers: [{ name: 'b', kind: 'pgbouncer', placement: 'dedicated' }] },
      'poolers[0].instanceType',
      undefined,
      /^is required for placement "dedicated": must be an EC2 instance type such as "c7g\.xlarge"/,
    ],
    [
      'instanceType on-runners',
      withPooler({ placement: 'on-runners' }),
      'poolers[0].instanceType',
      'c7g.xlarge',
      /^must not be given for placement "on-runners" .*got "c7g\.xlarge"$/,
    ],
    [
      'version not a release',
      withPooler({ version: '1.99.9' }),
      'poolers[0].version',
      '1.99.9',
      /^must be a PgBouncer release proxylab has pinned .*: 1\.26\.0, 1\.25\.2, 1\.24\.1; got "1\.99\.9"$/,
    ],
    [
      'version latest',
      withPooler({ version: 'latest' }),
      'poolers[0].version',
      'latest',
      /^must be a PgBouncer release .*got "latest"$/,
    ],
    [
      'empty poolModes',
      withPooler({ poolModes: [] }),
      'poolers[0].poolModes',
      [],
      /^must be a non-empty list of pool modes/,
    ],
    [
      'repeated poolModes',
      withPooler({ poolModes: ['session', 'session'] }),
      'poolers[0].poolModes',
      ['session', 'session'],
      /^must be a list of distinct pool modes/,
    ],
    [
      'unknown pool mode',
      withPooler({ poolModes: ['statement'] }),
      'poolers[0].poolModes[0]',
      'statement',
      /^must be one of "transaction", "session", got "statement"$/,
    ],
    [
      'kind',
      withPooler({ kind: 'pgdog' }),
      'poolers[0].kind',
      'pgdog',
      /^must be one of "pgbouncer", "pgdoorman", got "pgdog"$/,
    ],
    [
      'uppercase name',
      withPooler({ name: 'Bouncer' }),
      'poolers[0].name',
      'Bouncer',
      /^must be lowercase letters, digits and single hyphens/,
    ],
    [
      'negative maxPreparedStatements',
      withPooler({ maxPreparedStatements: -1 }),
      'poolers[0].maxPreparedStatements',
      -1,
      /^must be an integer 0–100000, got -1$/,
    ],
    [
      'tls not a boolean',
      withPooler({ tls: 'yes' }),
      'poolers[0].tls',
      'yes',
      /^must be true or false, got "yes"$/,
    ],
  ])('%s', (_name, raw, path, value, message) => {
    const problems = problemsOf(raw);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toEqual({ path, value, message: expect.stringMatching(message) });
  });

  test('names are unique across proxies and poolers, case-insensitively', () => {
    const problems = problemsOf({
      ...BASE,
      proxies: [{ name: 'Pool' }],
      poolers: [
        { name: 'pool', kind: 'pgbouncer', placement: 'on-runners' },
        { ...DEDICATED },
        { ...DEDICATED },
      ],
    });
    expect(problems.map((p) => [p.path, p.message.replace(/:.*/, '')])).toEqual([
      ['poolers[0].name', 'must be unique among proxies and poolers (case-insensitive)'],
      ['poolers[2].name', 'must be unique among proxies and poolers (case-insensitive)'],
    ]);
    expect(problems[0]?.message).toContain('proxies[0] is already named like it');
    expect(problems[1]?.message).toContain('poolers[1] is already named like it');
  });

  test('at most one pooler on the runners (both would listen on 6432 there)', () => {
    const onRunners = { kind: 'pgbouncer', placement: 'on-runners' };
    const problems = problemsOf({
      ...BASE,
      poolers: [
        { ...onRunners, name: 'a' },
        { ...DEDICATED, name: 'b' },
        { ...onRunners, name: 'c' },
      ],
    });
    expect(problems).toEqual([
      {
        path: 'poolers[2].placement',
        value: 'on-runners',
        message: expect.stringMatching(
          /^must not be "on-runners" twice: poolers\[0\] already runs on the runners/,
        ),
      },
    ]);
  });

  test('every pooler problem at once', () => {
    const problems = problemsOf({
      ...BASE,
      poolers: [
        {
          name: 'a',
          kind: 'pgbouncer',
          placement: 'dedicated',
          processes: 0,
          poolPercent: 120,
          version: 'latest',
        },
        { name: 'b', kind: 'pgbouncer', placement: 'db-host' },
      ],
    });
    expect(problems.map((p) => p.path).sort()).toEqual([
      'poolers[0].instanceType',
      'poolers[0].poolPercent',
      'poolers[0].processes',
      'poolers[0].version',
      'poolers[1].placement',
    ]);
  });

  test('defaults: every field filled, instanceType null on runners', () => {
    const r = validateLab({
      ...BASE,
      poolers: [DEDICATED, { name: 'local', kind: 'pgbouncer', placement: 'on-runners' }],
    });
    expect(r.ok && r.lab.poolers).toEqual([
      {
        name: 'bouncer',
        kind: 'pgbouncer',
        placement: 'dedicated',
        instanceType: 'c7g.xlarge',
        version: '1.25.2',
        poolModes: ['transaction', 'session'],
        poolPercent: 90,
        maxPreparedStatements: 200,
        processes: 1,
        workerThreads: null,
        tls: true,
        settings: {},
      },
      {
        name: 'local',
        kind: 'pgbouncer',
        placement: 'on-runners',
        instanceType: null,
        version: '1.25.2',
        poolModes: ['transaction', 'session'],
        poolPercent: 90,
        maxPreparedStatements: 200,
        processes: 1,
        workerThreads: null,
        tls: true,
        settings: {},
      },
    ]);
    expect(r.ok && summarizeLab(r.lab)).toContain(
      '2 poolers (bouncer PgBouncer 1.25.2 on c7g.xlarge transaction/session ×1, local PgBouncer 1.25.2 on the runners transaction/session ×1)',
    );
  });

  test("a PgDoorman pooler gets its driver's release and prepared-statement cache, worker threads left to the host", () => {
    // GIVEN / WHEN
    const r = validateLab({
      ...BASE,
      poolers: [{ name: 'doorman', kind: 'pgdoorman', placement: 'dedicated', instanceType: 'c7g.xlarge' }],
    });
    // THEN
    expect(r.ok && r.lab.poolers[0]).toMatchObject({
      kind: 'pgdoorman',
      version: '3.10.7',
      maxPreparedStatements: 8192,
      processes: 1,
      workerThreads: null,
    });
  });

  test.each([
    [
      'PgDoorman with several processes',
      { kind: 'pgdoorman', processes: 2 },
      'poolers[0].processes',
      2,
      /^must be 1 for PgDoorman: it runs one multithreaded process \(set workerThreads for more cores\); got 2$/,
    ],
    [
      'PgBouncer with worker threads',
      { kind: 'pgbouncer', workerThreads: 4 },
      'poolers[0].workerThreads',
      4,
      /^must not be given for PgBouncer: each process has one thread \(set processes for more cores\); got 4$/,
    ],
    [
      'PgDoorman worker threads out of range',
      { kind: 'pgdoorman', workerThreads: 0 },
      'poolers[0].workerThreads',
      0,
      /1–128/,
    ],
  ])('%s is refused naming the field', (_what, pooler, path, value, message) => {
    // GIVEN / WHEN
    const r = validateLab({
      ...BASE,
      poolers: [{ name: 'p', placement: 'dedicated', instanceType: 'c7g.xlarge', ...pooler }],
    });
    // THEN
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problems).toContainEqual(
      expect.objectContaining({ path, value, message: expect.stringMatching(message) }),
    );
  });

  test('price check: an unpriced host type, and more processes than the host (or the runners) have vCPUs', () => {
    const problems = unpricedProblems({
      ...BASE,
      poolers: [
        { ...DEDICATED, instanceType: 'c7g.huge' },
        { ...DEDICATED, name: 'four', processes: 5 },
        { ...DEDICATED, name: 'fits', processes: 4 },
        { name: 'local', kind: 'pgbouncer', placement: 'on-runners', processes: 32 },
      ],
    });
    expect(problems.map((p) => [p.path, p.value])).toEqual([
      ['poolers[0].instanceType', 'c7g.huge'],
      ['poolers[1].processes', 5],
      ['poolers[3].processes', 32],
    ]);
    expect(problems[1]?.message).toBe(
      'must be at most the vCPUs of c7g.xlarge (4): each PgBouncer process uses one core; got 5',
    );
    expect(problems[2]?.message).toBe(
      "must be at most the vCPUs of the runners' c7g.large (2): each PgBouncer process uses one core; got 32",
    );
  });

  test.each([
    [
      'a PgDoorman host of 2 GiB',
      { name: 'doorman', kind: 'pgdoorman', placement: 'dedicated', instanceType: 'c7g.medium' },
      {},
      'poolers[0].instanceType',
      'c7g.medium',
      'must have at least 4 GiB of memory: PgDoorman 3.10.7 is built from source on poolers[0] (its pooler host), a Rust release build with link-time optimization, and c7g.medium has 2 GiB; c7g.large (4 GiB) is the smallest c7g with enough; got "c7g.medium"',
    ],
    [
      'PgDoorman on runners of 2 GiB',
      { name: 'near', kind: 'pgdoorman', placement: 'on-runners' },
      { runners: { instanceType: 'c7g.medium' } },
      'runners.instanceType',
      'c7g.medium',
      'must have at least 4 GiB of memory: PgDoorman 3.10.7 is built from source on each runner (poolers[0] runs on the runners), a Rust release build with link-time optimization, and c7g.medium has 2 GiB; c7g.large (4 GiB) is the smallest c7g with enough; got "c7g.medium"',
    ],
  ])(
    'price check: %s is refused, its build needs the memory (driver host.buildMemory)',
    (_what, pooler, extra, path, value, message) => {
      // GIVEN / WHEN
      const problems = unpricedProblems({ ...BASE, ...extra, poolers: [pooler] });
      // THEN
      expect(problems).toEqual([{ path, value, message }]);
    },
  );

  test.each([
    ['PgDoorman on 4 GiB (c7g.large)', { kind: 'pgdoorman', instanceType: 'c7g.large' }],
    ['PgBouncer on 2 GiB (c7g.medium): a small C build', { kind: 'pgbouncer', instanceType: 'c7g.medium' }],
  ])('price check: %s has memory enough', (_what, pooler) => {
    expect(
      unpricedProblems({ ...BASE, poolers: [{ name: 'p', placement: 'dedicated', ...pooler }] }),
    ).toEqual([]);
  });

  test("price check: the one-core-per-process limit is the driver's capability, not a fixed fact", () => {
    // GIVEN a driver that says its processes are multithreaded
    const caps = jest.spyOn(pgbouncerDriver, 'capabilities').mockImplementation(() => ({
      preparedStatementsInTransactionMode: true,
      reusePort: true,
      peering: true,
      singleThreaded: false,
      runtimePoolResize: 'admin-set',
      gracefulBinaryUpgrade: false,
    }));
    try {
      // WHEN 5 processes go on a 4-vCPU host
      const problems = unpricedProblems({ ...BASE, poolers: [{ ...DEDICATED, name: 'four', processes: 5 }] });
      // THEN nothing to refuse, and the driver was asked for the lab's release
      expect(problems).toEqual([]);
      expect(caps).toHaveBeenCalledWith(pgbouncerDriver.defaultVersion);
    } finally {
      caps.mockRestore();
    }
  });

  test('every PgBouncer process keeps at least one server connection of the share (processes × runners)', () => {
    // GIVEN max_connections 30: 10 % is a share of 3 server connections
    const lab = (pooler: Record<string, unknown>, runners = 1) => ({
      ...BASE,
      aurora: { maxConnections: 30 },
      runners: { count: runners },
      poolers: [{ name: 'p', kind: 'pgbouncer', poolPercent: 10, ...pooler }],
    });
    // WHEN 4 processes on a dedicated host, or 2 processes on each of 2 runners, would need 4
    const tooMany = validateLab(lab({ placement: 'dedicated', instanceType: 'c7g.xlarge', processes: 4 }));
    const spread = validateLab(lab({ placement: 'on-runners', processes: 2 }, 2));
    // THEN refused, naming the field, the arithmetic and the share
    expect(tooMany.ok ? [] : tooMany.problems).toEqual([
      {
        path: 'poolers[0].processes',
        value: 4,
        message:
          "must leave each PgBouncer process at least one server connection: 4 process(es) > the pooler's share, 10 % of max_connections 30 = 3; got 4",
      },
    ]);
    expect(spread.ok ? [] : spread.problems.map((p) => p.message)).toEqual([
      "must leave each PgBouncer process at least one server connection: 2 process(es) × 2 runners > the pooler's share, 10 % of max_connections 30 = 3; got 2",
    ]);
    // AND 3 processes fit, as does any count when max_connections is the engine's formula
    expect(validateLab(lab({ placement: 'dedicated', instanceType: 'c7g.xlarge', processes: 3 })).ok).toBe(
      true,
    );
    expect(validateLab({ ...lab({ placement: 'on-runners', processes: 2 }, 2), aurora: {} }).ok).toBe(true);
  });

  test('every release has an upstream URL and a 64-hex checksum; the default is a release', () => {
    for (const r of PGBOUNCER_RELEASES) {
      expect(r.url).toBe(
        `https://www.pgbouncer.org/downloads/files/${r.version}/pgbouncer-${r.version}.tar.gz`,
      );
      expect(r.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(new Set(PGBOUNCER_RELEASES.map((r) => r.sha256)).size).toBe(PGBOUNCER_RELEASES.length);
    expect(findPgbouncerRelease(DEFAULT_PGBOUNCER_VERSION)).toBeDefined();
  });
});

describe('defaults', () => {
  test('a minimal lab gets every default', () => {
    const r = validateLab({ name: 'mini' });
    expect(r).toEqual({
      ok: true,
      lab: {
        name: 'mini',
        description: '',
        region: null,
        owner: null,
        database: {
          engine: 'aurora-postgresql',
          engineVersion: '17.9',
          capacity: { kind: 'provisioned', instanceClass: 'db.t4g.medium' },
          readers: 0,
          storageType: 'standard',
          maxConnections: null,
          performanceInsights: true,
          logConnections: false,
          snapshotOnDestroy: false,
        },
        proxies: [],
        poolers: [],
        runners: { instanceType: 'c7g.large', count: 1, placement: 'any', spot: false },
        crossZone: false,
        network: { mode: 'create' },
        results: { retainOnDestroy: false, expireAfterDays: 30 },
        ttlHours: 8,
        tags: {},
        suites: ['quick'],
        scenarios: [],
        disruptionLoad: null,
        budget: null,
      },
    });
  });

  test.each([
    [100, 50],
    [75, 37],
    [1, 0],
  ])('maxIdleConnectionsPercent defaults to half of max %i → %i', (max, idle) => {
    const r = validateLab({ name: 'x', proxies: [{ name: 'p', maxConnectionsPercent: max }] });
    expect(r.ok && r.lab.proxies[0]).toEqual({
      name: 'p',
      maxConnectionsPercent: max,
      maxIdleConnectionsPercent: idle,
      borrowTimeoutSeconds: 120,
      requireTls: true,
      debugLogging: false,
      settings: {},
    });
  });

  test('ttlHours: absent means the safe default of 8 h; null is an explicit opt-out', () => {
    const absent = validateLab({ name: 'x' });
    const optOut = validateLab({ name: 'x', ttlHours: null });
    expect(absent.ok && absent.lab.ttlHours).toBe(8);
    expect(optOut.ok && optOut.lab.ttlHours).toBeNull();
    expect(optOut.ok && summarizeLab(optOut.lab)).toMatch(/; no expiry$/);
  });

  test('serverless replaces the instance class', () => {
    const r = validateLab({ name: 'x', aurora: { serverless: { minCapacity: 0, maxCapacity: 4 } } });
    expect(r.ok && r.lab.database.engine === 'aurora-postgresql' && r.lab.database.capacity).toEqual({
      kind: 'serverless',
      minCapacityAcu: 0,
      maxCapacityAcu: 4,
    });
  });

  test('summary line', () => {
    const r = validateLab({
      name: 'x',
      aurora: { readers: 1, maxConnections: 550 },
      proxies: [{ name: 'p50', maxConnectionsPercent: 50 }],
    });
    expect(r.ok && summarizeLab(r.lab)).toBe(
      'x: Aurora PostgreSQL 17.9 on db.t4g.medium, 1 reader, max_connections 550; 1 proxy (p50 50%); 1 × c7g.large runner; ttl 8 h',
    );
  });
});

describe('files', () => {
  const dir = scratchDir('proxylab-config-');
  const write = (name: string, text: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  test('missing file', () => {
    const file = path.join(dir, 'nope.json');
    expect(checkLabFile(file)).toEqual({
      ok: false,
      problems: [{ path: '(file)', value: file, message: `does not exist: ${file}` }],
    });
  });

  test('invalid JSON names line and column', () => {
    const file = write('bad.json', '{\n  "name": "x",\n  "ttlHours": 8,\n}\n');
    const r = checkLabFile(file);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.problems[0]?.message).toBe(
        "is not valid JSON: '}' after ',' (JSON allows no trailing comma) (line 4, column 1)",
      );
  });

  test('empty file', () => {
    const r = checkLabFile(write('empty.json', ''));
    expect(!r.ok && r.problems[0]?.message).toMatch(
      /^is not valid JSON: there is no JSON value \(the text is empty\) \(line 1, column 1\)$/,
    );
  });

  test('loadLabFile throws a UsageError (exit 2) listing every problem, one per line', () => {
    const file = write('two.json', JSON.stringify({ name: 'x', ttlHours: 0, runners: { count: 0 } }));
    expect(() => loadLabFile(file)).toThrow(UsageError);
    try {
      loadLabFile(file);
    } catch (err) {
      expect((err as UsageError).exitCode).toBe(2);
      expect((err as UsageError).message.split('\n')).toEqual([
        `invalid lab file ${file}: 2 problems`,
        '  ttlHours: must be a number of hours 1–720 (a deploy alone takes 15–30 minutes), got 0',
        '  runners.count: must be an integer 1–20, got 0',
      ]);
    }
  });

  test('tags at the limit, with AWS characters, spaces and non-ASCII letters, are accepted', () => {
    const tags = Object.fromEntries(Array.from({ length: 47 }, (_, i) => [`k${i}`, 'v']));
    const r = validateLab({
      ...BASE,
      owner: 'jane.doe+lab@example.com',
      description: 'line one\nline two',
      tags: { ...tags, 'cost center': 'Zürich / R&D'.replace('&', '+'), 'team:db': '' },
    });
    expect(r.ok).toBe(false); // 49 tags
    const ok = validateLab({
      ...BASE,
      owner: 'jane.doe+lab@example.com',
      tags: { 'cost center': 'Zürich=1' },
    });
    expect(ok.ok && ok.lab.tags).toEqual({ 'cost center': 'Zürich=1' });
    expect(validateLab({ ...BASE, tags }).ok).toBe(true);
  });

  test('several tag problems are reported at once, each at its path', () => {
    const problems = problemsOf({
      ...BASE,
      tags: { 'proxylab:lab': 'other', 'proxylab:owner': 'x', ok: 'a;b' },
    });
    expect(problems.map((p) => p.path)).toEqual([
      'tags["proxylab:lab"]',
      'tags["proxylab:owner"]',
      'tags.ok',
    ]);
  });

  test('a UTF-8 byte order mark is accepted', () => {
    const r = checkLabFile(write('bom.json', '\ufeff{"name":"bom"}'));
    expect(r.ok && r.lab.name).toBe('bom');
  });

  test('a duplicate key is refused at its path, not silently last-wins', () => {
    const file = write('dup.json', '{"name":"a","tags":{"team":"x","team":"y"}}');
    expect(checkLabFile(file)).toEqual({
      ok: false,
      problems: [
        {
          path: 'tags.team',
          value: 'team',
          message: 'duplicate key "team" (JSON keeps only the last; say it once)',
        },
      ],
    });
  });

  test('1e400 is named as out of range, not "got null"', () => {
    const r = checkLabFile(write('big.json', '{"name":"a","ttlHours":1e400}'));
    expect(!r.ok && r.problems).toEqual([
      {
        path: 'ttlHours',
        value: '1e400',
        message: "the number 1e400 is out of JSON's range (a double holds up to ±1.8e308)",
      },
    ]);
  });

  test('5000-deep nesting is a usage error (exit 2), not a stack overflow', () => {
    const file = write('deep.json', '{"name":"a","tags":' + '['.repeat(5000) + ']'.repeat(5000) + '}');
    expect(() => loadLabFile(file)).toThrow(UsageError);
    const r = checkLabFile(file);
    expect(!r.ok && r.problems[0]?.message).toBe(
      'nested deeper than 64 levels (65 levels at the path shown, shortened); not a file proxylab writes or reads',
    );
  });

  test('a device or a FIFO is refused at once instead of read forever', () => {
    const t0 = Date.now();
    const r = checkLabFile('/dev/zero');
    expect(!r.ok && r.problems[0]?.message).toMatch(
      /^\/dev\/zero is a character device; expected a regular file$/,
    );
    const fifo = path.join(dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    const f = checkLabFile(fifo);
    expect(!f.ok && f.problems[0]?.message).toMatch(/is a FIFO \(named pipe\); expected a regular file$/);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  test('loadLabFile returns the lab with defaults', () => {
    expect(loadLabFile(write('ok.json', '{"name":"ok"}')).runners.count).toBe(1);
  });
});

describe('helpers', () => {
  test.each<[Array<string | number>, string]>([
    [[], '(root)'],
    [['name'], 'name'],
    [['proxies', 1, 'maxConnectionsPercent'], 'proxies[1].maxConnectionsPercent'],
    [['tags', 'cost-center'], 'tags["cost-center"]'],
  ])('formatPath(%j) = %s', (segments, expected) => {
    expect(formatPath(segments)).toBe(expected);
  });

  test.each<[string, string | undefined]>([
    ['ttlHour', 'ttlHours'],
    ['Name', 'name'],
    ['xyz', undefined],
  ])('suggestKey(%s) = %s', (key, expected) => {
    expect(suggestKey(key, ['name', 'ttlHours', 'tags'])).toBe(expected);
  });

  test.each<[string, string | undefined]>([
    ['15.6', '15.8'],
    ['16.12', '16.13'],
    ['17.99', '17.9'],
    ['12.4', undefined],
  ])('closestAcceptedVersion(%s) = %s', (v, expected) => {
    expect(closestAcceptedVersion(v)).toBe(expected);
  });

  test('instance class list covers the families the issue names', () => {
    for (const c of [
      'db.t4g.medium',
      'db.r6g.4xlarge',
      'db.r7g.large',
      'db.r8g.8xlarge',
      'db.r6i.large',
      'db.r7i.xlarge',
      'db.x2g.large',
    ]) {
      expect(AURORA_POSTGRES_INSTANCE_CLASSES).toContain(c);
    }
    expect(AURORA_POSTGRES_INSTANCE_CLASSES).not.toContain('db.t2.micro');
  });

  test('parseLabOutputs decodes lists and maps, and names a missing key', () => {
    const raw = {
      LabName: 'default',
      RunnerInstanceIds: 'i-1,i-2',
      ResultsBucketName: 'b',
      ClusterIdentifier: 'c',
      ClusterEndpoint: 'c.example',
      ClusterReaderEndpoint: 'c-ro.example',
      DatabasePort: '5432',
      DbInstanceIds: 'w,r1',
      DbInstanceResourceIds: 'db-W,db-R1',
      ProxyEndpoints: '{"pool100":"p.example"}',
      ProxyNames: '{"pool100":"default-pool100"}',
      DbSecretArn: 'arn:s',
      CollectorFunctionName: 'f',
    };
    const out = parseLabOutputs(raw);
    expect(out.runnerInstanceIds).toEqual(['i-1', 'i-2']);
    expect(out.dbInstanceResourceIds).toEqual(['db-W', 'db-R1']);
    expect(out.proxyEndpoints).toEqual({ pool100: 'p.example' });
    expect(out.databasePort).toBe(5432);
    expect(() => parseLabOutputs({ ...raw, DbSecretArn: undefined })).toThrow(/DbSecretArn is missing/);
  });
});

describe('RDS for PostgreSQL (postgres section)', () => {
  test('a minimal postgres section gets every default', () => {
    const r = validateLab({ name: 'pg', postgres: {} });
    expect(r.ok && r.lab.database).toEqual({
      engine: 'postgres',
      engineVersion: '17.9',
      instanceClass: 'db.t4g.micro',
      allocatedStorageGb: 20,
      storageType: 'gp3',
      multiAz: false,
      maxConnections: null,
      performanceInsights: true,
      logConnections: false,
      snapshotOnDestroy: false,
    });
  });

  test('neither section: Aurora with its defaults, as before', () => {
    const r = validateLab({ name: 'x' });
    expect(r.ok && r.lab.database.engine).toBe('aurora-postgresql');
  });

  test.each([
    [
      'both aurora and postgres',
      { aurora: {}, postgres: {} },
      'postgres',
      /^must not be given together with aurora: .*"aurora".*"postgres"/,
    ],
    [
      'a class RDS for PostgreSQL does not offer, with a close suggestion',
      { postgres: { instanceClass: 'db.r6g.huge' } },
      'postgres.instanceClass',
      /^must be a DB instance class RDS for PostgreSQL offers .*got "db\.r6g\.huge"; did you mean "db\.r6g\.large"\?$/,
    ],
    [
      'Aurora-only serverless class',
      { postgres: { instanceClass: 'db.serverless' } },
      'postgres.instanceClass',
      /^must be a DB instance class RDS for PostgreSQL offers/,
    ],
    [
      'storage under the gp3 minimum',
      { postgres: { allocatedStorageGb: 10 } },
      'postgres.allocatedStorageGb',
      /^must be 20–65536 GiB for gp3 storage .*got 10$/,
    ],
    [
      'storage over the gp3 maximum, reported once',
      { postgres: { allocatedStorageGb: 70000 } },
      'postgres.allocatedStorageGb',
      /^must be 20–65536 GiB for gp3 storage .*got 70000$/,
    ],
    [
      'zero storage, reported once',
      { postgres: { allocatedStorageGb: 0 } },
      'postgres.allocatedStorageGb',
      /^must be 20–65536 GiB for gp3 storage .*got 0$/,
    ],
    [
      'storage that is not a whole number',
      { postgres: { allocatedStorageGb: 20.5 } },
      'postgres.allocatedStorageGb',
      /^must be a whole number of GiB, got 20\.5$/,
    ],
    [
      'storage type without IOPS in the lab file',
      { postgres: { storageType: 'io1' } },
      'postgres.storageType',
      /^must be "gp3" \(io1\/io2 need provisioned IOPS/,
    ],
    [
      'an engine version AWS no longer creates',
      { postgres: { engineVersion: '11.22' } },
      'postgres.engineVersion',
      /^RDS for PostgreSQL 11 is past RDS end of standard support.*14\.20.*18\.3; got "11\.22"$/,
    ],
    [
      'a retired minor',
      { postgres: { engineVersion: '16.8' } },
      'postgres.engineVersion',
      /^RDS for PostgreSQL 16\.8 is no longer creatable \(AWS retired it\); use a creatable version \(closest: 16\.11\)/,
    ],
    [
      'an unknown version',
      { postgres: { engineVersion: '17.99' } },
      'postgres.engineVersion',
      /^must be an RDS for PostgreSQL version aws-cdk-lib knows and AWS still creates \(closest: 17\.9\)/,
    ],
    [
      'an Aurora key in the postgres section',
      { postgres: { readers: 1 } },
      'postgres.readers',
      /^unknown key; allowed keys here: engineVersion, instanceClass, allocatedStorageGb/,
    ],
  ])('%s is refused with the field named', (_what, fields, path, message) => {
    const r = validateLab({ name: 'x', ...fields });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([expect.objectContaining({ path, message: expect.stringMatching(message) })]);
  });

  test('every problem at once, each with its path', () => {
    const r = validateLab({
      name: 'x',
      aurora: {},
      postgres: { engineVersion: '11.22', instanceClass: 'db.r6g.huge', allocatedStorageGb: 10 },
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.path).sort()).toEqual([
      'postgres',
      'postgres.allocatedStorageGb',
      'postgres.engineVersion',
      'postgres.instanceClass',
    ]);
  });

  test('the RDS for PostgreSQL version list maps to aws-cdk-lib constants of the same version', () => {
    for (const e of RDS_POSTGRES_VERSIONS)
      expect(rds.PostgresEngineVersion[e.cdkKey].postgresFullVersion).toBe(e.version);
    expect(RDS_POSTGRES_VERSIONS.map((e) => e.version)).toContain(DEFAULT_RDS_POSTGRES_VERSION);
  });

  test('class lists differ where the engines differ: micro classes on RDS, not on Aurora', () => {
    expect(RDS_POSTGRES_INSTANCE_CLASSES).toContain('db.t4g.micro');
    expect(AURORA_POSTGRES_INSTANCE_CLASSES).not.toContain('db.t4g.micro');
    expect(RDS_POSTGRES_INSTANCE_CLASSES).not.toContain('db.t2.micro');
  });
});

describe('disruption suites: a lab must have something to fail over to (issue 22)', () => {
  test.each([
    [
      'Aurora without a reader',
      { aurora: { readers: 0 }, suites: ['failover'] },
      'aurora.readers',
      /^must be an integer ≥ 1: an Aurora failover \(FailoverDBCluster\) promotes a reader, and this lab has none; got 0 \(suite failover, scenario failover-aurora\)$/,
    ],
    [
      'Aurora with readers left to the default (0)',
      { aurora: {}, suites: ['failover'] },
      'aurora.readers',
      /; got "absent \(0 by default\)" \(suite failover/,
    ],
    [
      'RDS for PostgreSQL single-AZ',
      { postgres: { multiAz: false }, suites: ['quick', 'failover'] },
      'postgres.multiAz',
      /^must be true: a reboot with failover \(RebootDBInstance ForceFailover\) needs a Multi-AZ standby, and this lab has none; got false \(suite failover, scenario failover-rds\)$/,
    ],
  ])('%s → one problem on %s', (_what, lab, path, message) => {
    // WHEN
    const problems = problemsOf({ ...BASE, ...lab });
    // THEN
    expect(problems).toEqual([expect.objectContaining({ path, message: expect.stringMatching(message) })]);
  });

  test.each([
    ['Aurora with a reader', { aurora: { readers: 1 }, suites: ['failover'] }],
    ['RDS for PostgreSQL Multi-AZ', { postgres: { multiAz: true }, suites: ['failover'] }],
    // the local disruption suite injects nothing into AWS: no reader needed
    [
      'Aurora without a reader, local disruption suite only',
      { aurora: { readers: 0 }, suites: ['disruption'] },
    ],
  ])('%s is valid', (_what, lab) => {
    expect(validateLab({ ...BASE, ...lab }).ok).toBe(true);
  });
});
