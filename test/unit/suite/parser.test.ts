import { readdirSync, readFileSync } from 'fs';
import * as path from 'path';
import { checkConsistency, classifySegment, parsePgbench } from '../../../lib/suite/parser';
import type { ErrorClass, ParsedRun } from '../../../lib/suite/types';

const FIXTURES = path.resolve(__dirname, '../../fixtures/pgbench');

function pg14(name: string): ParsedRun {
  return parsePgbench({ combined: readFileSync(path.join(FIXTURES, 'pg14-rds', `${name}.out`), 'utf8') });
}

function pg15(name: string): ParsedRun {
  const base = path.join(FIXTURES, 'pg15-local', name);
  const meta = JSON.parse(readFileSync(`${base}.meta.json`, 'utf8')) as { exitCode: number };
  return parsePgbench({
    stdout: readFileSync(`${base}.stdout`, 'utf8'),
    stderr: readFileSync(`${base}.stderr`, 'utf8'),
    exitCode: meta.exitCode,
  });
}

function errorCounts(run: ParsedRun): Partial<Record<ErrorClass, number>> {
  return Object.fromEntries(run.errors.map((e) => [e.class, e.count]));
}

// Expected values read off each capture by hand (tps/latency lines; error counts with
// `grep -o 'already exists'` etc., which also counts the jumbled lines).
describe('pg14-rds captures (combined terminal output, pgbench 14.1, server 11.10)', () => {
  test.each([
    ['direct_1', 100, 1000, 3056.001222, 32.723, 667.011],
    ['direct_2', 200, 2000, 1216.553152, 164.399, 1441.067],
    ['direct_3', 300, 3000, 1145.441258, 261.908, 2369.158],
    ['direct_4', 400, 4000, 617.90672, 647.347, 3203.36],
    ['direct_5', 500, 5000, 358.097443, 1396.268, 5780.255],
    ['proxy_1', 100, 1000, 1021.229315, 97.921, 562.785],
    ['proxy_2', 200, 2000, 1806.162627, 110.732, 1095.188],
    ['proxy_3', 300, 3000, 1458.164531, 205.738, 1474.857],
    ['proxy_4', 400, 4000, 1385.217102, 288.763, 1798.422],
    ['proxy_6', 600, 6000, 1141.782562, 525.494, 2539.418],
    ['proxy_7', 700, 7000, 1547.095351, 452.461, 3174.766],
  ])(
    '%s: %i clients, %i transactions, tps %d',
    (name, clients, processed, tps, latencyAvgMs, initialConnectionMs) => {
      // WHEN
      const run = pg14(name);
      // THEN
      expect(run).toMatchObject({
        pgbenchVersion: '14.1',
        serverVersion: '11.10',
        transactionType: '<builtin: select only>',
        protocol: 'simple',
        clients,
        threads: 20,
        durationSec: null,
        transactionsPerClient: 10,
        transactionsProcessed: processed,
        transactionsExpected: processed,
        failedTransactions: null, // pgbench 14 does not print it
        tps,
        tpsMode: 'excluding-connections',
        latencyAvgMs,
        latencyStddevMs: null,
        initialConnectionMs,
        avgConnectionMs: null,
        scheduleLagAvgMs: null,
        abortedClients: 0,
        complete: true,
        exitCode: null,
        errors: [],
        progress: null,
      });
      expect(checkConsistency(run)).toEqual([]);
    },
  );

  test('direct_6: 600 clients above max_connections, every thread refused, run aborted', () => {
    // WHEN
    const run = pg14('direct_6');
    // THEN
    expect(run).toMatchObject({
      clients: 600,
      transactionsProcessed: 0,
      transactionsExpected: 6000,
      tps: null,
      tpsMode: null,
      latencyAvgMs: null,
      complete: false,
      // 20 refused connections, one per thread; pgbench 14 names no client, so this is a lower bound
      abortedClients: 20,
      abortedWhileConnecting: 20,
    });
    expect(run.errors).toHaveLength(1);
    expect(run.errors[0]).toMatchObject({ class: 'too-many-connections', count: 20 });
    expect(run.errors[0]?.sample).toContain('remaining connection slots are reserved');
  });

  test('proxy_5: reports what it read (400 clients, 5000/5000) and the check flags the inconsistency', () => {
    // WHEN
    const run = pg14('proxy_5');
    // THEN
    expect(run).toMatchObject({
      clients: 400,
      transactionsProcessed: 5000,
      transactionsExpected: 5000,
      tps: 1342.151131,
      complete: true,
    });
    const warnings = checkConsistency(run);
    expect(warnings.join('\n')).toMatch(/400 × 10 = 4000, but pgbench printed 5000/);
    expect(warnings.join('\n')).toMatch(/5000 transactions were processed/);
  });
});

