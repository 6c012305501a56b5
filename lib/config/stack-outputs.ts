/**
 * The CloudFormation outputs of a lab stack: stable keys the CLI reads (`DescribeStacks`).
 * Kept here, free of aws-cdk-lib imports, so the CLI can use them without loading the CDK;
 * lib/lab-stack.ts re-exports them and is the only writer. Documented in docs/stacks.md.
 *
 * List values are comma-separated in a fixed order (writer first for DB instances); maps
 * (proxy name → endpoint) are JSON objects.
 */
import { createHash } from 'node:crypto';
import { DATABASE_ENGINES, isDatabaseEngine, type DatabaseEngine } from '../suite/engines';
import { poolerEndpointSchema, type PoolerEndpoint } from '../poolers/endpoint';

/**
 * Where the stack's user data installs the bundled runner; the SSM command runs it from there.
 * Part of the contract between the stack (lib/constructs) and the CLI (lib/operator) and the runner (lib/runner).
 */
export const RUNNER_INSTALL_PATH = '/opt/proxylab/runner.js';

/**
 * Tag the spot runners' launch template puts on each runner's Spot request (value: the stack id,
 * `AWS::StackId`). The stack's canceller may cancel only requests with it; `proxylab doctor` checks
 * each runner's request carries it. Part of the contract between the stack and the CLI.
 */
export const SPOT_REQUEST_TAG = 'proxylab:stack-id';

/**
 * The cloud run lock of runner `runnerIndex` in run `runId` (lib/runner/run-lock.ts), and the
 * pattern of every such key: the runner role may delete exactly these objects in the results
 * bucket (lib/constructs/runner-asset.ts) — the lock's owner removes it when it ends, so a resume
 * on a replacement runner (another host) is not refused. Part of the contract between the stack
 * and the runner.
 */
export function cloudRunLockKey(runId: string, runnerIndex: number): string {
  return `runs/${runId}/locks/runner-${runnerIndex}.lock`;
}
export const CLOUD_RUN_LOCK_KEY_PATTERN = 'runs/*/locks/runner-*.lock';

/**
 * The runner software version: the first 16 hex digits of the SHA-256 of the bundle (runner.js).
 * The CLI computes it from the bundle it would deploy, the runner from the file it runs.
 */
export function softwareVersionOf(bundle: Uint8Array): string {
  return createHash('sha256').update(bundle).digest('hex').slice(0, 16);
}

export const LAB_OUTPUT_KEYS = {
  /** The lab's `name`. */
  labName: 'LabName',
  /** Comma-separated EC2 instance ids of the runners. */
  runnerInstanceIds: 'RunnerInstanceIds',
  /** Results bucket name (runs are written under `runs/`). */
  resultsBucketName: 'ResultsBucketName',
  /** Aurora cluster identifier. */
  clusterIdentifier: 'ClusterIdentifier',
  /** Writer (cluster) endpoint hostname. */
  clusterEndpoint: 'ClusterEndpoint',
  /** Reader endpoint hostname. */
  clusterReaderEndpoint: 'ClusterReaderEndpoint',
  /** Port of the cluster and every proxy (5432). */
  databasePort: 'DatabasePort',
  /** Comma-separated DB instance identifiers, writer first. */
  dbInstanceIds: 'DbInstanceIds',
  /** Comma-separated Performance Insights ids (DbiResourceId, `db-…`), same order as DbInstanceIds. */
  dbInstanceResourceIds: 'DbInstanceResourceIds',
  /** JSON object: lab proxy name → proxy endpoint hostname (`{}` when the lab has no proxy). */
  proxyEndpoints: 'ProxyEndpoints',
  /** JSON object: lab proxy name → RDS proxy name (`<lab>-<proxy>`, for ModifyDBProxyTargetGroup). */
  proxyNames: 'ProxyNames',
  /** ARN of the Secrets Manager secret with the master credentials (JSON: username, password, host, port…). */
  dbSecretArn: 'DbSecretArn',
  /** Name of the metrics collector Lambda function. */
  collectorFunctionName: 'CollectorFunctionName',
  /** `aurora-postgresql` or `postgres` (RDS for PostgreSQL). Absent on stacks before issue 13: Aurora. */
  databaseEngine: 'DatabaseEngine',
  /** The writer's DB instance class (`db.t4g.micro`), `serverless` for Aurora Serverless v2. Optional. */
  dbInstanceClass: 'DbInstanceClass',
  /** JSON object: lab pooler name → PoolerEndpoint (lib/poolers/endpoint.ts); `{}` or absent when none. */
  poolerEndpoints: 'PoolerEndpoints',
  /** ARN of the pooler admin/stats user's secret (JSON: username, password); `` or absent when no pooler. */
  poolerAdminSecretArn: 'PoolerAdminSecretArn',
  /**
   * JSON object: component (`writer`, `runner-<i>`, `pooler:<name>`) → Availability Zone name, or
   * null where RDS chooses it. Absent on stacks before issue 25: every zone unknown.
   */
  componentZones: 'ComponentZones',
} as const;

