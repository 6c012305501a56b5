import {
  parsePgbouncerVersion,
  processPoolSize,
  renderPgbouncerIni,
  renderUserlist,
  supportsMaxPreparedStatements,
  supportsPeering,
  totalPoolSize,
  type PgbouncerIniInput,
} from '../../lib/poolers/pgbouncer/config';
import { processCpuTicks } from '../../lib/core/proc-stat';

const base: PgbouncerIniInput = {
  version: '1.25.2',
  processIndex: 1,
  processes: 3,
  listenAddr: '0.0.0.0',
  listenPort: 6432,
  socketDirs: ['/run/pgb/0', '/run/pgb/1', '/run/pgb/2'],
  server: { host: 'writer.example.internal', port: 5432, dbname: 'postgres' },
  poolModes: ['transaction', 'session'],
  defaultPoolSize: 360,
  maxPreparedStatements: 200,
  authType: 'scram-sha-256',
  authFile: '/etc/pgbouncer/userlist.txt',
  adminUsers: ['pgbouncer_admin'],
  statsUsers: ['pgbouncer_admin'],
  serverTlsSslmode: 'require',
  clientTls: { keyFile: '/etc/pgbouncer/key.pem', certFile: '/etc/pgbouncer/cert.pem' },
  logFile: '/var/log/pgbouncer/1.log',
  pidFile: '/run/pgb/1.pid',
  maxClientConnections: 5000,
};

describe('versions', () => {
  test.each([
    ['1.18.0', false, false],
    ['1.19.0', true, false],
    ['PgBouncer 1.21.0', true, true],
    ['1.25.2', true, true],
    ['2.0', true, true],
    ['garbage', false, false],
  ])('%s: peering %s, max_prepared_statements %s', (v, peers, mps) => {
    expect(supportsPeering(v)).toBe(peers);
    expect(supportsMaxPreparedStatements(v)).toBe(mps);
  });
  test('parse', () => {
    expect(parsePgbouncerVersion('PgBouncer 1.18.0')).toEqual([1, 18, 0]);
    expect(parsePgbouncerVersion('none')).toBeNull();
  });
});

describe('pool split', () => {
  test.each([
    [90, 1200, 1, 1080, 1080],
    [90, 1200, 4, 1080, 270],
    [25, 40, 3, 10, 3], // rounded down: 9 in all, never more than the share
    [1, 40, 2, 1, 1], // at least 1 per process
  ])('%i %% of %i over %i processes → total %i, %i each', (pct, max, n, total, each) => {
    expect(totalPoolSize(pct, max)).toBe(total);
    expect(processPoolSize(pct, max, n)).toBe(each);
  });
});

describe('renderPgbouncerIni', () => {
  test('process 2 of 3 on 1.25: reuseport, its own socket dir, peers, TLS both sides, prepared statements', () => {
    const ini = renderPgbouncerIni(base);
    expect(ini).toMatch(
      /^postgres = host=writer\.example\.internal port=5432 dbname=postgres pool_mode=transaction$/m,
    );
    expect(ini).toMatch(
      /^postgres_session = host=writer\.example\.internal port=5432 dbname=postgres pool_mode=session$/m,
    );
    expect(ini).toMatch(/^so_reuseport = 1$/m);
    expect(ini).toMatch(/^unix_socket_dir = \/run\/pgb\/1$/m);
    expect(ini).toMatch(/^peer_id = 2$/m);
    expect(ini).toMatch(
      /^\[peers\]\n1 = host=\/run\/pgb\/0 port=6432\n2 = host=\/run\/pgb\/1 port=6432\n3 = host=\/run\/pgb\/2 port=6432$/m,
    );
    expect(ini).toMatch(/^default_pool_size = 360$/m);
    expect(ini).toMatch(/^max_prepared_statements = 200$/m);
    expect(ini).toMatch(/^server_tls_sslmode = require$/m);
    expect(ini).toMatch(/^client_tls_sslmode = require$/m);
    expect(ini).toMatch(/^client_tls_key_file = \/etc\/pgbouncer\/key\.pem$/m);
    expect(ini).toMatch(/^admin_users = pgbouncer_admin$/m);
    expect(ini).toMatch(/^stats_users = pgbouncer_admin$/m);
    expect(ini).toMatch(/^auth_type = scram-sha-256$/m);
  });

  test('1.18 has neither peering nor max_prepared_statements: those lines are left out', () => {
    const ini = renderPgbouncerIni({ ...base, version: '1.18.0' });
    expect(ini).toMatch(/^so_reuseport = 1$/m);
    expect(ini).not.toMatch(/peer_id|\[peers\]|max_prepared_statements/);
  });

  test('one process: no reuseport, no peers; no client TLS when not asked', () => {
    const ini = renderPgbouncerIni({
      ...base,
      processIndex: 0,
      processes: 1,
      socketDirs: ['/s'],
      clientTls: null,
    });
    expect(ini).not.toMatch(/so_reuseport|peer_id|\[peers\]|client_tls/);
  });

  test('a session-only pooler serves only the session alias', () => {
    const ini = renderPgbouncerIni({ ...base, poolModes: ['session'] });
    expect(ini).not.toMatch(/^postgres = /m);
    expect(ini).toMatch(/^pool_mode = session$/m);
  });

  test('bad input is refused', () => {
    expect(() => renderPgbouncerIni({ ...base, processIndex: 3 })).toThrow(/processIndex/);
    expect(() => renderPgbouncerIni({ ...base, socketDirs: ['/a'] })).toThrow(/socket/);
    expect(() => renderPgbouncerIni({ ...base, defaultPoolSize: 0 })).toThrow(/default_pool_size/);
    expect(() =>
      renderPgbouncerIni({ ...base, server: { ...base.server, host: 'a\nadmin_users = x' } }),
    ).toThrow(/line break/);
  });
});

describe('renderUserlist', () => {
  test('double quotes inside a value are doubled', () => {
    expect(renderUserlist([{ username: 'bench', password: 'p"w d' }])).toBe('"bench" "p""w d"\n');
  });
  test('a line break is refused', () => {
    expect(() => renderUserlist([{ username: 'u', password: 'a\nb' }])).toThrow(/line break/);
  });
});

describe('processCpuTicks', () => {
  test('utime + stime, counted after the last parenthesis (comm may hold spaces and parentheses)', () => {
    const line = '4242 (pg (b) x) S 1 4242 4242 0 -1 4194624 500 0 0 0 1234 567 0 0 20 0 1 0 100 1000 10';
    expect(processCpuTicks(line)).toBe(1801);
    expect(processCpuTicks('nonsense')).toBeNull();
  });
});
