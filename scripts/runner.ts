/**
 * On-instance entry of the proxylab runner (installed as /opt/proxylab/runner.js by the stack's
 * user data, started by `proxylab run` through SSM). Thin: parse args, build clients and the
 * local pgbench executor, run lib/runner/runner.ts, map errors to exit codes.
 *
 *   node runner.js --request s3://BUCKET/runs/RUNID/request.json --runner-index I [--region R]
 *   test-only: [--endpoint-url URL] [--test-sslmode M] [--test-proxy-kind K] [--test-pool-control on|off]
 *
 * Everything else — suite, targets, secret ARN, runner count, collector — is in the run request
 * the operator wrote (lib/aws/run-request.ts), read and schema-checked from S3.
 *
 * Exit codes: 0 completed and every verdict held, 1 a verdict broke / interrupted / infrastructure
 * failure, 2 usage error. SIGTERM/SIGINT — and on a spot runner the interruption notice — stop
 * pgbench and leave every finished step in S3; run the same command again to resume.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exitCodeFor, UsageError } from '../lib/core/errors';
import { withAwsCallLog } from '../lib/core/aws-call-log';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { RDSClient } from '@aws-sdk/client-rds';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { S3Client } from '@aws-sdk/client-s3';
import { runCloudRunner } from '../lib/runner/runner';
import {
  parseRequestRunnerArgv,
  parseRequestUrl,
  readRunRequest,
  runnerArgsFromRequest,
} from '../lib/aws/run-request';
import { softwareVersionOf } from '../lib/config/stack-outputs';
import { psqlScalarQuery } from '../lib/exec/libpq';
import { PgServerConnections } from '../lib/exec/server-connections';
import { systemClock, type Clock } from '../lib/engine/ports';
import { LocalPgbenchExecutor } from '../lib/exec/pgbench-executor';
import {
  ownAvailabilityZone,
  imdsEndpointFrom,
  imdsV2,
  InterruptionRecorder,
  onSpotNotice,
  SpotNoticeWatcher,
} from '../lib/aws/spot';
import { runBlobs } from '../lib/aws/s3-sink';

const USAGE = `usage: node runner.js --request s3://BUCKET/runs/RUNID/request.json --runner-index I [--region R]
  test-only: [--endpoint-url URL] [--test-sslmode M] [--test-proxy-kind K] [--test-pool-control on|off]
Started by \`proxylab run\` through SSM; see docs/aws.md. Exit: 0 every verdict held, 1 broke/failed/interrupted, 2 usage.
`;

/** This runner's version: the content hash of the file being run (runner.js once bundled). */
function ownSoftwareVersion(): string | null {
  try {
    return softwareVersionOf(fs.readFileSync(__filename));
  } catch {
    return null;
  }
}

function pgbenchVersion(): Promise<string | null> {
  const res = spawnSync('pgbench', ['--version'], { encoding: 'utf8' });
  const m = /pgbench \(PostgreSQL\) (\S+)/.exec(res.stdout ?? '');
  return Promise.resolve(m ? (m[1] as string) : null);
}

/** The system clock whose sleeps do not keep the process alive (the notice poll's wait). */
const unrefClock: Clock = {
  now: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
};

/** Where the runner's pgbench work directories go; removed when the runner ends, however it ends. */
export function runnerWorkRoot(runId: string, runnerIndex: number): string {
  return path.join(os.tmpdir(), `proxylab-runner-${runId}-${runnerIndex}`);
}

