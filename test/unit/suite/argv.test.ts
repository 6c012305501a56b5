import { UsageError } from '../../../lib/core/errors';
import {
  buildPgbenchArgv,
  buildPgbenchEnv,
  buildPgbenchInitArgv,
  redactArgv,
  scriptFilesFor,
  skipsVacuum,
} from '../../../lib/suite/argv';
import { getSuite } from '../../../lib/suite/catalog';
import { expandSuite, type PlannedStep, type TargetCapacity } from '../../../lib/suite/expand';
import type { ConnectionInfo } from '../../../lib/suite/types';

const LOCAL: TargetCapacity[] = [
  { ref: { kind: 'direct', name: 'direct' }, maxConnections: 40, poolSize: null },
  { ref: { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' }, maxConnections: 40, poolSize: 10 },
];
const CONN: ConnectionInfo = {
  host: '127.0.0.1',
  port: 25432,
  user: 'bench',
  dbname: 'bench',
  env: { PGPASSWORD: 's3cret-pw' },
};
const OPTS = { logPrefix: '/run/steps/x/pgbench_log', scriptDir: '/run/scripts' };

function step(suite: string, id: string, targets: TargetCapacity[] = LOCAL): PlannedStep {
  const s = expandSuite(getSuite(suite), targets).find((x) => x.stepId === id);
  if (!s) throw new Error(`no step ${id}`);
  return s;
}

describe('buildPgbenchArgv', () => {
  test('prepared through the transaction pool: full command line', () => {
    // GIVEN
    const s = step('smoke', 'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-off/r1');
    // WHEN
    const argv = buildPgbenchArgv(s, CONN, OPTS);
    // THEN
    expect(argv).toEqual([
      '-h',
      '127.0.0.1',
      '-p',
      '25432',
      '-U',
      'bench',
      '-n',
      '--progress',
      '1',
      '-M',
      'prepared',
      '-c',
      '5',
      '-j',
      '2',
      '-T',
      '3',
      '--log',
      '--log-prefix',
      '/run/steps/x/pgbench_log',
      '-f',
      '/run/scripts/select-1.sql',
      'bench',
    ]);
  });

  test.each([
    // GIVEN a script-file-only scenario at scale 10: pgbench's :scale would be 1 without -s
    [{ file: { name: 'own.sql', sql: 'SELECT 1;' } }, 10, ['-s', '10']],
    // at scale 1 pgbench's default already says 1
    [{ file: { name: 'own.sql', sql: 'SELECT 1;' } }, 1, null],
    // a built-in script reads the scale from pgbench_branches (pgbench ignores -s there)
    [{ builtin: 'tpcb-like' as const }, 10, null],
  ])('script %j at scale %d: -s %j', (part, scale, expected) => {
    const base = step('smoke', 'smoke-churn/direct/c5/simple/per-transaction/r1');
    const s: PlannedStep = { ...base, script: { parts: [part] }, params: { ...base.params, scale } };
    // WHEN
    const argv = buildPgbenchArgv(s, CONN, OPTS);
    // THEN
    const i = argv.indexOf('-s');
    expect(i < 0 ? null : argv.slice(i, i + 2)).toEqual(expected);
  });

  test('-C for per-transaction connect; never the password', () => {
    const s = step('smoke', 'smoke-churn/direct/c5/simple/per-transaction/r1');
    const argv = buildPgbenchArgv(s, CONN, OPTS);
    expect(argv).toContain('-C');
    expect(argv.join(' ')).not.toContain('s3cret-pw');
    expect(argv[argv.length - 1]).toBe('bench');
  });

  test('E2 direct: builtin -b, -t instead of -T, vacuum kept (no -n) for a builtin script on direct', () => {
    const s = step('e2', 'e2/direct/c8/simple/persistent/r1');
    const argv = buildPgbenchArgv(s, CONN, OPTS);
    expect(argv).not.toContain('-n');
    expect(argv).not.toContain('-T');
    expect(argv.slice(argv.indexOf('-t'), argv.indexOf('-t') + 2)).toEqual(['-t', '10']);
    expect(argv.slice(-3)).toEqual(['-b', 'select-only', 'bench']);
    expect(argv).not.toContain('-C');
  });

  test('E1: --rate and --sampling-rate on the published scale', () => {
    const cloud: TargetCapacity[] = [
      { ref: { kind: 'rds-proxy', name: 'proxy' }, maxConnections: 394, poolSize: 394 },
    ];
    const s = step('e1', 'e1/proxy/c591/prepared/persistent/r1', cloud);
    const argv = buildPgbenchArgv(s, { ...CONN, sslmode: 'require' }, OPTS);
    expect(argv.join(' ')).toContain(
      '-c 591 -j 10 -T 20 -R 100000 --log --log-prefix /run/steps/x/pgbench_log --sampling-rate 0.5',
    );
  });

  test('E4 mixed workload: -b name@weight for each part', () => {
    const s = step('e4', 'e4/pgbouncer-transaction/c60/simple/persistent/pool50/r1');
    const argv = buildPgbenchArgv(s, CONN, OPTS);
    expect(argv.slice(-5)).toEqual(['-b', 'select-only@8', '-b', 'tpcb-like@2', 'bench']);
  });

  test('pgbench 15+ flags only when the binary is known to be 15+', () => {
    const s = step('smoke', 'smoke-prepared/pgbouncer-transaction/c5/prepared/persistent/ps-off/r1');
    expect(() => buildPgbenchArgv(s, CONN, { ...OPTS, failuresDetailed: true })).toThrow(UsageError);
    expect(() => buildPgbenchArgv(s, CONN, { ...OPTS, pgbenchMajor: 14, maxTries: 3 })).toThrow(
      /needs pgbench 15/,
    );
    const argv = buildPgbenchArgv(s, CONN, {
      ...OPTS,
      pgbenchMajor: 16,
      failuresDetailed: true,
      maxTries: 3,
    });
    expect(argv).toEqual(expect.arrayContaining(['--failures-detailed', '--max-tries', '3']));
    expect(buildPgbenchArgv(s, CONN, { ...OPTS, pgbenchMajor: 17 })).not.toContain('--failures-detailed');
  });
});

test('scriptFilesFor: inline SQL files the engine writes; none for builtins', () => {
  expect(scriptFilesFor(step('smoke', 'smoke-churn/direct/c5/simple/per-transaction/r1'))).toEqual([
    { name: 'select-1.sql', content: 'SELECT 1;\n' },
  ]);
  expect(scriptFilesFor(step('e2', 'e2/direct/c8/simple/persistent/r1'))).toEqual([]);
});

test.each([
  ['smoke', 'smoke-churn/direct/c5/simple/per-transaction/r1', true], // file-only script
  ['e2', 'e2/direct/c8/simple/persistent/r1', false],
  ['e2', 'e2/pgbouncer-transaction/c8/simple/persistent/r1', true],
])('skipsVacuum(%s %s) = %s', (suite, id, expected) => {
  expect(skipsVacuum(step(suite, id))).toBe(expected);
});

test('buildPgbenchEnv: password and TLS mode in the environment only; GSSAPI encryption off unless the connection says', () => {
  expect(buildPgbenchEnv({ ...CONN, sslmode: 'require' })).toEqual({
    PGGSSENCMODE: 'disable',
    PGPASSWORD: 's3cret-pw',
    PGSSLMODE: 'require',
  });
  expect(buildPgbenchEnv({ host: 'h', port: 1, user: 'u', dbname: 'd' })).toEqual({
    PGGSSENCMODE: 'disable',
  });
  expect(
    buildPgbenchEnv({ host: 'h', port: 1, user: 'u', dbname: 'd', env: { PGGSSENCMODE: 'prefer' } }),
  ).toEqual({ PGGSSENCMODE: 'prefer' });
});

test('buildPgbenchInitArgv: scale, init flags, connection, dbname last', () => {
  expect(buildPgbenchInitArgv(4, ['--unlogged-tables', '--foreign-keys'], CONN)).toEqual([
    '-i',
    '-s',
    '4',
    '--unlogged-tables',
    '--foreign-keys',
    '--quiet',
    '-h',
    '127.0.0.1',
    '-p',
    '25432',
    '-U',
    'bench',
    'bench',
  ]);
  expect(() => buildPgbenchInitArgv(0, [], CONN)).toThrow(UsageError);
});

test('redactArgv masks conninfo passwords', () => {
  expect(redactArgv(['-d', 'host=h password=abc user=u', 'postgresql://u:pw@h/db'])).toEqual([
    '-d',
    'host=h password=*** user=u',
    'postgresql://u:***@h/db',
  ]);
});
