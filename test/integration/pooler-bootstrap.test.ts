/**
 * The pooler host's bootstrap after the package install, for real, with BOTH PgBouncer binaries
 * (Debian's 1.18.0 and the current one, ≥ 1.21, that test/helpers/pgbouncer-versions.ts finds;
 * what each writes and does follows its version's capabilities: peering since 1.19,
 * max_prepared_statements since 1.21): config generation, secrets (moto) → userlist, TLS key,
 * start of 2 processes, health check; then a client through the data port with sslmode=require,
 * and an admin query through each of the agent's relay ports reaching its own process.
 *
 * The server is a local PostgreSQL with ssl=on (a throwaway self-signed certificate) whose
 * pg_hba accepts TCP only as `hostssl … scram-sha-256`: PgBouncer's server_tls_sslmode=require and
 * the password from the secret are exercised, not assumed. systemd is replaced by a process
 * manager that starts the processes directly (as the `postgres` OS user: PgBouncer refuses root)
 * and the agent in-process.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { parseProbe, probeScript, runnerPoolerChecks } from '../../lib/operator/doctor';
import { startPoolerAgent, type PoolerAgent } from '../../lib/pooler-host/agent';
import { fetchPoolerCpu } from '../../lib/aws/pooler-agent-client';
import { bootstrapPooler, parsePoolerHostConfig } from '../../lib/pooler-host/bootstrap';
import { psqlScalarQuery } from '../../lib/exec/libpq';
import { systemClock } from '../../lib/engine/ports';
import { findBinaries, type LocalBinaries } from '../../lib/local/binaries';
import { findFreePort } from '../../lib/local/ports-free';
import { BENCH_DB, BENCH_USER, startPostgres, type PostgresCluster } from '../../lib/local/postgres';
import { resolveRunAs, startServer, type RunAs, type ServerProcess } from '../../lib/exec/process';
import { psqlExec } from '../../lib/exec/psql';
import { supportsMaxPreparedStatements, supportsPeering } from '../../lib/poolers/pgbouncer/config';
import { poolerPaths } from '../../lib/poolers/pgbouncer/host';
import { PGBOUNCER_RELEASES } from '../../lib/poolers/pgbouncer/releases';
import type { PoolerEndpoint, PoolerHostConfig } from '../../lib/poolers/pgbouncer/layout';
import { defined } from '../helpers/defined';
import { motoClientConfig, startMoto, type MotoServer } from '../helpers/moto';
import { pgdataTemplate } from '../helpers/pg-template';
import { lookUp } from '../helpers/looked-up';
import { pgbouncer118, pgbouncerModern } from '../helpers/pgbouncer-versions';

const FILE = 'test/integration/pooler-bootstrap.test.ts';
/** The current PgBouncer, looked up as the file loads: its version names its describe. */
const modern = lookUp(() => pgbouncerModern(FILE));

// A quote and a space in the password: the userlist must double the quote.
const DB_PASSWORD = `it "pw" ${randomBytes(6).toString('hex')}`;
const ADMIN_PASSWORD = `adm-${randomBytes(12).toString('hex')}`;
const ADMIN_USER = 'pgbouncer_admin';

let bins: LocalBinaries;
let runAs: RunAs | null;
let pg: PostgresCluster;
let moto: MotoServer;
let secrets: SecretsManagerClient;
let base: string;
let dbSecretArn: string;
let adminSecretArn: string;

