/**
 * The run request: what the operator (`proxylab run`) asks the runners to run, written once,
 * schema-checked, to `s3://<bucket>/runs/<runId>/request.json`. Every runner gets only
 * `--request s3://…/request.json --runner-index i` (plus the S3 region / endpoint it needs to read
 * it); runner 0 probes the environment (max_connections, versions) and turns the request into
 * plan.json, the other runners execute their share of that plan.
 *
 * No secret is in it: the runner reads the DB password from Secrets Manager by ARN.
 */
import { z } from 'zod';
import { UsageError } from '../core/errors';
import { poolerEndpointSchema } from '../poolers/endpoint';
import { RUN_PATHS, runKeyPrefix } from '../results/run-paths';
import { parseRunFile, targetProduction } from '../results/schemas';
import { MANAGED_PROXY_KINDS, PROXY_TARGET_KINDS } from '../suite/targets';
import { DATABASE_ENGINES } from '../suite/engines';
import type { SslMode } from '../exec/libpq';
import type { ProxyTargetKind, RunnerArgs, RunnerTestSettings, RunRequestArgs } from './runner-args';
import { PRODUCTION_RUNNER_SETTINGS, RUN_ID_PATTERN } from './runner-args';
import { runBlobs } from './s3-sink';
import { kitSettingsSchema, labSettingsSchema } from '../config/kit-settings';
import { createHash } from 'node:crypto';
import { LAB_SUITE_NAME } from '../suite/catalog';
import { shellScriptProblem } from '../suite/pgbench-script';
import { BUILTIN_SCRIPTS } from '../suite/scenario';
import { backgroundLoadSchema } from '../results/probe-schemas';
import { CONNECT_MODES, PROTOCOLS } from '../suite/types';
import { TARGET_SELECTOR_NAMES } from '../suite/experiments/common';
import { SCENARIO_NAME_PATTERN, SCRIPT_PATH_PATTERN } from '../config/schema';
import type { LabScenario } from '../config/types';
import type { Holds, SameShape } from '../results/schemas';
import type { S3Client } from '@aws-sdk/client-s3';

export const RUN_REQUEST_VERSION = 1;

const endpointSchema = z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65535) });
const poolSchema = z
  .object({
    maxConnectionsPercent: z.number().int().min(1).max(100),
    maxIdleConnectionsPercent: z.number().int().min(0).max(100),
  })
  .refine((p) => p.maxIdleConnectionsPercent <= p.maxConnectionsPercent, {
    message: 'idle must be ≤ max',
  });

const positiveInt = z.number().int().min(1);
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * A lab's own scenario as the operator validated it (lib/config/scenarios.ts, LabScenario), script
 * texts included: what `--suite lab` runs. The runner checks every script against its SHA-256, and
 * refuses one that runs shell commands (`\shell`, `\setshell`).
 */
export const labScenarioSchema = z.object({
  name: z.string().regex(SCENARIO_NAME_PATTERN),
  description: z.string(),
  workload: z
    .array(
      z.union([
        z.object({ builtin: z.enum(BUILTIN_SCRIPTS), weight: positiveInt }),
        z.object({
          file: z
            .object({
              path: z.string().regex(SCRIPT_PATH_PATTERN),
              name: z.string().regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*\.sql$/),
              sql: z.string().min(1),
              sha256: sha256Hex,
            })
            .refine((f) => createHash('sha256').update(f.sql, 'utf8').digest('hex') === f.sha256, {
              message: 'the script text does not match its sha256',
            })
            // The operator's validation refuses \shell / \setshell already; a request written by
            // other means is refused here too, before runner 0 plans it (lib/suite/pgbench-script.ts).
            .superRefine((f, ctx) => {
              const problem = shellScriptProblem(f.path, f.sql);
              if (problem !== null) ctx.addIssue({ code: 'custom', path: ['sql'], message: problem });
            }),
          weight: positiveInt,
        }),
      ]),
    )
    .min(1),
  scale: positiveInt,
  clients: z
    .array(
      z.union([
        positiveInt,
        z.object({ times: z.number().positive(), of: z.enum(['maxConnections', 'poolSize']) }),
      ]),
    )
    .min(1),
  durationSec: positiveInt.nullable(),
  transactionsPerClient: positiveInt.nullable(),
  protocols: z.array(z.enum(PROTOCOLS)).min(1),
  connects: z.array(z.enum(CONNECT_MODES)).min(1),
  repetitions: positiveInt,
  rateTps: z.number().positive().nullable(),
  jobs: positiveInt,
  targets: z.array(z.enum(['all', ...TARGET_SELECTOR_NAMES])).min(1),
});
/** The request's scenario and the validated lab's are the same shape, both ways (tsc fails otherwise). */
export type _LabScenarioCheck = Holds<SameShape<LabScenario, z.infer<typeof labScenarioSchema>>>;

