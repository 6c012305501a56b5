/**
 * The AWS call audit log: with `PROXYLAB_AWS_CALL_LOG=/path/to/file` set, every AWS SDK call the CLI
 * makes appends one JSON line to that file — time, service, operation and the identifiers of the
 * resources it names (bucket, key, stack, instance ids…). It answers "which calls did this command
 * make, on what?" when an IAM policy is being written or an AccessDenied is being debugged, and the
 * tests read it to check the CLI's calls against the operator policy it prints
 * (`proxylab iam-policy`).
 *
 * It never writes a request body, a secret's value, a command's script or any field not listed in
 * AWS_CALL_LOG_FIELDS: identifiers only.
 */
import { appendFileSync } from 'node:fs';

export const AWS_CALL_LOG_ENV = 'PROXYLAB_AWS_CALL_LOG';

/**
 * The input members that are kept: names and ids of resources, and the few parameters IAM
 * evaluates (`Prefix` is `s3:prefix` for ListObjectsV2). Strings and lists of strings only.
 */
export const AWS_CALL_LOG_FIELDS: readonly string[] = [
  'Bucket',
  'Key',
  'Prefix',
  'Delimiter',
  'StackName',
  'Name',
  'GroupName',
  'FunctionName',
  'DocumentName',
  'InstanceIds',
  'InstanceId',
  'CommandId',
  'DBInstanceIdentifier',
  'DBClusterIdentifier',
  'DBProxyName',
  'TargetGroupName',
  'SecretId',
  'ServiceType',
  'Identifier',
  'SpotInstanceRequestIds',
  'ZoneNames',
  'LocationType',
  'RoleARN',
  // a Blue/Green deployment's identifier, and the database it copies (an ARN)
  'BlueGreenDeploymentIdentifier',
  'Source',
];

/** The tags kept (aws:RequestTag, which IAM evaluates): proxylab's own, which name the lab. */
const KEPT_TAG_PREFIX = 'proxylab:';

/** One line of the log. */
export interface AwsCallLogEntry {
  readonly time: string;
  /** The SDK client's service id: `S3`, `SSM`, `CloudFormation`, … */
  readonly service: string;
  /** The operation, without `Command`: `PutObject`, `SendCommand`, … */
  readonly operation: string;
  /** The identifiers from the input (AWS_CALL_LOG_FIELDS, plus `Target.RoleArn` of a schedule). */
  readonly input: Record<string, unknown>;
}

/** The identifiers of an SDK input, and nothing else. */
export function callIdentifiers(input: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!input || typeof input !== 'object') return out;
  const record = input as Record<string, unknown>;
  for (const field of AWS_CALL_LOG_FIELDS) {
    const v = record[field];
    if (typeof v === 'string') out[field] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) out[field] = [...v];
  }
  // UpdateSchedule passes the schedule's role on (iam:PassRole): the role ARN is an identifier.
  const target = record.Target as { RoleArn?: unknown } | undefined;
  if (target && typeof target.RoleArn === 'string') out.Target = { RoleArn: target.RoleArn };
  // CreateBlueGreenDeployment tags the deployment with the lab's tag (aws:RequestTag): proxylab's tags only
  const tags = Array.isArray(record.Tags) ? (record.Tags as Array<{ Key?: unknown; Value?: unknown }>) : [];
  const kept = tags.filter(
    (t) => typeof t.Key === 'string' && t.Key.startsWith(KEPT_TAG_PREFIX) && typeof t.Value === 'string',
  );
  if (kept.length > 0) out.Tags = kept.map((t) => ({ Key: t.Key, Value: t.Value }));
  return out;
}

/** What an SDK v3 client exposes that the log needs (structural: no @smithy import here). */
export interface MiddlewareClient {
  readonly config: { readonly serviceId?: string };
  readonly middlewareStack: {
    add(
      middleware: (
        next: (args: { input: unknown }) => Promise<unknown>,
        context: { commandName?: string },
      ) => (args: { input: unknown }) => Promise<unknown>,
      options: { step: 'initialize'; name: string; override?: boolean },
    ): void;
  };
}

/**
 * Adds `observe` to `client` as an `initialize` middleware: it sees every call (service, operation,
 * full input) before it is serialized. Used by the audit log below and by the tests' recorder.
 */
export function observeAwsCalls<C>(
  client: C,
  observe: (service: string, operation: string, input: unknown) => void,
  name = 'proxylabAwsCallObserver',
): C {
  const c = client as unknown as MiddlewareClient;
  const service = c.config.serviceId ?? 'unknown';
  c.middlewareStack.add(
    (next, context) => async (args) => {
      observe(service, (context.commandName ?? 'unknown').replace(/Command$/, ''), args.input);
      return next(args);
    },
    { step: 'initialize', name, override: true },
  );
  return client;
}

/**
 * When `env.PROXYLAB_AWS_CALL_LOG` names a file, `client`'s calls are appended to it (one JSON
 * line each, identifiers only); otherwise `client` is returned unchanged.
 */
export function withAwsCallLog<C>(client: C, env: NodeJS.ProcessEnv = process.env): C {
  const file = env[AWS_CALL_LOG_ENV];
  if (!file) return client;
  return observeAwsCalls(
    client,
    (service, operation, input) => {
      const entry: AwsCallLogEntry = {
        time: new Date().toISOString(),
        service,
        operation,
        input: callIdentifiers(input),
      };
      appendFileSync(file, JSON.stringify(entry) + '\n');
    },
    'proxylabAwsCallLog',
  );
}
