/**
 * The runner's command line: one definition used both ways — the CLI builds it into the SSM
 * command, the runner entry (scripts/runner.ts) parses it. Nothing secret travels here: the DB
 * password is read by the runner from Secrets Manager (the ARN is not a secret).
 */
import { UsageError } from '../core/errors';
import { parseEndpoint, type Endpoint, type SslMode } from './targets';
import type { PoolPercents } from './proxy-pool';

export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The collector invocation the runner makes at the end of a run (runner 0 only). */
export interface CollectorSpec {
  readonly functionName: string;
  readonly clusterId: string;
  readonly instanceIds: readonly string[];
  readonly piResourceIds: readonly string[];
  /** DBProxyName of every proxy (the CloudWatch ProxyName dimension). */
  readonly proxies: readonly string[];
  /**
   * Instance class by DB instance id (`db.t4g.medium`): burstable (db.t*) instances get
   * CPUCreditBalance. Absent in argv written by older CLIs: no instance is treated as burstable.
   */
  readonly instanceClasses?: Readonly<Record<string, string>>;
}

export interface ProxySpec {
  /** Lab-local name (`pool100`), the target's name in results. */
  readonly name: string;
  readonly endpoint: Endpoint;
  /** The RDS DBProxyName (`<lab>-<name>`); defaults to `name`. */
  readonly dbProxyName: string;
  /** The lab's pool settings to restore after a sweep; read from the proxy when absent. */
  readonly lab: PoolPercents | null;
}

export interface RunnerArgs {
  readonly runId: string;
  readonly suite: string;
  readonly bucket: string;
  readonly runnerIndex: number;
  readonly runnerCount: number;
  readonly secretArn: string;
  readonly proxies: readonly ProxySpec[];
  readonly writerEndpoint: Endpoint;
  readonly region: string | null;
  /** Agreed start of the run (ISO); every runner waits until then before the first step. */
  readonly startAt: string | null;
  readonly collector: CollectorSpec | null;
  /** Test-only: `disable` lets a local PgBouncer stand in for a proxy. @default 'require' */
  readonly sslmode: SslMode;
  /** Test-only: do not call the RDS API (pool sweeps then fail with a clear error). */
  readonly poolControl: boolean;
  /** S3/Secrets Manager endpoint override (tests with moto_server). */
  readonly endpointUrl: string | null;
  /** Seconds to wait for the other runners at a step barrier. @default 900 */
  readonly barrierTimeoutSec: number;
  /**
   * Test-only: the target kind the `--proxies` entries get. `pgbouncer-transaction` lets a local
   * PgBouncer stand in for a proxy under the suites that only name PgBouncer targets (smoke,
   * quick). @default 'rds-proxy'
   */
  readonly proxyTargetKind: ProxyTargetKind;
  /**
   * The runner software version the CLI was built with (`runnerSoftwareVersion()`, the bundle's
   * content hash); the runner refuses to run when its own differs. null: not checked (tests,
   * older CLIs).
   */
  readonly expectVersion: string | null;
}

export type ProxyTargetKind = 'rds-proxy' | 'pgbouncer-transaction' | 'pgbouncer-session';
const PROXY_TARGET_KINDS: readonly ProxyTargetKind[] = [
  'rds-proxy',
  'pgbouncer-transaction',
  'pgbouncer-session',
];

/**
 * `name=host[:port]` entries, comma-separated; each may add `@dbProxyName` and `#max/idle`:
 * `pool100=lab-pool100.proxy-x.rds.amazonaws.com@lab-pool100#100/50`.
 */