export type { DatabaseEngine };

export type LabOutputKey = (typeof LAB_OUTPUT_KEYS)[keyof typeof LAB_OUTPUT_KEYS];

/** Stack outputs decoded into typed values. */
export interface LabOutputs {
  readonly labName: string;
  readonly runnerInstanceIds: string[];
  readonly resultsBucketName: string;
  readonly clusterIdentifier: string;
  readonly clusterEndpoint: string;
  readonly clusterReaderEndpoint: string;
  readonly databasePort: number;
  readonly dbInstanceIds: string[];
  readonly dbInstanceResourceIds: string[];
  readonly proxyEndpoints: Record<string, string>;
  readonly proxyNames: Record<string, string>;
  readonly dbSecretArn: string;
  readonly collectorFunctionName: string;
  readonly databaseEngine: DatabaseEngine;
  /** null when the stack does not say (deployed before the output existed). */
  readonly dbInstanceClass: string | null;
  readonly poolerEndpoints: Record<string, PoolerEndpoint>;
  /** null when the lab has no pooler. */
  readonly poolerAdminSecretArn: string | null;
  /** Component → zone (null: chosen by RDS); `{}` when the stack does not say (deployed before it existed). */
  readonly componentZones: Record<string, string | null>;
}

/** The CloudFormation stack name of a lab. */
export function stackNameFor(labName: string): string {
  return `proxylab-${labName}`;
}

function splitList(v: string): string[] {
  return v === ''
    ? []
    : v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
}

function parseStringMap(key: string, v: string): Record<string, string> {
  const parsed: unknown = JSON.parse(v);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error(`output ${key} is not a JSON object`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(parsed)) {
    if (typeof val !== 'string') throw new Error(`output ${key}.${k} is not a string`);
    out[k] = val;
  }
  return out;
}

/**
 * Decodes `OutputKey → OutputValue` pairs (from DescribeStacks). Throws an Error naming the first
 * missing or malformed key; the caller decides which error class that maps to.
 */
export function parseLabOutputs(raw: Readonly<Record<string, string | undefined>>): LabOutputs {
  const get = (key: LabOutputKey): string => {
    const v = raw[key];
    if (v === undefined)
      throw new Error(`stack output ${key} is missing (stack deployed by an older proxylab?)`);
    return v;
  };
  const port = Number(get(LAB_OUTPUT_KEYS.databasePort));
  if (!Number.isInteger(port))
    throw new Error(`stack output ${LAB_OUTPUT_KEYS.databasePort} is not a port number`);
  return {
    labName: get(LAB_OUTPUT_KEYS.labName),
    runnerInstanceIds: splitList(get(LAB_OUTPUT_KEYS.runnerInstanceIds)),
    resultsBucketName: get(LAB_OUTPUT_KEYS.resultsBucketName),
    clusterIdentifier: get(LAB_OUTPUT_KEYS.clusterIdentifier),
    clusterEndpoint: get(LAB_OUTPUT_KEYS.clusterEndpoint),
    clusterReaderEndpoint: get(LAB_OUTPUT_KEYS.clusterReaderEndpoint),
    databasePort: port,
    dbInstanceIds: splitList(get(LAB_OUTPUT_KEYS.dbInstanceIds)),
    dbInstanceResourceIds: splitList(get(LAB_OUTPUT_KEYS.dbInstanceResourceIds)),
    proxyEndpoints: parseStringMap(LAB_OUTPUT_KEYS.proxyEndpoints, get(LAB_OUTPUT_KEYS.proxyEndpoints)),
    proxyNames: parseStringMap(LAB_OUTPUT_KEYS.proxyNames, get(LAB_OUTPUT_KEYS.proxyNames)),
    dbSecretArn: get(LAB_OUTPUT_KEYS.dbSecretArn),
    collectorFunctionName: get(LAB_OUTPUT_KEYS.collectorFunctionName),
    databaseEngine: parseEngine(raw[LAB_OUTPUT_KEYS.databaseEngine]),
    dbInstanceClass: nonEmpty(raw[LAB_OUTPUT_KEYS.dbInstanceClass]),
    poolerEndpoints: parsePoolerEndpoints(raw[LAB_OUTPUT_KEYS.poolerEndpoints]),
    poolerAdminSecretArn: nonEmpty(raw[LAB_OUTPUT_KEYS.poolerAdminSecretArn]),
    componentZones: parseComponentZones(raw[LAB_OUTPUT_KEYS.componentZones]),
  };
}

