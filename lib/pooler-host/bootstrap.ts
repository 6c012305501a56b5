/**
 * The pooler host's bootstrap (`node /opt/proxylab/pooler.js bootstrap --config FILE`), run by user
 * data after the pinned release is installed. It knows no product: the driver of `config.product`
 * (lib/poolers/registry.ts) renders the files and units and names the sockets. Validate the host
 * config, read the database and admin secrets from Secrets Manager, read `max_connections` from the
 * server, write the driver's files (PgBouncer: one ini per process and the 0600 userlist) and — with
 * `tls` — a self-signed key and certificate, start the processes and the agent (systemd units it
 * writes; injectable), then check health: every process's admin console answers the driver's
 * version statement with the pinned version and `SELECT 1` through the data port reaches the server. It resolves only then; user data turns the exit code into
 * cfn-signal, so a broken install fails the deploy instead of the first run.
 *
 * Secrets go only into the userlist file and into psql's environment (PGPASSWORD); every log line
 * goes through the redacting logger.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { z } from 'zod';
import { InfrastructureError, UsageError } from '../core/errors';
import type { Clock } from '../engine/ports';
import { POOLER_PROCESSES_MAX, POOLER_WORKER_THREADS_MAX } from '../poolers/endpoint';
import { agentUnit, agentUnitInstance, AGENT_UNIT, type PoolerHostConfig } from '../poolers/host-config';
import { controlKey, controlKeyFile } from '../poolers/control';
import { processPoolSize } from '../poolers/pool-size';
import type { PoolerDriver, PoolerHostLayout } from '../poolers/driver';
import { poolerDriver } from '../poolers/registry';
import {
  readAdminCredentials,
  readDbCredentials,
  redactingLogger,
  type AdminCredentials,
  type DbCredentials,
  type Logger,
} from '../aws/secrets';
import type { ScalarQuery } from '../exec/libpq';
import { POOL_MODES, POOLER_PLACEMENTS, POOLER_PRODUCTS } from '../poolers/products';
import { productEntry } from '../products';
import { checkSettings } from '../products/settings';

const lowerName = /^[A-Za-z][A-Za-z0-9-]*$/;

/**
 * A host config written before the host side was product-neutral: PgBouncer was the only product
 * (no `product`) and the binary was `pgbouncerPath`. Read as `product: pgbouncer`, `binaryPath`.
 */
function upgradeOldHostConfig(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  const { pgbouncerPath, ...rest } = raw as Record<string, unknown>;
  if (pgbouncerPath === undefined) return raw;
  if ('binaryPath' in rest || 'product' in rest) return raw; // both forms: let strict() name the stray key
  return { ...rest, product: 'pgbouncer', binaryPath: pgbouncerPath };
}

/** PoolerHostConfig as JSON from user data: every field checked, unknown keys refused. */
const hostConfigObject = z
  .object({
    name: z.string().regex(lowerName),
    product: z.enum(POOLER_PRODUCTS),
    placement: z.enum(POOLER_PLACEMENTS),
    region: z.string().min(1),
    dbSecretArn: z.string().min(1),
    adminSecretArn: z.string().min(1),
    serverHost: z.string().regex(/^[A-Za-z0-9.-]+$/),
    serverPort: z.number().int().min(1).max(65535),
    listenAddr: z.enum(['0.0.0.0', '127.0.0.1']),
    poolModes: z
      .array(z.enum(POOL_MODES))
      .min(1)
      .refine((m) => new Set(m).size === m.length, { message: 'pool modes must be unique' }),
    processes: z.number().int().min(1).max(POOLER_PROCESSES_MAX),
    workerThreads: z.number().int().min(1).max(POOLER_WORKER_THREADS_MAX).nullable().optional(),
    poolPercent: z.number().int().min(1).max(100),
    sharedBy: z.number().int().min(1),
    maxPreparedStatements: z.number().int().min(0),
    tls: z.boolean(),
    binaryPath: z.string().startsWith('/'),
    version: z.string().regex(/^\d+\.\d+\.\d+$/),
    // names and values checked against the product's catalogue below (parsePoolerHostConfig)
    settings: z
      .record(
        z.string().max(64),
        z.union([z.number(), z.boolean(), z.string().max(1000), z.array(z.string().max(63)).max(50)]),
      )
      .optional(),
  })
  .strict();
