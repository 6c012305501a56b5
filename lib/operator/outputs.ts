/**
 * The lab stack's outputs, read with CloudFormation `DescribeStacks` (or from a file for
 * `--outputs FILE`: the `cdk deploy --outputs-file` JSON, a DescribeStacks response, or a flat
 * `{ key: value }` object). Keys and decoding live in lib/config/stack-outputs.ts.
 */
import { DescribeStacksCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { InfrastructureError, UsageError } from '../core/errors';
import { readJsonFile } from '../core/read';
import { LAB_OUTPUT_KEYS, parseLabOutputs, stackNameFor, type LabOutputs } from '../config/stack-outputs';
import { databaseInstanceClass, dbInstanceCount } from '../config/database';
import { poolerEndpointOf } from '../config/pooler-endpoint';
import type { LabConfig } from '../config/types';

export { stackNameFor };
export type { LabOutputs };

export async function describeLabOutputs(cfn: CloudFormationClient, stackName: string): Promise<LabOutputs> {
  let outputs: Record<string, string | undefined>;
  try {
    const res = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
    const stack = res.Stacks?.[0];
    if (!stack) throw new InfrastructureError(`stack ${stackName} not found`);
    if (stack.StackStatus && !/_COMPLETE$/.test(stack.StackStatus)) {
      throw new InfrastructureError(`stack ${stackName} is ${stack.StackStatus}; wait until it is deployed`);
    }
    outputs = Object.fromEntries((stack.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue]));
  } catch (err) {
    if (err instanceof InfrastructureError) throw err;
    const msg = err instanceof Error ? err.message : String(err);
    if (/does not exist/.test(msg)) {
      throw new InfrastructureError(
        `stack ${stackName} does not exist in this account/region: deploy it first (proxylab deploy --lab FILE)`,
      );
    }
    throw new InfrastructureError(`DescribeStacks ${stackName}: ${msg}`, { cause: err });
  }
  return decode(outputs, `stack ${stackName}`, InfrastructureError);
}

/**
 * Lab `labName`'s stack outputs as the CLI's `--outputs FILE` option asks: from the file when one is
 * given (no AWS call, no client made), else with DescribeStacks through the client `cloudformation()`.
 */
export async function readLabOutputs(
  labName: string,
  file: string | undefined,
  cloudformation: () => CloudFormationClient,
): Promise<LabOutputs> {
  const stackName = stackNameFor(labName);
  return file !== undefined
    ? readOutputsFile(file, stackName)
    : describeLabOutputs(cloudformation(), stackName);
}

/** Outputs from a file: cdk's `--outputs-file` JSON, a DescribeStacks response, or a flat map. */
export function readOutputsFile(file: string, stackName: string | null): LabOutputs {
  let data: unknown;
  try {
    // Bounded: a regular file of at most READ_LIMITS.runFile, depth-limited JSON.
    data = readJsonFile(file, 'runFile');
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`--outputs: ${err.message}`, { code: err.code });
    throw err;
  }
  return decode(flattenOutputs(data, stackName, file), `--outputs ${file}`, UsageError);
}

export function flattenOutputs(
  data: unknown,
  stackName: string | null,
  what: string,
): Record<string, string | undefined> {
  if (!data || typeof data !== 'object' || Array.isArray(data))
    throw new UsageError(`${what}: expected a JSON object`);
  const obj = data as Record<string, unknown>;
  if (Array.isArray(obj.Stacks)) {
    const stacks: readonly unknown[] = obj.Stacks;
    const stack =
      stacks.find((s) => isRecord(s) && (stackName === null || s.StackName === stackName)) ?? stacks[0];
    const outputs: readonly unknown[] = isRecord(stack) && Array.isArray(stack.Outputs) ? stack.Outputs : [];
    const outs = outputs.filter(isRecord);
    return Object.fromEntries(
      outs.map((o) => [String(o.OutputKey), typeof o.OutputValue === 'string' ? o.OutputValue : undefined]),
    );
  }
  if (LAB_OUTPUT_KEYS.labName in obj) return stringValues(obj);
  const nested = (stackName !== null ? obj[stackName] : undefined) ?? Object.values(obj)[0];
  if (nested && typeof nested === 'object') return stringValues(nested as Record<string, unknown>);
  throw new UsageError(`${what}: no stack outputs found`);
}

