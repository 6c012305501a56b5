/**
 * The node-postgres probe's `sslmode` against a real PostgreSQL and PgBouncer (the local stack: no
 * TLS, so both answer the SSLRequest with 'N'): `prefer` reaches them in plain text, as libpq's
 * prefer does (a pooler with `tls: false` is probed with it), `require` still refuses them; and
 * once the server has TLS, `prefer` uses it (the probe's and the server-connection count's
 * sessions). The probe is lib/exec/pg-probe.ts, the sslmode rules lib/exec/pg-sslmode.ts.
 */
import { pgConnector, ProbeError, type ProbeEndpoint } from '../../lib/exec/pg-probe';
import { SERVER_WITHOUT_TLS_MESSAGE } from '../../lib/exec/pg-sslmode';
import { runCommand } from '../../lib/exec/process';
import { PgServerConnections } from '../../lib/exec/server-connections';
import { psqlExec, psqlQueryOne } from '../../lib/exec/psql';
import type { SslMode } from '../../lib/exec/libpq';
import { startLocalStack, type LocalStack } from '../helpers/local-stack';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** The probe endpoint of a local target, with the sslmode under test. */
function endpoint(target: string, sslmode: SslMode): ProbeEndpoint {
  const c = stack.target(target).connection();
  return {
    hosts: [{ host: c.host, port: c.port }],
    user: c.user,
    dbname: c.dbname,
    sslmode,
    targetSessionAttrs: 'any',
    label: `${target} sslmode=${sslmode}`,
  };
}

/**
 * Whether the server sees the probe's sessions started since `since` encrypted (pg_stat_ssl, as the
 * superuser). PgBouncer's server connections carry the probe's application_name too; started
 * earlier, they are left out.
 */
async function probeSessionsTls(since: Date, application = 'proxylab-probe'): Promise<string[]> {
  const rows = await psqlQueryOne(
    stack.postgres.superuserTarget(),
    `SELECT s.ssl::text AS ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = '${application}' AND a.backend_start >= '${since.toISOString()}'`,
  );
  return rows.map((r) => String(r.ssl));
}

test('prefer against PostgreSQL without TLS: the probe connects in plain text, writes and reads its ledger', async () => {
  // GIVEN the local PostgreSQL (ssl off: it answers the SSLRequest with 'N')
  const ep = endpoint('direct', 'prefer');
  const since = new Date();
  // WHEN the probe connects with sslmode=prefer and writes a ledger row
  const conn = await pgConnector(ep, 10_000);
  try {
    await conn.ensureLedger(10_000);
    const answer = await conn.write({ runId: 'sslmode-it', group: 'prefer', id: 'w1' }, 10_000);
    // THEN the write landed, on a session the server sees unencrypted
    expect(answer.inRecovery).toBe(false);
    expect([...(await conn.ledger('sslmode-it', 'prefer', 10_000))]).toEqual([['w1', 1]]);
    expect(await probeSessionsTls(since)).toEqual(['false']);
  } finally {
    await conn.close();
  }
});

test('prefer through PgBouncer without client TLS (a pooler with `tls: false`): SELECT 1 answers', async () => {
  // GIVEN the stack's PgBouncer (no client TLS configured)
  const conn = await pgConnector(endpoint('pgbouncer-transaction', 'prefer'), 10_000);
  // WHEN / THEN
  try {
    await expect(conn.select1(10_000)).resolves.toBeUndefined();
  } finally {
    await conn.close();
  }
});

test('require still requires TLS: a server without it is refused in the connect phase', async () => {
  // WHEN the probe connects with sslmode=require to the server without TLS
  const attempt = pgConnector(endpoint('direct', 'require'), 10_000);
  // THEN refused with what node-postgres says, as a connect failure (never a plain-text session)
  await expect(attempt).rejects.toBeInstanceOf(ProbeError);
  await expect(attempt).rejects.toMatchObject({
    failure: { phase: 'connect', message: SERVER_WITHOUT_TLS_MESSAGE },
  });
});

test('prefer against PostgreSQL with TLS: the probe uses it', async () => {
  // GIVEN the same server with ssl on (a throwaway self-signed pair in its data directory, where the
  // server's defaults ssl_cert_file / ssl_key_file look)
  const asServer = { runAs: stack.runAs, cwd: stack.postgres.dataDir, timeoutMs: 30_000 };
  const made = await runCommand(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-keyout',
      'server.key',
      '-out',
      'server.crt',
    ],
    asServer,
  );
  expect(made.exitCode).toBe(0);
  expect((await runCommand('chmod', ['0600', 'server.key'], asServer)).exitCode).toBe(0);
  await psqlExec(stack.postgres.superuserTarget(), ['ALTER SYSTEM SET ssl = on', 'SELECT pg_reload_conf()']);
  // the postmaster applies the reload asynchronously: wait until a new session sees it
  for (let i = 0; i < 50; i++) {
    const [row] = await psqlQueryOne(stack.postgres.superuserTarget(), 'SHOW ssl');
    if (row?.ssl === 'on') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // WHEN the probe, and the server-connection count (lib/exec/server-connections.ts), connect with sslmode=prefer
  const since = new Date();
  const conn = await pgConnector(endpoint('direct', 'prefer'), 10_000);
  const counter = new PgServerConnections({
    connection: { ...stack.target('direct').connection(), sslmode: 'prefer' },
  });
  // THEN their sessions are encrypted
  try {
    await conn.select1(10_000);
    const counted = await (await counter.watch()).stop();
    expect(counted.before).toEqual(expect.any(Number));
    expect(await probeSessionsTls(since)).toEqual(['true']);
    expect(await probeSessionsTls(since, 'proxylab-connection-probe')).toEqual(['true']);
  } finally {
    await conn.close();
    await counter.close();
  }
});