function parseProxiesArg(text: string): ProxySpec[] {
  if (text.trim() === '') return [];
  const seen = new Set<string>();
  return text.split(',').map((entry, i) => {
    const m =
      /^([A-Za-z][A-Za-z0-9-]*)=([^@#]+)(?:@([A-Za-z][A-Za-z0-9-]*))?(?:#(\d{1,3})\/(\d{1,3}))?$/.exec(
        entry.trim(),
      );
    if (!m)
      throw new UsageError(
        `--proxies entry ${i + 1}: expected name=host[:port][@dbProxyName][#max/idle], got "${entry}"`,
      );
    const name = m[1] as string;
    if (seen.has(name)) throw new UsageError(`--proxies: proxy "${name}" given twice`);
    seen.add(name);
    const lab =
      m[4] !== undefined
        ? { maxConnectionsPercent: Number(m[4]), maxIdleConnectionsPercent: Number(m[5]) }
        : null;
    if (
      lab &&
      (lab.maxConnectionsPercent < 1 ||
        lab.maxConnectionsPercent > 100 ||
        lab.maxIdleConnectionsPercent > lab.maxConnectionsPercent)
    ) {
      throw new UsageError(`--proxies ${name}: pool must be max 1–100 and idle ≤ max, got ${m[4]}/${m[5]}`);
    }
    return {
      name,
      endpoint: parseEndpoint(m[2] as string, `--proxies ${name}`),
      dbProxyName: m[3] ?? name,
      lab,
    };
  });
}

function formatProxiesArg(proxies: readonly ProxySpec[]): string {
  return proxies
    .map(
      (p) =>
        `${p.name}=${p.endpoint.host}${p.endpoint.port === 5432 ? '' : `:${p.endpoint.port}`}` +
        (p.dbProxyName !== p.name ? `@${p.dbProxyName}` : '') +
        (p.lab ? `#${p.lab.maxConnectionsPercent}/${p.lab.maxIdleConnectionsPercent}` : ''),
    )
    .join(',');
}

/** Build the runner's argv (without `node runner.js`). */
export function runnerArgv(args: RunnerArgs): string[] {
  const argv = [
    '--run-id',
    args.runId,
    '--suite',
    args.suite,
    '--bucket',
    args.bucket,
    '--runner-index',
    String(args.runnerIndex),
    '--runner-count',
    String(args.runnerCount),
    '--secret-arn',
    args.secretArn,
    '--writer-endpoint',
    `${args.writerEndpoint.host}${args.writerEndpoint.port === 5432 ? '' : `:${args.writerEndpoint.port}`}`,
  ];
  if (args.proxies.length > 0) argv.push('--proxies', formatProxiesArg(args.proxies));
  if (args.region) argv.push('--region', args.region);
  if (args.startAt) argv.push('--start-at', args.startAt);
  if (args.collector) argv.push('--collector', JSON.stringify(args.collector));
  if (args.sslmode !== 'require') argv.push('--sslmode', args.sslmode);
  if (!args.poolControl) argv.push('--no-pool-control');
  if (args.endpointUrl) argv.push('--endpoint-url', args.endpointUrl);
  if (args.barrierTimeoutSec !== 900) argv.push('--barrier-timeout-sec', String(args.barrierTimeoutSec));
  if (args.proxyTargetKind !== 'rds-proxy') argv.push('--proxy-target-kind', args.proxyTargetKind);
  if (args.expectVersion) argv.push('--expect-version', args.expectVersion);
  return argv;
}

function parseCollector(text: string): CollectorSpec {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new UsageError('--collector: not JSON');
  }
  const o = (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
  const strs = (k: string): string[] => {
    const a = o[k];
    if (!Array.isArray(a) || a.some((x) => typeof x !== 'string'))
      throw new UsageError(`--collector.${k}: must be an array of strings`);
    return a as string[];
  };
  if (typeof o.functionName !== 'string' || o.functionName === '')
    throw new UsageError('--collector.functionName: required');
  if (typeof o.clusterId !== 'string' || o.clusterId === '')
    throw new UsageError('--collector.clusterId: required');
  let instanceClasses: Record<string, string> | undefined;
  if (o.instanceClasses !== undefined) {
    const ic = o.instanceClasses;
    if (
      !ic ||
      typeof ic !== 'object' ||
      Array.isArray(ic) ||
      Object.values(ic).some((x) => typeof x !== 'string')
    )
      throw new UsageError('--collector.instanceClasses: must be an object of strings');
    instanceClasses = ic as Record<string, string>;
  }
  return {
    functionName: o.functionName,
    clusterId: o.clusterId,
    instanceIds: strs('instanceIds'),
    piResourceIds: strs('piResourceIds'),
    proxies: strs('proxies'),
    ...(instanceClasses ? { instanceClasses } : {}),
  };
}

/** Parse the runner's argv; every problem is reported at once as a UsageError. */
export function parseRunnerArgv(argv: readonly string[]): RunnerArgs {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  const problems: string[] = [];
  const valueOptions = new Set([
    '--run-id',
    '--suite',
    '--bucket',
    '--runner-index',
    '--runner-count',
    '--secret-arn',
    '--proxies',
    '--writer-endpoint',
    '--region',
    '--start-at',
    '--collector',
    '--sslmode',
    '--endpoint-url',
    '--barrier-timeout-sec',
    '--proxy-target-kind',
    '--expect-version',
  ]);
  const flagOptions = new Set(['--no-pool-control']);
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] as string;
    const eq = raw.indexOf('=');
    const name = raw.startsWith('--') && eq > 0 ? raw.slice(0, eq) : raw;
    if (flagOptions.has(name)) {
      flags.add(name);
    } else if (valueOptions.has(name)) {
      const value = eq > 0 && raw.startsWith('--') ? raw.slice(eq + 1) : argv[++i];
      if (value === undefined) problems.push(`${name}: missing value`);
      else values.set(name, value);
    } else {
      problems.push(`unknown argument "${raw}"`);
    }
  }
  const required = (k: string): string => {
    const v = values.get(k);
    if (v === undefined || v === '') {
      problems.push(`${k}: required`);
      return '';
    }
    return v;
  };
  const int = (k: string, fallback: number | null, min: number): number => {
    const v = values.get(k);
    if (v === undefined) {
      if (fallback === null) problems.push(`${k}: required`);
      return fallback ?? 0;
    }
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) problems.push(`${k}: must be an integer ≥ ${min}, got "${v}"`);
    return n;
  };
  const runId = required('--run-id');
  if (runId && (!RUN_ID_PATTERN.test(runId) || runId.includes('..'))) {
    problems.push(`--run-id: must be letters, digits, ".", "_", "-" (no "/"), got "${runId}"`);
  }
  const suite = required('--suite');
  const bucket = required('--bucket');
  const runnerCount = int('--runner-count', 1, 1);
  const runnerIndex = int('--runner-index', 0, 0);
  if (runnerIndex >= runnerCount)
    problems.push(`--runner-index: must be below --runner-count (${runnerCount}), got ${runnerIndex}`);
  const secretArn = required('--secret-arn');
  const writerText = required('--writer-endpoint');
  const startAt = values.get('--start-at') ?? null;
  if (startAt !== null && Number.isNaN(Date.parse(startAt)))
    problems.push(`--start-at: must be an ISO-8601 time, got "${startAt}"`);
  const sslmode = values.get('--sslmode') ?? 'require';
  if (sslmode !== 'require' && sslmode !== 'disable' && sslmode !== 'prefer')
    problems.push(`--sslmode: require, prefer or disable, got "${sslmode}"`);
  const barrierTimeoutSec = int('--barrier-timeout-sec', 900, 1);
  const proxyTargetKind = (values.get('--proxy-target-kind') ?? 'rds-proxy') as ProxyTargetKind;
  if (!PROXY_TARGET_KINDS.includes(proxyTargetKind))
    problems.push(`--proxy-target-kind: one of ${PROXY_TARGET_KINDS.join(', ')}, got "${proxyTargetKind}"`);
  let proxies: ProxySpec[] = [];
  let writerEndpoint: Endpoint = { host: '', port: 5432 };
  let collector: CollectorSpec | null = null;
  const collect = (fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  };
  collect(() => (proxies = parseProxiesArg(values.get('--proxies') ?? '')));
  if (writerText) collect(() => (writerEndpoint = parseEndpoint(writerText, '--writer-endpoint')));
  const collectorText = values.get('--collector');
  if (collectorText !== undefined) collect(() => (collector = parseCollector(collectorText)));
  if (problems.length > 0) throw new UsageError(`runner: ${problems.join('; ')}`);
  return {
    runId,
    suite,
    bucket,
    runnerIndex,
    runnerCount,
    secretArn,
    proxies,
    writerEndpoint,
    region: values.get('--region') ?? null,
    startAt,
    collector,
    sslmode: sslmode as SslMode,
    poolControl: !flags.has('--no-pool-control'),
    endpointUrl: values.get('--endpoint-url') ?? null,
    barrierTimeoutSec,
    proxyTargetKind,
    expectVersion: values.get('--expect-version') ?? null,
  };
}
