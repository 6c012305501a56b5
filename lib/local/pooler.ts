/**
 * A self-hosted pooler of the local stand-in, whatever its product: what the stack, its pool
 * control, the infrastructure watch, the sampler and `--keep` ask of it. PgBouncer
 * (./pgbouncer.ts) and PgDoorman (./pgdoorman.ts) are the adapters; the statements and their
 * checks are their drivers' (lib/poolers/<product>).
 *
 * Which poolers a local run starts is a list of specs (`--poolers pgbouncer,pgbouncer:2,pgdoorman`,
 * or a suite's `localPoolers`): a product and its processes. Each becomes one instance, named after
 * its product (`pgbouncer`), or `<product>-<n>p` when the same product runs twice (`pgbouncer-2p`);
 * its targets are `<instance>-transaction` and `<instance>-session`.
 */
import type { PsqlTarget } from '../exec/psql';
import { POOLER_PROCESSES_MAX } from '../poolers/endpoint';
import { POOLER_PRODUCTS, type PoolMode, type PoolerProduct } from '../poolers/products';
import { poolerDriver } from '../poolers/registry';
import type { SettingValue } from '../products/types';

export interface LocalPoolerProcess {
  readonly index: number;
  readonly pid: number;
  /** Its pid file; null when the product writes none in the foreground (PgDoorman). */
  readonly pidFile: string | null;
  readonly logFile: string;
  /** Its configuration file (the reaper matches command lines against the stack's directory). */
  readonly configFile: string;
  /** Its admin console, through its own unix socket directory. */
  readonly admin: PsqlTarget;
}

export interface LocalPooler {
  /** `pgbouncer`, `pgbouncer-2p`, `pgdoorman`: the targets are `<instance>-<mode>`. */
  readonly instance: string;
  readonly product: PoolerProduct;
  readonly host: '127.0.0.1';
  /** The data port every process shares. */
  readonly port: number;
  /** Process 0's pid. */
  readonly pid: number;
  readonly version: string;
  readonly processes: readonly LocalPoolerProcess[];
  /** Worker threads of a multithreaded product's process; null for a single-threaded one. */
  readonly workerThreads: number | null;
  /** Pool (database alias) → pool mode. */
  readonly pools: Readonly<Record<string, PoolMode>>;
  /** Server connections of each pool per process at start. */
  readonly initialPoolSize: number;
  /** The prepared-statement cache at start (PgBouncer max_prepared_statements, PgDoorman's cache); null: none. */
  readonly initialMaxPreparedStatements: number | null;
  maxPreparedStatements(): number | null;
  setMaxPreparedStatements(n: number): Promise<void>;
  /** Server connections of each pool per process now. */
  poolSize(): number;
  /** Server connections one pool may open across all processes. */
  totalPoolSize(): number;
  /** Resize every pool on every process; checked through the admin console. */
  setPoolSize(size: number): Promise<void>;
  /** Reset every pool (or one) on every process: no server connection or state left from a step. */
  reset(dbname?: string): Promise<void>;
  /** Process 0's admin console. */
  admin(): PsqlTarget;
  /** The lab's settings it runs with (in its configuration file); {}: the product's defaults. */
  readonly settings: Readonly<Record<string, SettingValue>>;
  /** Settings the kit sets itself, with their values (recorded as `proxylab` in the effective settings). */
  readonly kitSettings: Readonly<Record<string, SettingValue | null>>;
  // ---- disruptions (lib/local/disruptions.ts): each acts on this pooler only
  /** PAUSE the pools on every process's admin console; checked. */
  pause(aliases: readonly string[]): Promise<void>;
  /** RESUME them; checked. */
  resume(aliases: readonly string[]): Promise<void>;
  /** The server port its pools point at now. */
  serverPort(): number;
  /** Rewrite its configuration to point at `port` and RELOAD, as an operator re-points a pooler; checked. */
  repoint(port: number): Promise<void>;
  /**
   * Replace its process(es) under load as its product documents (PgBouncer: a new process on the
   * port, the old one signalled; PgDoorman: SIGUSR2, the binary upgrade); `event` names each moment.
   */
  rollingRestart(event: (name: string, detail: string) => void): Promise<void>;
  /** After the window: the old processes gone, the pooler whole again (on its first files). */
  restoreAfterRoll(): Promise<void>;
  stop(): Promise<void>;
  release(): void;
  /** Resolves when any process ends, saying which and how. */
  readonly exited: Promise<string>;
}

export interface LocalPoolerSpec {
  readonly product: PoolerProduct;
  readonly processes: number;
  /** Its name: a lab pooler's (`bouncer-fast-retry`), else the product's (`pgbouncer`, `pgbouncer-2p`). */
  readonly instance: string;
  /**
   * The lab's settings for it (checked against the product's catalogue for the version it runs).
   * Absent: the product's defaults.
   */
  readonly settings?: Readonly<Record<string, SettingValue>>;
  /** The version the lab pins (run when this machine has it or can get it). Absent: whatever is here. */
  readonly version?: string;
}

/** The pooler list `proxylab local` runs when neither the flag nor the suite names one. */
export const DEFAULT_LOCAL_POOLERS = 'pgbouncer';

/**
 * `pgbouncer,pgbouncer:2,pgdoorman` → specs; every problem named. A PgBouncer entry without `:n`
 * gets `defaultProcesses` (--pooler-processes); a multithreaded product runs one process.
 */
export function parsePoolerSpecs(
  text: string,
  defaultProcesses = 1,
): { specs: LocalPoolerSpec[]; problems: string[] } {
  const problems: string[] = [];
  const raw: Array<{ product: PoolerProduct; processes: number }> = [];
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0)
    problems.push(`--poolers must name at least one of ${POOLER_PRODUCTS.join(', ')}`);
  for (const entry of entries) {
    const m = /^([a-z]+)(?::(\d+))?$/.exec(entry);
    const product = m?.[1];
    if (!m || product === undefined || !(POOLER_PRODUCTS as readonly string[]).includes(product)) {
      problems.push(
        `--poolers: "${entry}" is not <product>[:<processes>] with a product of ${POOLER_PRODUCTS.join(', ')}`,
      );
      continue;
    }
    const driver = poolerDriver(product);
    const single = driver.capabilities(driver.defaultVersion).singleThreaded;
    const processes = m[2] !== undefined ? Number(m[2]) : single ? defaultProcesses : 1;
    if (!single && processes !== 1) {
      problems.push(
        `--poolers: "${entry}": ${driver.displayName} runs one multithreaded process (its worker threads are this machine's cores)`,
      );
      continue;
    }
    if (!(processes >= 1 && processes <= POOLER_PROCESSES_MAX)) {
      problems.push(`--poolers: "${entry}": processes must be 1–${POOLER_PROCESSES_MAX}`);
      continue;
    }
    raw.push({ product: product as PoolerProduct, processes });
  }
  const specs: LocalPoolerSpec[] = [];
  for (const r of raw) {
    const twice = raw.filter((x) => x.product === r.product).length > 1;
    const instance = twice ? `${r.product}-${r.processes}p` : r.product;
    if (specs.some((s) => s.instance === instance)) {
      problems.push(`--poolers: ${r.product} with ${r.processes} process(es) is listed twice`);
      continue;
    }
    specs.push({ product: r.product, processes: r.processes, instance });
  }
  return { specs, problems };
}

/** The spec list as `--poolers` would say it (resume commands, the manifest's settings). */
export function formatPoolerSpecs(specs: readonly LocalPoolerSpec[]): string {
  return specs.map((s) => (s.processes === 1 ? s.product : `${s.product}:${s.processes}`)).join(',');
}
