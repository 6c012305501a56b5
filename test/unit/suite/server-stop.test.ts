/**
 * A server or pooler stopping under pgbench is recognised from what pgbench printed (real captures
 * in ./captures, see its README) and becomes the `server-stopped` class: an infrastructure cause,
 * never a measurement, unless the scenario measures server stops.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { classifySegment, parsePgbench } from '../../../lib/suite/parser';
import {
  describeServerStop,
  SERVER_STOP_MESSAGES,
  serverStopCause,
  serverStopMessageIn,
} from '../../../lib/suite/server-stop';
import type { ParsedRun } from '../../../lib/suite/types';

const CAPTURES = path.resolve(__dirname, 'captures');

function parseCapture(name: string, exitCode: number): ParsedRun {
  const stdout = path.join(CAPTURES, `${name}.stdout`);
  return parsePgbench({
    stdout: existsSync(stdout) ? readFileSync(stdout, 'utf8') : '',
    stderr: readFileSync(path.join(CAPTURES, `${name}.stderr`), 'utf8'),
    exitCode,
  });
}

describe('real pgbench output of a server or pooler stopping', () => {
  test.each([
    // capture, exit code, server-stopped count, SQLSTATE named, sender, other classes beside it
    ['pg15-fast-shutdown-via-pgbouncer', 2, 5, '57P01', 'PostgreSQL', []],
    ['pg15-immediate-shutdown-via-pgbouncer', 2, 5, '57P01', 'PostgreSQL', ['backend-died']],
    ['pg15-shutting-down-at-connect', 1, 1, '57P03', 'PostgreSQL', ['other']],
    ['pg15-crash-of-another-backend', 2, 3, '57P02', 'PostgreSQL', ['backend-died']],
    ['pg15-recovery-mode-at-connect', 1, 1, '57P03', 'PostgreSQL', ['other']],
    ['pgbouncer125-sigint-server-shutting-down', 2, 4, '08P01', 'PgBouncer', []],
    ['pgbouncer125-sigterm-pooler-shutting-down', 2, 1, '08P01', 'PgBouncer', ['connection-failed']],
  ] as const)(
    '%s (exit %s): server-stopped ×%s, an infrastructure cause',
    (name, exitCode, count, sqlstate, source, others) => {
      // WHEN the capture is parsed
      const run = parseCapture(name, exitCode);
      // THEN the stop is its own class (first: a shutdown at connect is not connection-failed)
      expect(run.complete).toBe(false);
      expect(run.errors.find((e) => e.class === 'server-stopped')?.count).toBe(count);
      expect(run.errors.map((e) => e.class).filter((c) => c !== 'server-stopped')).toEqual(others);
      // AND by default it is an infrastructure failure naming the class, the sender and the SQLSTATE
      const cause = serverStopCause(run);
      expect(cause).toMatch(new RegExp(`^infrastructure: server-stopped ×${count}: `));
      expect(cause).toContain(`${source} sent "`);
      expect(cause).toContain(`(SQLSTATE ${sqlstate}: `);
      // AND a scenario that measures server stops keeps it as a measurement
      expect(serverStopCause(run, 'measured')).toBeNull();
    },
  );

  test('a connection refused at connect time during a shutdown counts the aborted clients as before', () => {
    // pgbench 15 names each client; the server-stopped connect failure counts like connection-failed
    expect(parseCapture('pgbouncer125-sigterm-pooler-shutting-down', 2)).toMatchObject({
      abortedClients: 4,
      abortedWhileConnecting: 4,
    });
    expect(parseCapture('pg15-shutting-down-at-connect', 1).abortedWhileConnecting).toBe(1);
  });
});

describe('measurements are not server stops', () => {
  test.each([
    [
      'pgbench: error: connection to server at "127.0.0.1", port 5432 failed: FATAL:  sorry, too many clients already',
    ],
    [
      'pgbench: error: client 3 script 0 aborted in command 0 query 0: ERROR:  prepared statement "P_0" already exists',
    ],
    [
      'pgbench: error: client 0 aborted in command 1 (SQL) of script 0; perhaps the backend died while processing',
    ],
    // PgBouncer 1.18 names no cause here (1.25 quotes the server's error, which is matched instead):
    // a pool whose server refuses logins for any reason, not necessarily a stopped server.
    [
      'pgbench: error: connection to server at "127.0.0.1" failed: FATAL:  server login has been failing, try again later (server_login_retry)',
    ],
    ['pgbench: error: connection to server at "127.0.0.1", port 6432 failed: Connection refused'],
  ])('%s', (line) => {
    const run = parsePgbench({ stdout: '', stderr: `${line}\n`, exitCode: 2 });
    expect(run.errors.map((e) => e.class)).not.toContain('server-stopped');
    expect(serverStopCause(run)).toBeNull();
  });

  test('no result, or a count of 0, is no cause', () => {
    expect(serverStopCause(null)).toBeNull();
    expect(serverStopCause({ errors: [{ class: 'server-stopped', count: 0, sample: 'x' }] })).toBeNull();
  });
});

describe('the recognised messages', () => {
  test.each([
    ['FATAL:  terminating connection due to administrator command', '57P01'],
    ['WARNING:  terminating connection due to immediate shutdown command', '57P01'],
    ['FATAL:  terminating connection due to unexpected postmaster exit', '57P01'],
    ['WARNING:  terminating connection because of unexpected SIGQUIT signal', '57P01'],
    ['WARNING:  terminating connection because of crash of another server process', '57P02'],
    ['FATAL:  the database system is shutting down', '57P03'],
    ['FATAL:  the database system is starting up', '57P03'],
    ['FATAL:  the database system is in recovery mode', '57P03'],
    ['FATAL:  the database system is not yet accepting connections', '57P03'],
    ['FATAL:  the database system is not accepting connections', '57P03'],
    ['FATAL:  pooler is shutting down', '08P01'],
    ['FATAL:  server shutting down', '08P01'],
    [
      'FATAL:  server login has been failing, cached error: the database system is shutting down (server_login_retry)',
      '57P03',
    ],
  ])('%s → %s, class server-stopped', (text, sqlstate) => {
    expect(serverStopMessageIn(text)?.sqlstate).toBe(sqlstate);
    expect(classifySegment(`pgbench: error: client 0 script 0 aborted in command 0 query 0: ${text}`)).toBe(
      'server-stopped',
    );
  });

  test('every message in the table is matched by one of the rows above (none untested)', () => {
    // GIVEN one sample per row, WHEN looked up, THEN each finds its own row
    const samples = [
      'terminating connection due to administrator command',
      'terminating connection due to immediate shutdown command',
      'terminating connection due to unexpected postmaster exit',
      'terminating connection because of unexpected SIGQUIT signal',
      'terminating connection because of crash of another server process',
      'the database system is shutting down',
      'the database system is starting up',
      'the database system is in recovery mode',
      'the database system is not yet accepting connections',
      'pooler is shutting down',
      'server shutting down',
    ];
    expect(samples.map((s) => serverStopMessageIn(s))).toEqual(SERVER_STOP_MESSAGES);
  });

  test('a cause for an unrecognised sample still names the class and quotes the sample', () => {
    expect(describeServerStop('something else', 2)).toBe(
      'infrastructure: server-stopped ×2: the server or pooler stopped during the step; "something else"',
    );
  });
});