export const runRequestSchema = z.object({
  requestVersion: z.literal(RUN_REQUEST_VERSION),
  runId: z.string().regex(RUN_ID_PATTERN),
  suite: z.string().min(1),
  bucket: z.string().min(1),
  runnerCount: z.number().int().min(1),
  secretArn: z.string().min(1),
  /** The database endpoints as described: the cluster writer and each proxy with its pool settings. */
  targets: z.object({
    writer: endpointSchema,
    proxies: z.array(
      z.object({
        name: z.string().regex(/^[A-Za-z][A-Za-z0-9-]*$/),
        endpoint: endpointSchema,
        /** The proxy's other endpoints by their targets' kind; absent (none) in every request so far. */
        endpoints: z.partialRecord(z.enum(MANAGED_PROXY_KINDS), endpointSchema).optional(),
        dbProxyName: z.string().min(1),
        lab: poolSchema.nullable(),
        /** The lab's settings of the proxy and proxylab's own; absent in requests from older CLIs. */
        settings: labSettingsSchema.optional(),
        kitSettings: kitSettingsSchema.optional(),
      }),
    ),
    /**
     * What the writer endpoint is (stack outputs DatabaseEngine / DbInstanceClass); the runner
     * records it in the run environment. Absent in requests from older CLIs: null, unknown.
     */
    database: z
      .object({
        engine: z.enum(DATABASE_ENGINES),
        instanceClass: z.string().min(1).nullable(),
      })
      .nullable()
      .default(null),
    /**
     * The database's RDS identifiers (stack outputs ClusterIdentifier, DbInstanceIds), what a cloud
     * disruption acts on. Absent in requests from older CLIs: null, nothing to disrupt.
     */
    databaseResources: z
      .object({
        engine: z.enum(DATABASE_ENGINES),
        clusterId: z.string().min(1).nullable(),
        instanceIds: z.array(z.string().min(1)),
      })
      .nullable()
      .default(null),
    /** Self-hosted poolers (absent in requests written before they existed). */
    poolers: z.array(poolerEndpointSchema).default([]),
    /** The lab's `settings` of each pooler, by name (absent in requests from older CLIs: none). */
    poolerSettings: z.record(z.string(), labSettingsSchema).default({}),
    poolerAdminSecretArn: z.string().min(1).nullable().default(null),
  }),
  /** The lab's own scenarios when `suite` is `lab` (absent in requests of other suites and older CLIs). */
  scenarios: z.array(labScenarioSchema).nullable().default(null),
  /**
   * The lab's `disruptionLoad`, resolved (lib/config/scenarios.ts): a background load on every
   * disruption scenario of the suite that names none (absent in requests from older CLIs: none).
   */
  disruptionLoad: backgroundLoadSchema.nullable().default(null),
  settings: z.object({
    region: z.string().nullable(),
    startAt: z.string().nullable(),
    collector: z
      .object({
        functionName: z.string().min(1),
        clusterId: z.string().min(1),
        instanceIds: z.array(z.string()),
        piResourceIds: z.array(z.string()),
        proxies: z.array(z.string()),
        instanceClasses: z.record(z.string(), z.string()).optional(),
        engine: z.enum(DATABASE_ENGINES).optional(),
      })
      .nullable(),
    barrierTimeoutSec: z.number().int().min(1),
    expectVersion: z.string().nullable(),
    /** Absent in requests from older CLIs: null, every zone unknown. */
    zones: z
      .array(z.object({ component: z.string().min(1), zone: z.string().min(1).nullable() }))
      .nullable()
      .default(null),
    /** Absent in requests from older CLIs: null, not priced. */
    targetPrices: z
      .array(
        z.object({
          target: z.string().min(1),
          usdPerHour: z.number().finite().min(0).nullable(),
          basis: z.string(),
          /** Absent in requests from older CLIs (and so in their runs): no production column. */
          production: targetProduction.nullable().optional(),
        }),
      )
      .nullable()
      .default(null),
  }),
});