beforeAll(async () => {
  // moto starts while PostgreSQL is set up (neither needs the other)
  const motoStarting = startMoto();
  bins = findBinaries({ install: false });
  runAs = resolveRunAs();
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-pooler-it-'));
  fs.chmodSync(base, 0o755);
  const tlsDir = path.join(base, 'pg-tls');
  fs.mkdirSync(tlsDir, { mode: 0o700 });
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-keyout',
      path.join(tlsDir, 'server.key'),
      '-out',
      path.join(tlsDir, 'server.crt'),
    ],
    { stdio: 'ignore' },
  );
  fs.chmodSync(path.join(tlsDir, 'server.key'), 0o600);
  if (runAs)
    for (const f of [tlsDir, path.join(tlsDir, 'server.key'), path.join(tlsDir, 'server.crt')])
      fs.chownSync(f, runAs.uid, runAs.gid);
  pg = await startPostgres({
    bins,
    baseDir: base,
    runAs,
    // the shared template data directory (initdb once per machine), not an initdb of its own
    dataTemplate: pgdataTemplate(),
    maxConnections: 40,
    superuserReservedConnections: 3,
    extraSettings: {
      ssl: 'on',
      ssl_cert_file: path.join(tlsDir, 'server.crt'),
      ssl_key_file: path.join(tlsDir, 'server.key'),
    },
  });
  // TCP only with TLS and a password (the superuser keeps its unix socket, trust).
  await psqlExec(pg.superuserTarget(), [
    `ALTER ROLE ${BENCH_USER} PASSWORD '${DB_PASSWORD.replace(/'/g, "''")}'`,
  ]);
  fs.writeFileSync(
    path.join(pg.dataDir, 'pg_hba.conf'),
    [
      'local all all trust',
      'hostssl all all 127.0.0.1/32 scram-sha-256',
      'host all postgres 127.0.0.1/32 trust',
      '',
    ].join('\n'),
  );
  await psqlExec(pg.superuserTarget(), ['SELECT pg_reload_conf()']);
  moto = await motoStarting;
  secrets = new SecretsManagerClient(motoClientConfig(moto));
  dbSecretArn =
    (
      await secrets.send(
        new CreateSecretCommand({
          Name: 'pooler-it-db',
          SecretString: JSON.stringify({
            username: BENCH_USER,
            password: DB_PASSWORD,
            dbname: BENCH_DB,
            host: '127.0.0.1',
            port: pg.port,
            engine: 'postgres',
          }),
        }),
      )
    ).ARN ?? '';
  adminSecretArn =
    (
      await secrets.send(
        new CreateSecretCommand({
          Name: 'pooler-it-admin',
          SecretString: JSON.stringify({ username: ADMIN_USER, password: ADMIN_PASSWORD }),
        }),
      )
    ).ARN ?? '';
}, 120_000);

afterAll(async () => {
  await pg?.stop();
  await moto?.stop();
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

/** `SELECT pg_sleep(20)` through psql, interrupted after 700 ms (psql sends a cancel request); its stderr. */
function cancelledSleep(
  conn: { host: string; port: number; user: string; dbname: string; env: Record<string, string> },
  psql: string,
): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(psql, ['-X', '-c', 'SELECT pg_sleep(20)'], {
      env: {
        ...process.env,
        ...conn.env,
        PGHOST: conn.host,
        PGPORT: String(conn.port),
        PGUSER: conn.user,
        PGDATABASE: conn.dbname,
        PGSSLMODE: 'require',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGINT'), 700);
    const hard = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('close', () => {
      clearTimeout(timer);
      clearTimeout(hard);
      resolve(err);
    });
  });
}

/** bash -c SCRIPT, its stdout and stderr (killed after 60 s). */
function runBash(script: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const hard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', () => {
      clearTimeout(hard);
      resolve({ stdout, stderr });
    });
  });
}