function stringValues(obj: Record<string, unknown>): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(obj).map(([k, v]) => [
      k,
      typeof v === 'string'
        ? v
        : v === undefined
          ? undefined
          : typeof v === 'number' || typeof v === 'boolean'
            ? String(v)
            : JSON.stringify(v),
    ]),
  );
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function decode(
  raw: Record<string, string | undefined>,
  what: string,
  ErrorClass: typeof InfrastructureError | typeof UsageError,
): LabOutputs {
  try {
    return parseLabOutputs(raw);
  } catch (err) {
    throw new ErrorClass(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * What stands in for the stack outputs in `run --dry-run` when they cannot be read (no `--outputs`,
 * no credentials, no deployed stack): every value the deployed stack decides, named as a
 * placeholder — `<results bucket: from the stack outputs>`, host names ending in
 * `.from-the-stack-outputs.invalid` (a host name must stay one; `.invalid` never resolves, RFC 2606)
 * — and what the lab file decides already (engine, instance class, pooler ports), as it will be.
 */
export interface PlaceholderOutputs {
  readonly outputs: LabOutputs;
  /** Each placeholder value, for the note that says they are not the lab's. */
  readonly placeholders: readonly string[];
}

/** A placeholder value: `<what: from the stack outputs>`. */
const stand = (what: string): string => `<${what}: from the stack outputs>`;
/** A placeholder host name (a host name must stay one: the request's endpoints are parsed). */
const host = (what: string): string => `${what}.from-the-stack-outputs.invalid`;

export function placeholderLabOutputs(lab: LabConfig): PlaceholderOutputs {
  const n = lab.runners.count;
  const aurora = lab.database.engine === 'aurora-postgresql';
  const instances = dbInstanceCount(lab.database);
  const instanceIds = Array.from({ length: instances }, (_, i) =>
    stand(`DB instance id ${i + 1} of ${instances}${i === 0 ? ' (writer)' : ''}`),
  );
  const outputs: LabOutputs = {
    labName: lab.name,
    runnerInstanceIds: Array.from({ length: n }, (_, i) => stand(`runner instance id ${i + 1} of ${n}`)),
    resultsBucketName: stand('results bucket'),
    clusterIdentifier: aurora ? stand('Aurora cluster id') : (instanceIds[0] ?? stand('DB instance id')),
    clusterEndpoint: host('writer-endpoint'),
    clusterReaderEndpoint: host('reader-endpoint'),
    // The stack's port of the database and every proxy (lib/lab-stack.ts).
    databasePort: 5432,
    dbInstanceIds: instanceIds,
    dbInstanceResourceIds: instanceIds.map((_, i) =>
      stand(`Performance Insights id of DB instance ${i + 1} of ${instances}`),
    ),
    proxyEndpoints: Object.fromEntries(lab.proxies.map((p) => [p.name, host(`proxy-${p.name}-endpoint`)])),
    proxyNames: Object.fromEntries(lab.proxies.map((p) => [p.name, stand(`RDS name of proxy ${p.name}`)])),
    dbSecretArn: stand('DB secret ARN'),
    collectorFunctionName: stand('collector function name'),
    databaseEngine: lab.database.engine,
    dbInstanceClass: databaseInstanceClass(lab.database) ?? 'serverless',
    poolerEndpoints: Object.fromEntries(
      lab.poolers.map((p) => [
        p.name,
        poolerEndpointOf(p, p.placement === 'dedicated' ? host(`pooler-${p.name}-host`) : '127.0.0.1'),
      ]),
    ),
    poolerAdminSecretArn: lab.poolers.length > 0 ? stand('pooler admin secret ARN') : null,
    // Chosen at deploy (proxylab deploy: the zones that offer the runners' type): unknown here.
    componentZones: {},
  };
  const placeholders = [
    ...outputs.runnerInstanceIds,
    outputs.resultsBucketName,
    ...(aurora ? [outputs.clusterIdentifier] : []),
    outputs.clusterEndpoint,
    ...outputs.dbInstanceIds,
    ...outputs.dbInstanceResourceIds,
    ...Object.values(outputs.proxyEndpoints),
    ...Object.values(outputs.proxyNames),
    outputs.dbSecretArn,
    outputs.collectorFunctionName,
    ...Object.values(outputs.poolerEndpoints)
      .map((e) => e.host)
      .filter((h) => h !== '127.0.0.1'),
    ...(outputs.poolerAdminSecretArn !== null ? [outputs.poolerAdminSecretArn] : []),
  ];
  return { outputs, placeholders };
}