export const poolerHostConfigSchema = z.preprocess(upgradeOldHostConfig, hostConfigObject);

/** Parse the host config file's text; every problem named with its field. */
export function parsePoolerHostConfig(text: string, file: string): PoolerHostConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UsageError(`${file}: not JSON`);
  }
  const res = poolerHostConfigSchema.safeParse(raw);
  if (!res.success) {
    const problems = res.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new UsageError(`${file}: ${problems.join('; ')}`);
  }
  // The lab's settings once more against the catalogue for the pinned version: a value the stack did
  // not check (a hand-edited file) is refused here, before any configuration file is written.
  const cat = productEntry(res.data.product).settings;
  if (res.data.settings !== undefined && cat !== null) {
    const problems = checkSettings(cat, res.data.version, res.data.settings, 'settings');
    if (problems.length > 0)
      throw new UsageError(`${file}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  }
  return res.data;
}

/** Starts the processes: systemd on a host, child processes in tests. */
export interface PoolerProcessManager {
  /** Install what the starts need (unit files); called once before the first start. */
  prepare(): Promise<void>;
  /** (Re)start process i with its configuration. */
  startProcess(processIndex: number): Promise<void>;
  /** (Re)start the agent. */
  startAgent(): Promise<void>;
}

export interface CommandResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}
export type CommandRunner = (file: string, args: readonly string[]) => Promise<CommandResult>;

export const execCommand: CommandRunner = (file, args) =>
  new Promise((resolve) => {
    execFile(file, [...args], { timeout: 120_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr: stderr || (err && !stderr ? err.message : '') });
    });
  });

async function must(run: CommandRunner, file: string, args: readonly string[]): Promise<string> {
  const res = await run(file, args);
  if (res.code !== 0)
    throw new InfrastructureError(
      `${file} ${args.join(' ')} failed (exit ${res.code ?? 'signal'}): ${res.stderr.trim().split('\n').slice(-2).join(' ')}`,
    );
  return res.stdout;
}

/**
 * The sudoers drop-in of a product that rolls by generations (`host.rollingGeneration`): the agent's
 * user may run exactly `systemctl start` of each process's two generation units, no other command,
 * no argument pattern (sudoers(5): a command with arguments matches only those arguments). null: a
 * product that restarts itself (binary upgrade) needs none.
 */
export function rollingSudoers(
  config: Pick<PoolerHostConfig, 'name' | 'product' | 'processes'>,
  user: string,
): string | null {
  const host = poolerDriver(config.product).host;
  const gen = host.rollingGeneration;
  if (gen === undefined) return null;
  const commands: string[] = [];
  for (let i = 0; i < config.processes; i++)
    for (const unit of [host.processUnit(config.name, i), gen.processUnit(config.name, i)])
      commands.push(`/usr/bin/systemctl start ${unit}`);
  return [
    `# written by proxylab pooler bootstrap for ${config.name}: the pooler agent's rolling restart`,
    `${user} ALL=(root) NOPASSWD: ${commands.join(', ')}`,
    '',
  ].join('\n');
}

