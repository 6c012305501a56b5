/**
 * Starting a suite on the runners: one SSM `SendCommand` (`AWS-RunShellScript`) per runner
 * instance, each with its own `--runner-index`. The command's output is small by design (SSM
 * keeps at most 24 000 characters): results go to S3 from the runner itself; the shell output is
 * also saved under `runs/<runId>/ssm/` for debugging.
 */
import { SendCommandCommand, type SendCommandCommandInput, type SSMClient } from '@aws-sdk/client-ssm';
import { InfrastructureError } from '../core/errors';
import { shellQuote } from '../core/shell';
import { RUNNER_INSTALL_PATH } from '../config/stack-outputs';
import { RUN_PATHS, runKeyPrefix } from '../results/run-paths';
import { requestRunnerArgv, requestUrl, type RunRequest } from '../aws/run-request';

/** SSM's maximum execution timeout for AWS-RunShellScript (48 h). */
const MAX_EXECUTION_TIMEOUT_SEC = 172_800;

export interface RunCommandPlan {
  readonly instanceId: string;
  readonly runnerIndex: number;
  readonly input: SendCommandCommandInput;
}

/** The shell lines the runner instance executes: the runner with the request's URL and its index. */
function runnerShellCommands(argv: readonly string[], installPath = RUNNER_INSTALL_PATH): string[] {
  const line = ['node', installPath, ...argv].map(shellQuote).join(' ');
  return [
    'set -eu',
    `test -f ${shellQuote(installPath)} || { echo "proxylab runner not installed at ${installPath} (user data still running?)" >&2; exit 3; }`,
    line,
  ];
}

/**
 * One SendCommand request per runner instance, in runner-index order. Each runner gets only the
 * request's URL (`runs/<runId>/request.json`, written by the operator before sending) and its index.
 */
export function buildRunCommands(
  instanceIds: readonly string[],
  request: RunRequest,
  options: { executionTimeoutSec?: number } = {},
): RunCommandPlan[] {
  if (instanceIds.length === 0) throw new InfrastructureError('the stack reports no runner instances');
  if (instanceIds.length !== request.runnerCount)
    throw new InfrastructureError(
      `the request is for ${request.runnerCount} runner(s), the stack has ${instanceIds.length}`,
    );
  const base = request;
  const url = requestUrl(request.bucket, request.runId);
  const timeout = Math.min(
    options.executionTimeoutSec ?? MAX_EXECUTION_TIMEOUT_SEC,
    MAX_EXECUTION_TIMEOUT_SEC,
  );
  return instanceIds.map((instanceId, runnerIndex) => {
    const argv = requestRunnerArgv({ url, runnerIndex, region: request.settings.region });
    return {
      instanceId,
      runnerIndex,
      input: {
        DocumentName: 'AWS-RunShellScript',
        InstanceIds: [instanceId],
        Comment:
          `proxylab ${base.suite} ${base.runId} runner ${runnerIndex} (of ${instanceIds.length})`.slice(
            0,
            100,
          ),
        // Delivery timeout: how long SSM tries to reach a (still booting) instance.
        TimeoutSeconds: 600,
        Parameters: {
          commands: runnerShellCommands(argv),
          executionTimeout: [String(timeout)],
        },
        OutputS3BucketName: base.bucket,
        OutputS3KeyPrefix: `${runKeyPrefix(base.runId)}${RUN_PATHS.ssmDir}/runner-${runnerIndex}`,
      },
    };
  });
}

export interface SentCommand {
  readonly instanceId: string;
  readonly runnerIndex: number;
  readonly commandId: string;
}

export async function sendRunCommands(
  ssm: SSMClient,
  plans: readonly RunCommandPlan[],
): Promise<SentCommand[]> {
  const sent: SentCommand[] = [];
  for (const plan of plans) {
    const res = await ssm.send(new SendCommandCommand(plan.input));
    const commandId = res.Command?.CommandId;
    if (!commandId)
      throw new InfrastructureError(`SSM SendCommand to ${plan.instanceId} returned no command id`);
    sent.push({ instanceId: plan.instanceId, runnerIndex: plan.runnerIndex, commandId });
  }
  return sent;
}