describe('pg15-local captures (stdout/stderr apart, pgbench 15.18)', () => {
  test.each([
    // name, protocol, clients, processed, tps, tpsMode, latencyAvgMs, connection ms
    ['direct_C_sel1_c5_trust', 'simple', 5, 4052, 405.03596, 'including-connections', 12.345, 4.908],
    ['direct_C_sel1_c20_trust', 'simple', 20, 3831, 382.83898, 'including-connections', 52.241, 5.195],
    ['pgbsess_C_sel1_c5', 'simple', 5, 28862, 2885.980665, 'including-connections', 1.733, 0.656],
    ['pgbsess_C_sel1_c20', 'simple', 20, 29186, 2918.103047, 'including-connections', 6.854, 0.659],
    ['pgbtx_C_sel1_c5', 'simple', 5, 33448, 3344.096736, 'including-connections', 1.495, 0.565],
    ['pgbtx_C_sel1_c20', 'simple', 20, 37081, 3707.894212, 'including-connections', 5.394, 0.513],
    ['pgbtx_C_sel1_c60', 'simple', 60, 33745, 3374.112989, 'including-connections', 17.782, 0.564],
    ['pgb_S_extended_c5', 'extended', 5, 115745, 11575.975937, 'excluding-connections', 0.432, 1.86],
    ['pgb_S_extended_c50', 'extended', 50, 132951, 13310.944017, 'excluding-connections', 3.756, 15.789],
    ['pgb_S_simple_c5', 'simple', 5, 115901, 11592.191231, 'excluding-connections', 0.431, 2.338],
    ['pgb_S_simple_c50', 'simple', 50, 155986, 15607.924174, 'excluding-connections', 3.204, 10.417],
    ['pgb_S_simple_c60', 'simple', 60, 138043, 13818.400296, 'excluding-connections', 4.342, 17.212],
    ['pgb_S_simple_c200', 'simple', 200, 135666, 13639.482575, 'excluding-connections', 14.663, 70.028],
    ['pgb_sel1_extended_c5', 'extended', 5, 160127, 16014.560892, 'excluding-connections', 0.312, 1.641],
    ['pgb_sel1_extended_c50', 'extended', 50, 166859, 16705.77486, 'excluding-connections', 2.993, 14.738],
    ['pgb_sel1_simple_c5', 'simple', 5, 190834, 19084.825636, 'excluding-connections', 0.262, 1.434],
    ['pgb_sel1_simple_c50', 'simple', 50, 206586, 20680.80084, 'excluding-connections', 2.418, 13.558],
  ])(
    '%s: complete, %s, %i clients',
    (name, protocol, clients, processed, tps, tpsMode, latencyAvgMs, connMs) => {
      // WHEN
      const run = pg15(name);
      // THEN
      expect(run).toMatchObject({
        pgbenchVersion: '15.18',
        serverVersion: '15.18',
        protocol,
        clients,
        threads: 2,
        durationSec: 10,
        transactionsProcessed: processed,
        transactionsExpected: null, // -T run
        failedTransactions: 0,
        tps,
        tpsMode,
        latencyAvgMs,
        abortedClients: 0,
        abortedWhileConnecting: 0,
        complete: true,
        exitCode: 0,
        errors: [],
      });
      if (tpsMode === 'including-connections') {
        expect(run).toMatchObject({ avgConnectionMs: connMs, initialConnectionMs: null });
      } else {
        expect(run).toMatchObject({ initialConnectionMs: connMs, avgConnectionMs: null });
      }
    },
  );

  test.each([
    // prepared through the transaction pool: `already exists` logged, `does not exist` aborts the client
    [
      'pgb_S_prepared_c5',
      5,
      12,
      1470.227885,
      { 'prepared-statement-exists': 4, 'prepared-statement-missing': 5 },
      5,
    ],
    [
      'pgb_S_prepared_c50',
      50,
      180,
      4568.180088,
      { 'prepared-statement-exists': 46, 'prepared-statement-missing': 50 },
      50,
    ],
    [
      'pgb_sel1_prepared_c5',
      5,
      58180,
      5819.04219,
      { 'prepared-statement-exists': 3, 'prepared-statement-missing': 4 },
      4,
    ],
    [
      'pgb_sel1_prepared_c50',
      50,
      248,
      8713.372216,
      { 'prepared-statement-exists': 45, 'prepared-statement-missing': 50 },
      50,
    ],
    ['fmt2', 10, 63, 1661.392405, { 'prepared-statement-exists': 8, 'prepared-statement-missing': 10 }, 10],
  ])(
    '%s: prepared via transaction pool, %i clients: tps still printed, run incomplete',
    (name, clients, processed, tps, counts, aborted) => {
      // WHEN
      const run = pg15(name);
      // THEN
      expect(run).toMatchObject({
        protocol: 'prepared',
        clients,
        transactionsProcessed: processed,
        failedTransactions: 0, // aborted clients are not failed transactions
        tps,
        abortedClients: aborted,
        abortedWhileConnecting: 0,
        complete: false,
        exitCode: 2,
      });
      expect(errorCounts(run)).toEqual(counts);
      for (const e of run.errors) expect(e.sample.startsWith('pgbench: error:')).toBe(true);
    },
  );

  test('fmt2: -r statement latencies and latency stddev do not confuse the summary', () => {
    const run = pg15('fmt2');
    expect(run).toMatchObject({
      durationSec: 5,
      latencyAvgMs: 1.799,
      latencyStddevMs: 2.963,
      initialConnectionMs: 2.994,
    });
  });

  test('direct_C_sel1_c60: -C above max_connections fails mid-run, 35 clients refused', () => {
    // WHEN
    const run = pg15('direct_C_sel1_c60');
    // THEN
    expect(run).toMatchObject({
      clients: 60,
      transactionsProcessed: 1607,
      tps: 160.462435,
      tpsMode: 'including-connections',
      avgConnectionMs: 12.185,
      abortedClients: 35,
      abortedWhileConnecting: 35,
      complete: false,
      exitCode: 2,
    });
    expect(errorCounts(run)).toEqual({ 'too-many-connections': 35 });
  });

  test.each([
    ['direct_sel1_simple_c60_bench', 'remaining connection slots are reserved'],
    ['direct_sel1_simple_c60_postgres', 'sorry, too many clients already'],
  ])('%s: refused at start-up (exit 1, no summary); krb5 noise ignored', (name, text) => {
    // WHEN
    const run = pg15(name);
    // THEN
    expect(run).toMatchObject({
      pgbenchVersion: '15.18',
      clients: null,
      transactionsProcessed: null,
      tps: null,
      latencyAvgMs: null,
      abortedClients: 1,
      abortedWhileConnecting: 1,
      complete: false,
      exitCode: 1,
    });
    expect(errorCounts(run)).toEqual({ 'too-many-connections': 1 });
    expect(run.errors[0]?.sample).toContain(text);
  });

  test('every pg15-local capture is covered by a test above', () => {
    const names = readdirSync(path.join(FIXTURES, 'pg15-local'))
      .filter((f) => f.endsWith('.meta.json'))
      .map((f) => f.replace('.meta.json', ''));
    expect(names.sort()).toEqual(
      [
        'direct_C_sel1_c20_trust',
        'direct_C_sel1_c5_trust',
        'direct_C_sel1_c60',
        'direct_sel1_simple_c60_bench',
        'direct_sel1_simple_c60_postgres',
        'fmt2',
        'pgb_S_extended_c5',
        'pgb_S_extended_c50',
        'pgb_S_prepared_c5',
        'pgb_S_prepared_c50',
        'pgb_S_simple_c200',
        'pgb_S_simple_c5',
        'pgb_S_simple_c50',
        'pgb_S_simple_c60',
        'pgb_sel1_extended_c5',
        'pgb_sel1_extended_c50',
        'pgb_sel1_prepared_c5',
        'pgb_sel1_prepared_c50',
        'pgb_sel1_simple_c5',
        'pgb_sel1_simple_c50',
        'pgbsess_C_sel1_c20',
        'pgbsess_C_sel1_c5',
        'pgbtx_C_sel1_c20',
        'pgbtx_C_sel1_c5',
        'pgbtx_C_sel1_c60',
      ].sort(),
    );
  });
});

