/** The real `proxylab` CLI as a child process, for tests that check what a user would see. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { OperatorRole } from '../../lib/operator/iam-policy';
import { AWS_CALL_LOG_ENV } from '../../lib/core/aws-call-log';
import { main } from '../../scripts/cli';
import { loadLabPolicies } from './aws-calls/lab-policies';
import type { Principal } from './aws-calls/principals';
import { recordCallLog } from './aws-calls/recorder';
import { scratchDir } from './scratch';
import { spawnToEnd } from './spawn';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const CLI = path.join(REPO_ROOT, 'scripts', 'proxylab.js');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Which operator policy (`proxylab iam-policy --role`) a CLI command runs under. */
const COMMAND_ROLES: Readonly<Record<string, OperatorRole>> = {
  status: 'read',
  fetch: 'read',
  run: 'run',
  doctor: 'run',
  collect: 'run',
  extend: 'run',
  deploy: 'deploy',
  destroy: 'deploy',
};

/**
 * The operator a CLI invocation acts as: the role its command needs, the lab it was given (a
 * shipped lab by name, another lab file judged by the policy printed from it).
 */
export function cliPrincipal(args: readonly string[]): Principal {
  const role = COMMAND_ROLES[args[0] ?? ''] ?? 'deploy';
  const i = args.indexOf('--lab');
  const file = i >= 0 ? args[i + 1] : undefined;
  if (!file) return { kind: 'operator', role };
  const abs = path.resolve(REPO_ROOT, file);
  let raw: { name?: unknown; runners?: { spot?: unknown } };
  try {
    raw = JSON.parse(readFileSync(abs, 'utf8')) as typeof raw;
  } catch {
    return { kind: 'operator', role };
  }
  const name = typeof raw.name === 'string' ? raw.name : 'default';
  // A test's own lab file: the shipped lab most like it (the spot lab for a spot one) owns the resources.
  const shipped = name in loadLabPolicies().labs ? name : raw.runners?.spot === true ? 'pocket' : 'default';
  return { kind: 'operator', role, lab: shipped, labFile: abs };
}

/**
 * Run `node scripts/proxylab.js ARGS` to completion with exactly `env` (not merged with
 * process.env, so a test can keep the developer's AWS settings out). The CLI's AWS calls (its
 * `PROXYLAB_AWS_CALL_LOG` audit log) are recorded as made by the operator (`cliPrincipal`) and
 * checked after the test against the policy `proxylab iam-policy` prints (test/helpers/aws-calls).
 */
export function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  principal: Principal = cliPrincipal(args),
): Promise<CliResult> {
  const callLog = env[AWS_CALL_LOG_ENV] ?? path.join(scratchDir('proxylab-cli-calls-'), 'calls.jsonl');
  return spawnToEnd(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    env: { ...env, [AWS_CALL_LOG_ENV]: callLog },
  }).then((result) => {
    recordCallLog(callLog, principal);
    return result;
  });
}

/**
 * The CLI's `main` in this process, with stdout/stderr captured and the exit code it set: for tests
 * of argument handling and messages that need no child process.
 */
export async function runCliInProcess(args: string[]): Promise<{ out: string; err: string; code: number }> {
  let out = '';
  let err = '';
  const o = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const e = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err += String(chunk);
    return true;
  });
  process.exitCode = undefined;
  try {
    await main(args);
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  const code = typeof process.exitCode === 'number' ? process.exitCode : 0;
  process.exitCode = undefined;
  return { out, err, code };
}