/** `ComponentZones`: names to zone names or null; absent or empty: `{}` (every zone unknown). */
export function parseComponentZones(v: string | undefined): Record<string, string | null> {
  const key = LAB_OUTPUT_KEYS.componentZones;
  if (v === undefined || v.trim() === '') return {};
  const parsed: unknown = JSON.parse(v);
  if (!isRecord(parsed)) throw new Error(`output ${key} is not a JSON object`);
  const out: Record<string, string | null> = {};
  for (const [component, zone] of Object.entries(parsed)) {
    if (zone !== null && (typeof zone !== 'string' || !/^[a-z]{2}(-[a-z]+)+-\d[a-z]$/.test(zone)))
      throw new Error(
        `output ${key}.${component} is not an Availability Zone name or null: ${JSON.stringify(zone)}`,
      );
    out[component] = zone;
  }
  return out;
}

function nonEmpty(v: string | undefined): string | null {
  return v === undefined || v.trim() === '' ? null : v.trim();
}

function parseEngine(v: string | undefined): DatabaseEngine {
  // Absent or empty: deployed before the output existed, when Aurora was the only engine.
  if (v === undefined || v === '') return 'aurora-postgresql';
  if (isDatabaseEngine(v)) return v;
  throw new Error(
    `stack output ${LAB_OUTPUT_KEYS.databaseEngine} is "${v}", not ${DATABASE_ENGINES.join(' or ')}`,
  );
}

/**
 * `PoolerEndpoints`: every field checked against the one endpoint schema (lib/poolers/endpoint.ts),
 * so a runner never guesses at a malformed pooler.
 */
export function parsePoolerEndpoints(v: string | undefined): Record<string, PoolerEndpoint> {
  const key = LAB_OUTPUT_KEYS.poolerEndpoints;
  if (v === undefined || v.trim() === '') return {};
  const parsed: unknown = JSON.parse(v);
  if (!isRecord(parsed)) throw new Error(`output ${key} is not a JSON object`);
  const out: Record<string, PoolerEndpoint> = {};
  for (const [name, e] of Object.entries(parsed)) {
    const r = poolerEndpointSchema.safeParse(e);
    if (!r.success) {
      const issue = r.error.issues[0];
      const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(object)';
      throw new Error(
        `output ${key}.${name}.${field} is missing or malformed${issue ? `: ${issue.message}` : ''}`,
      );
    }
    if (r.data.name !== name)
      throw new Error(`output ${key}.${name}.name is missing or malformed: "${r.data.name}"`);
    out[name] = r.data;
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Context keys `proxylab deploy` sets from DescribeInstanceTypeOfferings (lib/operator/availability-zones.ts):
 * the VPC's zones, and those of them that offer the runners' instance type. Without them (cdk synth,
 * tests) the template stays environment-agnostic.
 */
export const AZ_CONTEXT_KEYS = {
  vpc: 'proxylab:availabilityZones',
  runners: 'proxylab:runnerAvailabilityZones',
} as const;