describe('formats and error text not in the captures', () => {
  const PG15_RATE = [
    'pgbench (15.6, server 15.4)',
    'transaction type: select-1.sql',
    'scaling factor: 1',
    'query mode: prepared',
    'number of clients: 591',
    'number of threads: 10',
    'maximum number of tries: 1',
    'duration: 20 s',
    'number of transactions actually processed: 85401',
    'number of failed transactions: 0 (0.000%)',
    'latency average = 3.012 ms',
    'latency stddev = 1.500 ms',
    'rate limit schedule lag: avg 7234.123 (max 16012.456) ms',
    'initial connection time = 1200.5 ms',
    'tps = 4270.114 (without initial connection time)',
  ].join('\n');
  const PROGRESS = [
    'progress: 1.0 s, 4253.9 tps, lat 2.339 ms stddev 1.026, 0 failed, lag 7123.456 ms',
    'progress: 2.0 s, 4301.0 tps, lat 2.100 ms stddev 0.900, 3 failed, lag 8000.000 ms, 2 skipped',
    'progress: 3.0 s, 0.0 tps, lat NaN ms stddev NaN',
  ].join('\n');

  test('pg15 with --rate: schedule lag, stddev, server version, progress series', () => {
    // WHEN
    const run = parsePgbench({ stdout: PG15_RATE, stderr: PROGRESS, exitCode: 0 });
    // THEN
    expect(run).toMatchObject({
      pgbenchVersion: '15.6',
      serverVersion: '15.4',
      clients: 591,
      scheduleLagAvgMs: 7234.123,
      latencyStddevMs: 1.5,
      tps: 4270.114,
      complete: true,
      errors: [],
    });
    expect(run.progress).toEqual([
      {
        elapsedSec: 1,
        tps: 4253.9,
        latencyAvgMs: 2.339,
        latencyStddevMs: 1.026,
        lagAvgMs: 7123.456,
        failed: 0,
        skipped: null,
      },
      {
        elapsedSec: 2,
        tps: 4301,
        latencyAvgMs: 2.1,
        latencyStddevMs: 0.9,
        lagAvgMs: 8000,
        failed: 3,
        skipped: 2,
      },
      {
        elapsedSec: 3,
        tps: 0,
        latencyAvgMs: null,
        latencyStddevMs: null,
        lagAvgMs: null,
        failed: null,
        skipped: null,
      },
    ]);
  });

  test('pg13 wording: both tps lines; the excluding figure is kept', () => {
    const out = [
      'number of clients: 20',
      'tps = 8.200000 (including connections establishing)',
      'tps = 9.100000 (excluding connections establishing)',
    ].join('\n');
    expect(parsePgbench({ combined: out })).toMatchObject({ tps: 9.1, tpsMode: 'excluding-connections' });
    expect(parsePgbench({ combined: 'tps = 8.2 (including connections establishing)' })).toMatchObject({
      tps: 8.2,
      tpsMode: 'including-connections',
    });
  });

  test('E1-style proxy errors: portal missing, statement exists, backend died; libpq continuation lines not counted twice', () => {
    const stderr = [
      'pgbench: error: client 12 script 0 aborted in command 0 query 0: ERROR:  portal "" does not exist',
      'pgbench: error: ERROR:  prepared statement "P_0" already exists',
      'pgbench: error: client 40 script 0 aborted in command 0 query 0: server closed the connection unexpectedly',
      '\tThis probably means the server terminated abnormally',
      '\tbefore or while processing the request.',
      'pgbench: error: client 41 aborted in command 0 (SQL) of script 0; perhaps the backend died while processing',
      'pgbench: error: Run was aborted; the above results are incomplete.',
    ].join('\n');
    // WHEN
    const run = parsePgbench({ stdout: '', stderr, exitCode: 2 });
    // THEN
    expect(errorCounts(run)).toEqual({
      'portal-missing': 1,
      'prepared-statement-exists': 1,
      'backend-died': 2,
    });
    expect(run).toMatchObject({ abortedClients: 3, abortedWhileConnecting: 0, complete: false, tps: null });
  });

  test('one physical line holding two errors counts both', () => {
    const stderr =
      'pgbench: error: ERROR:  prepared statement "P_0" already existspgbench: error: connection to server at "h", port 5 failed: FATAL:  password authentication failed for user "bench"\n';
    const run = parsePgbench({ stdout: '', stderr, exitCode: 2 });
    expect(errorCounts(run)).toEqual({ 'prepared-statement-exists': 1, 'auth-failed': 1 });
  });

  test('a progress line glued to an error is both a progress point and an error', () => {
    const stderr =
      'pgbench: error: ERROR:  current transaction is aborted, commands ignored until end of transaction blockprogress: 4.0 s, 10.0 tps, lat 1.000 ms stddev 0.100, 0 failed\n';
    const run = parsePgbench({ stdout: '', stderr, exitCode: 2 });
    expect(errorCounts(run)).toEqual({ 'transaction-aborted': 1 });
    expect(run.progress).toHaveLength(1);
    expect(run.progress?.[0]?.elapsedSec).toBe(4);
  });

  test('an error glued after a progress line is still counted', () => {
    const stderr =
      'progress: 5.0 s, 10.0 tps, lat 1.000 ms stddev 0.100, 0 failedpgbench: error: client 3 script 0 aborted in command 0 query 0: ERROR:  portal "" does not exist\n';
    const run = parsePgbench({ stdout: '', stderr, exitCode: 2 });
    expect(errorCounts(run)).toEqual({ 'portal-missing': 1 });
    expect(run.abortedClients).toBe(1);
    expect(run.progress?.map((p) => p.elapsedSec)).toEqual([5]);
  });

  test('timed out by the harness: timeout error, never complete even with a summary', () => {
    const run = parsePgbench({ stdout: PG15_RATE, stderr: '', exitCode: null, timedOut: true });
    expect(run.complete).toBe(false);
    expect(errorCounts(run)).toEqual({ timeout: 1 });
  });

  test('-t run: expected transactions from the a/b figure, incomplete when exit code is not 0', () => {
    const out = [
      'number of clients: 4',
      'number of transactions per client: 10',
      'number of transactions actually processed: 30/40',
      'tps = 10.0 (without initial connection time)',
    ].join('\n');
    const run = parsePgbench({ stdout: out, stderr: '', exitCode: 2 });
    expect(run).toMatchObject({
      transactionsExpected: 40,
      transactionsProcessed: 30,
      transactionsPerClient: 10,
      complete: false,
    });
  });

  test.each<[string, ErrorClass | null]>([
    [
      'pgbench: error: connection to server on socket "/tmp/.s.PGSQL.5432" failed: No such file or directory',
      'connection-failed',
    ],
    ['pgbench: error: could not connect to server: Connection refused', 'connection-failed'],
    [
      'pgbench: error: connection to server at "h" failed: FATAL:  no pg_hba.conf entry for host "1.2.3.4"',
      'auth-failed',
    ],
    [
      'pgbench: error: connection to server at "h" failed: FATAL:  too many connections for role "bench"',
      'too-many-connections',
    ],
    ['pgbench: error: ERROR:  no more connections allowed (max_client_conn)', 'too-many-connections'],
    [
      'pgbench: error: client 3 aborted: end of script reached without completing the last transaction',
      'other',
    ],
    ['pgbench: fatal: unexpected thing', 'other'],
    [
      "pgbench: ../../../src/util/support/threads.c:240: krb5int_getspecific: Assertion `destructors_set[keynum] == 1' failed.",
      null,
    ],
    ['pgbench: error: Run was aborted; the above results are incomplete.', null],
    ['pgbench: error: client 7 aborted while establishing connection', null],
    ['starting vacuum...end.', null],
    ['progress: 1.0 s, 5.0 tps, lat 1.000 ms stddev 0.000, 0 failed', null],
    ['\tThis probably means the server terminated abnormally', null],
  ])('classifySegment(%j) = %s', (segment, expected) => {
    expect(classifySegment(segment)).toBe(expected);
  });
});