describe.each([
  ['1.18.0', () => ({ file: pgbouncer118(FILE), version: '1.18.0' })],
  [modern.value?.version ?? '≥ 1.21 (none found)', () => modern.get()],
])('pooler bootstrap with PgBouncer %s, 2 processes, TLS', (_label, which) => {
  test('writes config, userlist and TLS key, starts both processes, answers through the data port and each admin relay', async () => {
    const { file, version } = which();
    const root = fs.mkdtempSync(path.join(base, 'host-'));
    fs.chmodSync(root, 0o755);
    const paths = poolerPaths('bouncer', root);
    const dataPort = await findFreePort(new Set([pg.port]));
    const adminPorts = [await findFreePort(new Set([pg.port, dataPort]))];
    adminPorts.push(await findFreePort(new Set([pg.port, dataPort, ...adminPorts])));
    const statsPort = await findFreePort(new Set([pg.port, dataPort, ...adminPorts]));
    const configText = JSON.stringify({
      name: 'bouncer',
      product: 'pgbouncer',
      placement: 'dedicated',
      region: 'us-east-1',
      dbSecretArn,
      adminSecretArn,
      serverHost: '127.0.0.1',
      serverPort: pg.port,
      listenAddr: '127.0.0.1',
      poolModes: ['transaction', 'session'],
      processes: 2,
      poolPercent: 50,
      sharedBy: 1,
      maxPreparedStatements: 100,
      tls: true,
      binaryPath: file,
      version,
      // the lab's settings, as user data writes them: typed, rendered into every ini
      settings: { server_login_retry: 2, query_wait_timeout: 30 },
    } satisfies PoolerHostConfig);
    const config = parsePoolerHostConfig(configText, 'pooler-bouncer.json');
    const servers: ServerProcess[] = [];
    let agent: PoolerAgent | null = null;
    const lines: string[] = [];
    try {
      const result = await bootstrapPooler(config, {
        secrets,
        query: psqlScalarQuery(bins.psql),
        root,
        owner: runAs ? { uid: runAs.uid, gid: runAs.gid } : null,
        processes: {
          prepare: () => Promise.resolve(),
          startProcess: (i) => {
            servers.push(
              startServer('pgbouncer', config.binaryPath, [paths.iniFile(i)], {
                runAs,
                logFile: path.join(root, `stdout-${i}.log`),
                cwd: root,
              }),
            );
            return Promise.resolve();
          },
          startAgent: async () => {
            agent = await startPoolerAgent({
              config,
              paths,
              dataPort,
              adminPort: (i) => adminPorts[i] as number,
              statsPort,
            });
          },
        },
        clock: systemClock,
        write: (l) => lines.push(l),
        dataPort,
        healthTimeoutMs: 20_000,
      });
      // 50 % of 40 = 20 in all, 10 per process
      expect(result).toEqual({ maxConnections: 40, poolSizePerProcess: 10, version });
      expect(lines.join('')).toMatch(/process 2\/2 answers/);
      // secrets are in the userlist only: never in a log line, an ini or the config
      for (const text of [lines.join(''), fs.readFileSync(paths.iniFile(0), 'utf8'), configText]) {
        expect(text).not.toContain(DB_PASSWORD);
        expect(text).not.toContain(ADMIN_PASSWORD);
      }
      const userlist = fs.statSync(paths.userlist);
      expect(userlist.mode & 0o777).toBe(0o600);
      if (runAs) expect(userlist.uid).toBe(runAs.uid);
      expect(fs.readFileSync(paths.userlist, 'utf8')).toContain(`"${DB_PASSWORD.replace(/"/g, '""')}"`);
      expect(fs.statSync(paths.tlsKey).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(paths.tlsCert, 'utf8')).toMatch(/BEGIN CERTIFICATE/);
      const ini1 = fs.readFileSync(paths.iniFile(1), 'utf8');
      expect(ini1).toMatch(/^so_reuseport = 1$/m);
      expect(ini1).toMatch(/^default_pool_size = 10$/m);
      // each setting only where this version has it (lib/poolers/pgbouncer/config.ts)
      if (supportsPeering(version)) expect(ini1).toMatch(/^peer_id = 2$/m);
      else expect(ini1).not.toMatch(/peer_id/);
      if (supportsMaxPreparedStatements(version)) expect(ini1).toMatch(/^max_prepared_statements = 100$/m);
      else expect(ini1).not.toMatch(/max_prepared_statements/);

      // A client through the data port with TLS; the server side is TLS too (pg_stat_ssl).
      const query = psqlScalarQuery(bins.psql);
      const client = {
        host: '127.0.0.1',
        port: dataPort,
        user: BENCH_USER,
        dbname: `${BENCH_DB}_session`,
        sslmode: 'require' as const,
        env: { PGPASSWORD: DB_PASSWORD },
      };
      expect(await query(client, 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).toBe('t');
      expect(await query({ ...client, dbname: BENCH_DB }, 'SELECT 41 + 1')).toBe('42');
      // client TLS is required: a plain connection is refused
      await expect(query({ ...client, sslmode: 'disable' }, 'SELECT 1')).rejects.toThrow(/SSL|TLS|ssl/);
      // a wrong password is refused (auth from the userlist)
      await expect(query({ ...client, env: { PGPASSWORD: 'wrong' } }, 'SELECT 1')).rejects.toThrow(
        /password|authentication/i,
      );

      // Each relay port reaches its own process's admin console.
      for (const [i, port] of adminPorts.entries()) {
        const conf = await query(
          {
            host: '127.0.0.1',
            port,
            user: ADMIN_USER,
            dbname: 'pgbouncer',
            sslmode: 'prefer',
            env: { PGPASSWORD: ADMIN_PASSWORD },
          },
          'SHOW CONFIG',
        );
        const line = conf.split('\n').find((l) => l.startsWith('conffile|'));
        expect(line?.split('|')[1]).toBe(paths.iniFile(i));
        // the lab's settings are what the running process uses
        const value = (key: string) =>
          conf
            .split('\n')
            .find((l) => l.startsWith(`${key}|`))
            ?.split('|')[1];
        expect([value('server_login_retry'), value('query_wait_timeout')].map(Number)).toEqual([2, 30]);
      }
      if (supportsPeering(version)) {
        // Peering: a cancel request lands on whichever process the kernel picks; the peer forwards
        // it to the process running the query. Several tries so both processes see foreign cancels.
        for (let k = 0; k < 6; k++) {
          const started = Date.now();
          const out = await cancelledSleep({ ...client, dbname: BENCH_DB }, bins.psql);
          expect(out).toMatch(/canceling statement due to user request/);
          expect(Date.now() - started).toBeLessThan(8000); // the sleep is 20 s
        }
      }
      const cpu = await fetchPoolerCpu('127.0.0.1', statsPort);
      expect(cpu.processes.map((p) => p.index)).toEqual([0, 1]);
      expect(cpu.processes.map((p) => p.pid).sort()).toEqual(servers.map((s) => s.pid).sort());
      expect(cpu.clockTicksPerSecond).toBe(100);

      // `proxylab doctor`'s runner probe against this pooler, for real: its psql lines (TLS through
      // both pool-mode aliases, SHOW VERSION on each relay port with the admin user) and the stats
      // line through bash's /dev/tcp. A stand-in `aws` on PATH serves the two secrets (the AWS CLI
      // itself is the runner's, not under test); the S3 lines fail and are not looked at here.
      const fake = fs.mkdtempSync(path.join(base, 'fake-aws-'));
      fs.writeFileSync(
        path.join(fake, 'aws'),
        '#!/bin/bash\n[ "$1 $2 $3" = "secretsmanager get-secret-value --secret-id" ] && cat "$FAKE_SECRETS/$4" && exit 0\nexit 1\n',
        { mode: 0o755 },
      );
      fs.writeFileSync(
        path.join(fake, 'db'),
        JSON.stringify({ username: BENCH_USER, password: DB_PASSWORD, dbname: BENCH_DB }),
      );
      fs.writeFileSync(
        path.join(fake, 'admin'),
        JSON.stringify({ username: ADMIN_USER, password: ADMIN_PASSWORD }),
      );
      const endpoint: PoolerEndpoint = {
        name: 'bouncer',
        product: 'pgbouncer',
        placement: 'dedicated',
        host: '127.0.0.1',
        port: dataPort,
        adminPorts,
        statsPort,
        poolModes: ['transaction', 'session'],
        processes: 2,
        poolPercent: 50,
        maxPreparedStatements: 100,
        version,
        tls: true,
      };
      const script = probeScript({
        secretArn: 'db',
        region: 'us-east-1',
        bucket: 'no-bucket',
        targets: [],
        poolers: [endpoint],
        poolerAdminSecretArn: 'admin',
      });
      // async: the agent answers from this very process, so a blocking spawnSync would starve it
      const probe = await runBash(script.join('\n'), {
        ...process.env,
        PATH: `${fake}:${process.env.PATH ?? ''}`,
        FAKE_SECRETS: fake,
      });
      const probed = parseProbe(probe.stdout);
      const checks = runnerPoolerChecks(
        'runner local',
        'i-local',
        probed,
        {
          poolers: [endpoint],
          adminSecret: true,
          stackName: 'proxylab-it',
        },
        'npx proxylab deploy --lab x.json',
      );
      expect(checks.filter((c) => !c.ok)).toEqual([]);
      expect(checks.map((c) => c.title)).toEqual([
        'runner local: pooler admin secret readable',
        `runner local: pooler bouncer data port ${dataPort} (TLS), transaction pool`,
        `runner local: pooler bouncer data port ${dataPort} (TLS), session pool`,
        'runner local: pooler bouncer admin consoles',
        `runner local: pooler bouncer stats port ${statsPort}`,
      ]);
      expect(probed.get('pooler.bouncer.admin.1')).toBe(`PgBouncer ${version}`);
      // no secret in what the probe prints (SSM keeps a runner's stdout)
      for (const out of [probe.stdout, probe.stderr]) {
        expect(out).not.toContain(DB_PASSWORD);
        expect(out).not.toContain(ADMIN_PASSWORD);
      }
      // the same answers judged against another pinned version (a release a lab can pin, not the
      // one running here) fail with the redeploy fix
      const pinned = defined(
        PGBOUNCER_RELEASES.find((r) => r.version !== version)?.version,
        `a pinnable PgBouncer release other than ${version}`,
      );
      const other = runnerPoolerChecks(
        'runner local',
        'i-local',
        probed,
        {
          poolers: [{ ...endpoint, version: pinned }],
          adminSecret: true,
          stackName: 'proxylab-it',
        },
        'npx proxylab deploy --lab x.json',
      );
      expect(other.filter((c) => !c.ok).map((c) => c.detail)).toEqual([
        `process 0 runs PgBouncer ${version}; process 1 runs PgBouncer ${version}, the lab pins ${pinned}`,
      ]);
    } finally {
      await (agent as PoolerAgent | null)?.stop();
      await Promise.all(servers.map((s) => s.stop('SIGTERM', 5000)));
    }
    expect(servers.every((s) => s.exited())).toBe(true);
  }, 90_000);
});
