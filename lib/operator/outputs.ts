/**
 * The lab stack's outputs, read with CloudFormation `DescribeStacks` (or from a file for
 * `--outputs FILE`: the `cdk deploy --outputs-file` JSON, a DescribeStacks response, or a flat
 * `{ key: value }` object). Keys and decoding live in lib/config/stack-outputs.ts.
 */
import { DescribeStacksCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { InfrastructureError, UsageError } from '../core/errors';
import { readJsonFile } from '../core/read';
import { LAB_OUTPUT_KEYS, parseLabOutputs, stackNameFor, type LabOutputs } from '../config/stack-outputs';

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