export async function main(argv: readonly string[]): Promise<number> {
  const write = (line: string): void => void process.stdout.write(line);
  const abort = new AbortController();
  // Set once the run is known: a signal (SIGTERM when a spot runner is stopped) is recorded beside the run.
  let recorder: InterruptionRecorder | null = null;
  const onSignal = (sig: NodeJS.Signals): void => {
    process.stderr.write(`${sig}: stopping; finished steps are in S3, re-run the same command to resume\n`);
    void recorder?.signal(sig);
    abort.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  if (argv.includes('--help') || argv.includes('-h')) {
    write(USAGE);
    return 0;
  }
  let workRoot: string | null = null;
  let watcher: SpotNoticeWatcher | null = null;
  try {
    const cli = parseRequestRunnerArgv(argv);
    // The run id is in the request's URL: the work root exists (and is removed) even when reading it fails.
    workRoot = runnerWorkRoot(parseRequestUrl(cli.url).runId, cli.runnerIndex);
    // Only the four clients the runner uses (keeps SSM and CloudFormation out of the bundle).
    const config = {
      ...(cli.region ? { region: cli.region } : {}),
      ...(cli.endpointUrl ? { endpoint: cli.endpointUrl } : {}),
    };
    const forcePathStyle = Boolean(
      cli.endpointUrl || process.env.AWS_ENDPOINT_URL || process.env.AWS_ENDPOINT_URL_S3,
    );
    // PROXYLAB_AWS_CALL_LOG: the same audit log as the CLI's (lib/core/aws-call-log.ts).
    const s3 = withAwsCallLog(new S3Client({ ...config, forcePathStyle }));
    const args = runnerArgsFromRequest(await readRunRequest(s3, cli.url), cli.runnerIndex, cli.test);
    const rec = new InterruptionRecorder(
      runBlobs(s3, args.bucket, args.runId),
      args.runnerIndex,
      systemClock,
      (line) => process.stderr.write(`${line}\n`),
    );
    recorder = rec;
    if (abort.signal.aborted) void rec.signal('SIGTERM');
    // On a spot runner the two-minute notice records the interruption and stops the run: the
    // shutdown's SIGTERM may never reach us (lib/aws/spot.ts).
    const imdsEndpoint = imdsEndpointFrom(process.env);
    const info = (line: string): void => write(`${new Date().toISOString()} info ${line}\n`);
    watcher = imdsEndpoint
      ? new SpotNoticeWatcher({
          imds: imdsV2(imdsEndpoint),
          clock: unrefClock,
          log: info,
          onNotice: onSpotNotice({ recorder: rec, stop: () => abort.abort(), clock: systemClock, log: info }),
        })
      : null;
    await watcher?.start();
    const executor = new LocalPgbenchExecutor({
      pgbench: 'pgbench',
      workRoot,
    });
    const { result, allHeld } = await runCloudRunner(args, {
      s3,
      secrets: withAwsCallLog(new SecretsManagerClient(config)),
      rds: withAwsCallLog(new RDSClient(config)),
      lambda: withAwsCallLog(new LambdaClient(config)),
      executor,
      query: psqlScalarQuery(),
      clock: systemClock,
      write,
      signal: abort.signal,
      pgbenchVersion,
      softwareVersion: ownSoftwareVersion,
      ownZone: () => ownAvailabilityZone(process.env),
      serverConnections: (writer, log) => new PgServerConnections({ connection: writer, log }),
      onProgress: (ev) => {
        // The run started again in this slot (after the lock and the plan): close an earlier interruption.
        if (ev.type === 'run-start') void rec.resumed();
        if (ev.type === 'step-start') rec.setStepInFlight(ev.step.stepId);
        if (ev.type === 'step-end') rec.setStepInFlight(null);
      },
    });
    if (result.manifest.status === 'interrupted') return 1;
    return allHeld ? 0 : 1;
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    process.stderr.write(`${err instanceof UsageError ? 'error' : 'runner failed'}: ${msg}\n`);
    return exitCodeFor(err);
  } finally {
    watcher?.stop();
    // A notice being handled finishes writing its record first.
    await watcher?.done();
    // The interruption record reaches S3 before the process ends (the shutdown waits for us).
    await recorder?.flushed();
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
    // Step work directories are removed one by one; their root would otherwise stay in /tmp.
    if (workRoot !== null) fs.rmSync(workRoot, { recursive: true, force: true });
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