export type RunRequest = z.infer<typeof runRequestSchema>;

/** A request for suite `lab` carries its scenarios, and only such a request does. */
function checkScenarios(suite: string, scenarios: readonly LabScenario[] | null | undefined): void {
  const has = scenarios !== null && scenarios !== undefined && scenarios.length > 0;
  if (suite === LAB_SUITE_NAME && !has)
    throw new UsageError(
      `a run of suite "${LAB_SUITE_NAME}" needs the lab's scenarios in its request; it has none`,
    );
  if (suite !== LAB_SUITE_NAME && has)
    throw new UsageError(
      `a run of suite "${suite}" carries no scenarios of its own (only "${LAB_SUITE_NAME}" does)`,
    );
}

/** The base arguments the operator resolved (runnerArgsFromOutputs) as a request for `runnerCount` runners. */
export function buildRunRequest(base: RunRequestArgs, runnerCount: number): RunRequest {
  checkScenarios(base.suite, base.scenarios);
  return runRequestSchema.parse({
    requestVersion: RUN_REQUEST_VERSION,
    runId: base.runId,
    suite: base.suite,
    bucket: base.bucket,
    runnerCount,
    secretArn: base.secretArn,
    targets: {
      writer: base.writerEndpoint,
      proxies: base.proxies,
      database: base.database ?? null,
      databaseResources: base.databaseResources ?? null,
      poolers: base.poolers.map(({ settings: _lab, ...endpoint }) => endpoint),
      poolerSettings: Object.fromEntries(
        base.poolers.flatMap((p) => (p.settings !== undefined ? [[p.name, p.settings]] : [])),
      ),
      poolerAdminSecretArn: base.poolerAdminSecretArn,
    },
    scenarios: base.scenarios ?? null,
    disruptionLoad: base.disruptionLoad ?? null,
    settings: {
      region: base.region,
      startAt: base.startAt,
      collector: base.collector,
      barrierTimeoutSec: base.barrierTimeoutSec,
      expectVersion: base.expectVersion,
      zones: base.zones ?? null,
      targetPrices: base.targetPrices ?? null,
    },
  });
}

/**
 * A runner's arguments: the request, its index, and the test settings it was started with (none in
 * production: PRODUCTION_RUNNER_SETTINGS).
 */
export function runnerArgsFromRequest(
  request: RunRequest,
  runnerIndex: number,
  test: Partial<RunnerTestSettings> = {},
): RunnerArgs {
  if (runnerIndex >= request.runnerCount)
    throw new UsageError(
      `--runner-index ${runnerIndex}: the request is for ${request.runnerCount} runner(s) (0–${request.runnerCount - 1})`,
    );
  checkScenarios(request.suite, request.scenarios);
  return {
    ...PRODUCTION_RUNNER_SETTINGS,
    ...test,
    runId: request.runId,
    suite: request.suite,
    ...(request.scenarios !== null ? { scenarios: request.scenarios } : {}),
    ...(request.disruptionLoad !== null ? { disruptionLoad: request.disruptionLoad } : {}),
    bucket: request.bucket,
    runnerIndex,
    runnerCount: request.runnerCount,
    secretArn: request.secretArn,
    proxies: request.targets.proxies,
    poolers: request.targets.poolers.map((p) => {
      const settings = request.targets.poolerSettings[p.name];
      return settings !== undefined ? { ...p, settings } : p;
    }),
    poolerAdminSecretArn: request.targets.poolerAdminSecretArn,
    writerEndpoint: request.targets.writer,
    database: request.targets.database,
    databaseResources: request.targets.databaseResources,
    region: request.settings.region,
    startAt: request.settings.startAt,
    collector: request.settings.collector,
    barrierTimeoutSec: request.settings.barrierTimeoutSec,
    expectVersion: request.settings.expectVersion,
    zones: request.settings.zones,
    targetPrices: request.settings.targetPrices,
  };
}