/** The host's process manager: writes the template units, then `systemctl enable` + `restart`. */
export function systemdProcessManager(
  config: PoolerHostConfig,
  user: string,
  run: CommandRunner = execCommand,
  unitDir = '/etc/systemd/system',
  sudoersDir = '/etc/sudoers.d',
): PoolerProcessManager {
  const gen = poolerDriver(config.product).host.rollingGeneration;
  return {
    async prepare() {
      for (const unit of poolerDriver(config.product).host.units(config, user))
        fs.writeFileSync(path.join(unitDir, unit.file), unit.text, { mode: 0o644 });
      fs.writeFileSync(path.join(unitDir, AGENT_UNIT), agentUnit(user), { mode: 0o644 });
      const sudoers = rollingSudoers(config, user);
      if (sudoers !== null) {
        const file = path.join(sudoersDir, `proxylab-pooler-${config.name}`);
        fs.writeFileSync(file, sudoers, { mode: 0o440 });
        fs.chmodSync(file, 0o440);
        // a drop-in sudo cannot parse would break sudo for everyone: checked before anything relies on it
        await must(run, 'visudo', ['-c', '-q', '-f', file]);
      }
      await must(run, 'systemctl', ['daemon-reload']);
    },
    async startProcess(i) {
      const unit = poolerDriver(config.product).host.processUnit(config.name, i);
      // a second bootstrap: a process a rolling restart left in the other generation goes first
      if (gen !== undefined) await must(run, 'systemctl', ['stop', gen.processUnit(config.name, i)]);
      await must(run, 'systemctl', ['enable', unit]);
      // restart, not start: a second bootstrap (a changed config) must load the new configuration
      await must(run, 'systemctl', ['restart', unit]);
    },
    async startAgent() {
      const unit = agentUnitInstance(config.name);
      await must(run, 'systemctl', ['enable', unit]);
      await must(run, 'systemctl', ['restart', unit]);
    },
  };
}

export interface BootstrapDeps {
  readonly secrets: SecretsManagerClient;
  /** psql: `SHOW max_connections` on the server, `SHOW VERSION` on each admin console, `SELECT 1`. */
  readonly query: ScalarQuery;
  /** Where the host's paths start: `/` on a host, a temp dir in tests. @default '/' */
  readonly root?: string;
  /** The system user's uid/gid (files it must read); null: leave ownership alone (tests as that user). */
  readonly owner: { readonly uid: number; readonly gid: number } | null;
  readonly processes: PoolerProcessManager;
  readonly run?: CommandRunner;
  readonly clock: Clock;
  /** Raw line writer; wrapped in a redacting logger. */
  readonly write: (line: string) => void;
  /** Test-only: the data port. @default the driver's host.dataPort */
  readonly dataPort?: number;
  /** @default 60 000 ms */
  readonly healthTimeoutMs?: number;
  /** The host's vCPUs (a multithreaded pooler's worker threads when the config leaves them open). @default os.cpus().length */
  readonly cpus?: number;
}

export interface BootstrapResult {
  readonly maxConnections: number;
  readonly poolSizePerProcess: number;
  readonly version: string;
}

/** Write `text` to `file` with `mode`, owned by `owner` (chmod after: the umask never widens it). */
function writeOwned(
  file: string,
  text: string,
  mode: number,
  owner: { uid: number; gid: number } | null,
): void {
  fs.writeFileSync(file, text, { mode });
  fs.chmodSync(file, mode);
  if (owner) fs.chownSync(file, owner.uid, owner.gid);
}

function mkdirOwned(dir: string, mode: number, owner: { uid: number; gid: number } | null): void {
  fs.mkdirSync(dir, { recursive: true, mode });
  if (owner) fs.chownSync(dir, owner.uid, owner.gid);
}

/** What every phase of one bootstrap shares. */
interface BootstrapContext {
  readonly config: PoolerHostConfig;
  readonly deps: BootstrapDeps;
  readonly log: Logger;
  readonly run: CommandRunner;
  readonly driver: PoolerDriver;
  readonly p: PoolerHostLayout;
  readonly port: number;
  /** `pooler NAME`: every message's prefix. */
  readonly me: string;
}

/** The installed binary must report the pinned version before anything is written. */
async function checkInstalledVersion(ctx: BootstrapContext): Promise<void> {
  const { config, driver, me } = ctx;
  const installed = await must(ctx.run, config.binaryPath, ['--version']);
  if (driver.host.parseVersion(installed) !== config.version)
    throw new InfrastructureError(
      `${me}: ${config.binaryPath} reports "${installed.trim().split('\n')[0] ?? ''}", not the pinned ${driver.displayName} ${config.version}`,
    );
}