describe('own captures (test/unit/suite/captures, pgbench 15.18)', () => {
  const dir = path.resolve(__dirname, 'captures');
  const read = (name: string): ParsedRun =>
    parsePgbench({
      stdout: readFileSync(path.join(dir, `${name}.stdout`), 'utf8'),
      stderr: readFileSync(path.join(dir, `${name}.stderr`), 'utf8'),
      exitCode: 0,
    });

  test('weighted mix with --rate: overall summary, not the per-script blocks', () => {
    const run = read('pg15-mixed-rate');
    expect(run).toMatchObject({
      transactionType: 'multiple scripts',
      transactionsProcessed: 972,
      tps: 488.908517,
      latencyAvgMs: 3.277,
      latencyStddevMs: 5.002,
      scheduleLagAvgMs: 1.112,
      initialConnectionMs: 23.581,
      complete: true,
      errors: [],
    });
    expect(run.progress).toEqual([
      {
        elapsedSec: 1,
        tps: 486,
        latencyAvgMs: 2.773,
        latencyStddevMs: 4.202,
        lagAvgMs: 0.791,
        failed: 0,
        skipped: null,
      },
    ]);
  });

  test('-t in pgbench 15 format', () => {
    expect(read('pg15-t50')).toMatchObject({
      transactionsPerClient: 50,
      transactionsProcessed: 200,
      transactionsExpected: 200,
      durationSec: null,
      tps: 8416.091567,
      complete: true,
    });
  });
});