/** `s3://<bucket>/runs/<runId>/request.json`. */
export function requestUrl(bucket: string, runId: string): string {
  return `s3://${bucket}/${runKeyPrefix(runId)}${RUN_PATHS.request}`;
}

/** `s3://<bucket>/runs/<runId>/request.json` → bucket and run id; anything else is a usage error. */
export function parseRequestUrl(url: string): { bucket: string; runId: string } {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/runs\/([^/]+)\/request\.json$/.exec(url);
  if (!m || !RUN_ID_PATTERN.test(m[2] as string) || (m[2] as string).includes('..'))
    throw new UsageError(`--request: expected s3://BUCKET/runs/RUNID/request.json, got "${url}"`);
  return { bucket: m[1] as string, runId: m[2] as string };
}

export async function writeRunRequest(s3: S3Client, request: RunRequest): Promise<void> {
  const blobs = runBlobs(s3, request.bucket, request.runId);
  await blobs.write(RUN_PATHS.request, JSON.stringify(request, null, 2) + '\n', 'application/json');
}

/** The request at its URL, schema-checked (a malformed one names the object and the field). */
export async function readRunRequest(s3: S3Client, url: string): Promise<RunRequest> {
  const { bucket, runId } = parseRequestUrl(url);
  const blobs = runBlobs(s3, bucket, runId);
  const text = await blobs.read(RUN_PATHS.request);
  if (text === null) throw new UsageError(`${url}: no such object (did proxylab run write it?)`);
  const request = parseRunFile(runRequestSchema, blobs.where(RUN_PATHS.request), text);
  if (request.bucket !== bucket || request.runId !== runId)
    throw new UsageError(`${url}: the request is for run ${request.runId} in ${request.bucket}`);
  return request;
}

/** The test-only settings a runner takes on its command line besides `--endpoint-url`. */
export type RunnerArgvTestSettings = Partial<Omit<RunnerTestSettings, 'endpointUrl'>>;

const SSL_MODES: readonly SslMode[] = ['require', 'prefer', 'disable'];
/** Bounds of `--test-fleet-lead-ms` / `--test-fleet-poll-ms` / `--test-pin-period-ms`. */
const FLEET_MS_MIN = 50;
const FLEET_MS_MAX = 60_000;

/** The runner's whole command line (without `node runner.js`); `test`: test-only settings, never in production. */
export function requestRunnerArgv(opts: {
  readonly url: string;
  readonly runnerIndex: number;
  readonly region: string | null;
  readonly endpointUrl?: string | null;
  readonly test?: RunnerArgvTestSettings;
}): string[] {
  const argv = ['--request', opts.url, '--runner-index', String(opts.runnerIndex)];
  if (opts.region) argv.push('--region', opts.region);
  if (opts.endpointUrl) argv.push('--endpoint-url', opts.endpointUrl);
  const test = opts.test ?? {};
  if (test.sslmode !== undefined) argv.push('--test-sslmode', test.sslmode);
  if (test.proxyTargetKind !== undefined) argv.push('--test-proxy-kind', test.proxyTargetKind);
  if (test.poolControl !== undefined) argv.push('--test-pool-control', test.poolControl ? 'on' : 'off');
  if (test.fleetLeadMs !== undefined) argv.push('--test-fleet-lead-ms', String(test.fleetLeadMs));
  if (test.fleetPollMs !== undefined) argv.push('--test-fleet-poll-ms', String(test.fleetPollMs));
  if (test.testSuites !== undefined) argv.push('--test-suites', test.testSuites ? 'on' : 'off');
  if (test.pinPeriodMs != null) argv.push('--test-pin-period-ms', String(test.pinPeriodMs));
  return argv;
}