/** `SHOW max_connections` on the server, and the pool size per process it gives. */
async function readPoolSize(
  ctx: BootstrapContext,
  db: DbCredentials,
): Promise<{ maxConnections: number; poolSize: number }> {
  const { config, me } = ctx;
  const serverText = await ctx.deps.query(
    {
      host: config.serverHost,
      port: config.serverPort,
      user: db.username,
      dbname: db.dbname,
      sslmode: 'require',
      env: { PGPASSWORD: db.password },
    },
    'SHOW max_connections',
  );
  const maxConnections = Number.parseInt(serverText, 10);
  if (!Number.isInteger(maxConnections) || maxConnections <= 0)
    throw new InfrastructureError(`${me}: SHOW max_connections returned "${serverText}"`);
  const poolSize = processPoolSize(config.poolPercent, maxConnections, config.processes, config.sharedBy);
  ctx.log.info(
    `${me}: max_connections ${maxConnections}, pool ${config.poolPercent} %${config.sharedBy > 1 ? ` shared by ${config.sharedBy} runners` : ''} → default_pool_size ${poolSize} per process`,
  );
  return { maxConnections, poolSize };
}

/** The configuration directory, each process's log and socket directories, and — with `tls` — the key and certificate. */
async function prepareDirectories(ctx: BootstrapContext): Promise<void> {
  const { config, deps, p } = ctx;
  mkdirOwned(p.confDir, 0o755, null);
  for (let i = 0; i < config.processes; i++) {
    mkdirOwned(path.dirname(p.logFile(i)), 0o755, deps.owner);
    // systemd recreates it as the unit's RuntimeDirectory; created here too for direct starts
    mkdirOwned(p.socketDir(i), 0o755, deps.owner);
  }
  if (config.tls) {
    // A key generated on the host, never leaving it; clients use sslmode=require (no verification),
    // like RDS Proxy's requireTls without a CA bundle.
    await must(ctx.run, 'openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-sha256',
      '-days',
      '825',
      '-subj',
      `/CN=proxylab-pooler-${config.name}`,
      '-keyout',
      p.tlsKey,
      '-out',
      p.tlsCert,
    ]);
    fs.chmodSync(p.tlsKey, 0o600);
    fs.chmodSync(p.tlsCert, 0o644);
    if (deps.owner) {
      fs.chownSync(p.tlsKey, deps.owner.uid, deps.owner.gid);
      fs.chownSync(p.tlsCert, deps.owner.uid, deps.owner.gid);
    }
  }
}

/** The driver's files (PgBouncer: one ini per process and the userlist), written with their modes and owner. */
function writeConfigFiles(
  ctx: BootstrapContext,
  root: string,
  poolSize: number,
  db: DbCredentials,
  admin: AdminCredentials,
): void {
  const { config, deps, driver, me } = ctx;
  const workerThreads = config.workerThreads ?? Math.max(1, deps.cpus ?? os.cpus().length);
  if (!driver.capabilities(config.version).singleThreaded)
    ctx.log.info(`${me}: ${workerThreads} worker thread(s) per process`);
  const files = driver.host.render({
    config,
    root,
    dataPort: ctx.port,
    poolSizePerProcess: poolSize,
    dbname: db.dbname,
    dbUser: { username: db.username, password: db.password },
    adminUser: { username: admin.username, password: admin.password },
    workerThreads,
    random: randomBytes,
  });
  for (const f of files) writeOwned(f.path, f.text, f.mode, deps.owner);
}

/** Retry `f` every 500 ms until it succeeds or the health deadline passes (then the last error, named). */
async function retryUntil<T>(
  ctx: BootstrapContext,
  deadline: number,
  what: string,
  f: () => Promise<T>,
): Promise<T> {
  const { deps, me } = ctx;
  for (;;) {
    try {
      return await f();
    } catch (err) {
      if (deps.clock.now().getTime() >= deadline)
        throw new InfrastructureError(
          `${me}: ${what} did not succeed within ${Math.round((deps.healthTimeoutMs ?? 60_000) / 1000)} s: ${err instanceof Error ? err.message : String(err)}`,
        );
      await deps.clock.sleep(500);
    }
  }
}

/** Health: every process's own admin console (its unix socket), then the data path to the server. */
async function checkHealth(ctx: BootstrapContext, db: DbCredentials, admin: AdminCredentials): Promise<void> {
  const { config, deps, driver, p, port, me } = ctx;
  const deadline = deps.clock.now().getTime() + (deps.healthTimeoutMs ?? 60_000);
  for (let i = 0; i < config.processes; i++) {
    const version = await retryUntil(ctx, deadline, `process ${i + 1}'s admin console`, () =>
      deps.query(
        {
          host: p.socketDir(i),
          port,
          user: admin.username,
          dbname: driver.adminDatabase,
          sslmode: 'disable',
          env: { PGPASSWORD: admin.password },
        },
        driver.host.versionStatement,
      ),
    );
    if (driver.host.parseVersion(version) !== config.version)
      throw new InfrastructureError(
        `${me}: process ${i + 1} answers ${driver.host.versionStatement} with "${version}", not ${config.version}`,
      );
    ctx.log.info(`${me}: process ${i + 1}/${config.processes} answers (${version})`);
  }
  const alias = driver.poolDatabaseAlias(db.dbname, config.poolModes[0] ?? 'transaction');
  // the processes share the port (PgBouncer: so_reuseport), which spreads connections across them: as many tries as processes reach most of them
  for (let k = 0; k < config.processes; k++) {
    const one = await retryUntil(ctx, deadline, 'SELECT 1 through the data port', () =>
      deps.query(
        {
          host: '127.0.0.1',
          port,
          user: db.username,
          dbname: alias,
          sslmode: config.tls ? 'require' : 'disable',
          env: { PGPASSWORD: db.password },
        },
        'SELECT 1',
      ),
    );
    if (one !== '1')
      throw new InfrastructureError(`${me}: SELECT 1 through ${driver.displayName} returned "${one}"`);
  }
  ctx.log.info(
    `${me}: SELECT 1 through 127.0.0.1:${port}/${alias} reached the server${config.tls ? ' (TLS)' : ''}`,
  );
}

export async function bootstrapPooler(
  config: PoolerHostConfig,
  deps: BootstrapDeps,
): Promise<BootstrapResult> {
  const secrets: string[] = [];
  const log: Logger = redactingLogger(deps.write, () => secrets);
  const driver = poolerDriver(config.product);
  const root = deps.root ?? '/';
  const ctx: BootstrapContext = {
    config,
    deps,
    log,
    run: deps.run ?? execCommand,
    driver,
    p: driver.host.layout(config.name, root),
    port: deps.dataPort ?? driver.host.dataPort,
    me: `pooler ${config.name}`,
  };

  await checkInstalledVersion(ctx);

  const db: DbCredentials = await readDbCredentials(deps.secrets, config.dbSecretArn);
  const admin = await readAdminCredentials(deps.secrets, config.adminSecretArn);
  const key = controlKey(admin.password, config.name);
  secrets.push(db.password, admin.password, JSON.stringify(db.password).slice(1, -1), key);
  log.info(
    `${ctx.me}: ${driver.displayName} ${config.version}, ${config.processes} process(es), server ${config.serverHost}:${config.serverPort}, user ${db.username}`,
  );

  const { maxConnections, poolSize } = await readPoolSize(ctx, db);
  await prepareDirectories(ctx);
  writeConfigFiles(ctx, root, poolSize, db, admin);
  // the agent's control key (lib/poolers/control.ts): derived from the admin secret, readable by the pooler's user only
  writeOwned(controlKeyFile(config.name, root), `${key}\n`, 0o600, deps.owner);

  await deps.processes.prepare();
  for (let i = 0; i < config.processes; i++) await deps.processes.startProcess(i);
  await deps.processes.startAgent();

  await checkHealth(ctx, db, admin);
  return { maxConnections, poolSizePerProcess: poolSize, version: config.version };
}