export interface RequestRunnerArgv {
  readonly url: string;
  readonly runnerIndex: number;
  readonly region: string | null;
  readonly endpointUrl: string | null;
  /** The test-only settings given (`--endpoint-url` and `--test-*`); empty in production. */
  readonly test: Partial<RunnerTestSettings>;
}

/** Parse the runner's command line; every problem at once as a UsageError. */
export function parseRequestRunnerArgv(argv: readonly string[]): RequestRunnerArgv {
  const values = new Map<string, string>();
  const problems: string[] = [];
  const known = new Set([
    '--request',
    '--runner-index',
    '--region',
    '--endpoint-url',
    '--test-sslmode',
    '--test-proxy-kind',
    '--test-pool-control',
    '--test-fleet-lead-ms',
    '--test-fleet-poll-ms',
    '--test-suites',
    '--test-pin-period-ms',
  ]);
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] as string;
    const eq = raw.indexOf('=');
    const name = raw.startsWith('--') && eq > 0 ? raw.slice(0, eq) : raw;
    if (!known.has(name)) {
      problems.push(`unknown argument "${raw}"`);
      continue;
    }
    const value = eq > 0 && raw.startsWith('--') ? raw.slice(eq + 1) : argv[++i];
    if (value === undefined) problems.push(`${name}: missing value`);
    else values.set(name, value);
  }
  const url = values.get('--request') ?? '';
  if (url === '') problems.push('--request: required');
  else {
    try {
      parseRequestUrl(url);
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  const indexText = values.get('--runner-index') ?? '0';
  const runnerIndex = Number(indexText);
  if (!Number.isInteger(runnerIndex) || runnerIndex < 0)
    problems.push(`--runner-index: must be an integer ≥ 0, got "${indexText}"`);
  const endpointUrl = values.get('--endpoint-url') ?? null;
  const test: { -readonly [K in keyof RunnerTestSettings]?: RunnerTestSettings[K] } = {};
  if (endpointUrl !== null) test.endpointUrl = endpointUrl;
  const sslmode = values.get('--test-sslmode');
  if (sslmode !== undefined) {
    if ((SSL_MODES as readonly string[]).includes(sslmode)) test.sslmode = sslmode as SslMode;
    else problems.push(`--test-sslmode: one of ${SSL_MODES.join(', ')}, got "${sslmode}"`);
  }
  const kind = values.get('--test-proxy-kind');
  if (kind !== undefined) {
    if ((PROXY_TARGET_KINDS as readonly string[]).includes(kind))
      test.proxyTargetKind = kind as ProxyTargetKind;
    else problems.push(`--test-proxy-kind: one of ${PROXY_TARGET_KINDS.join(', ')}, got "${kind}"`);
  }
  const poolControl = values.get('--test-pool-control');
  if (poolControl !== undefined) {
    if (poolControl === 'on' || poolControl === 'off') test.poolControl = poolControl === 'on';
    else problems.push(`--test-pool-control: on or off, got "${poolControl}"`);
  }
  const testSuites = values.get('--test-suites');
  if (testSuites !== undefined) {
    if (testSuites === 'on' || testSuites === 'off') test.testSuites = testSuites === 'on';
    else problems.push(`--test-suites: on or off, got "${testSuites}"`);
  }
  for (const [flag, key] of [
    ['--test-fleet-lead-ms', 'fleetLeadMs'],
    ['--test-fleet-poll-ms', 'fleetPollMs'],
    ['--test-pin-period-ms', 'pinPeriodMs'],
  ] as const) {
    const text = values.get(flag);
    if (text === undefined) continue;
    const ms = Number(text);
    if (/^\d+$/.test(text) && ms >= FLEET_MS_MIN && ms <= FLEET_MS_MAX) test[key] = ms;
    else problems.push(`${flag}: an integer ${FLEET_MS_MIN}–${FLEET_MS_MAX} (ms), got "${text}"`);
  }
  if (problems.length > 0) throw new UsageError(`runner: ${problems.join('; ')}`);
  return { url, runnerIndex, region: values.get('--region') ?? null, endpointUrl, test };
}
