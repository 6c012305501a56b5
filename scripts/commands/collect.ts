/**
 * `proxylab collect`: read CloudWatch and Performance Insights metrics for one run window and write
 * them beside the run's results (S3 or a local run directory). Same code as the collector Lambda.
 */
import * as path from 'node:path';
import type { Command } from 'commander';
import { profileOption } from './aws-options';
import { InfrastructureError, UsageError } from '../../lib/core/errors';
import { checkOutDir } from '../../lib/core/out-dir';
import { readJsonFile } from '../../lib/core/read';
import type { CollectSummary, RunWriter, SourceSummary, CollectEvent } from '../../lib/collector';
import {
  clientsModule,
  collectorModule,
  loadModule,
  operatorModule,
  outputsModule,
  recollectModule,
} from './lazy';

interface CollectFlags {
  readonly event?: string;
  readonly runId?: string;
  readonly start?: string;
  readonly end?: string;
  readonly clusterId?: string;
  readonly instanceId?: string[];
  readonly instanceClass?: string[];
  readonly engine?: string;
  readonly piResourceId?: string[];
  readonly proxy?: string[];
  /** false with --no-pi. */
  readonly pi: boolean;
  readonly bucket?: string;
  readonly out?: string;
  readonly profile?: string;
  readonly region?: string;
  readonly json?: boolean;
  readonly lab?: string;
  readonly outputs?: string;
}

const collectList = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

const EVENT_FLAGS = [
  'runId',
  'start',
  'end',
  'clusterId',
  'instanceId',
  'instanceClass',
  'engine',
  'piResourceId',
  'proxy',
] as const;

export function register(program: Command): void {
  program
    .command('collect')
    .description(
      "Collect the database's and the proxies' own metrics for a run window: CloudWatch (the Aurora or " +
        'RDS for PostgreSQL instance metrics and RDS Proxy metrics) and Performance Insights counters, written as runs/<runId>/metrics/cloudwatch.json ' +
        'and pi.json to the results bucket (--bucket) or into a local run directory (--out). ' +
        'Honours AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE>, AWS_PROFILE and AWS_REGION.\n\n' +
        'Exit codes: 0 collected (series without data are recorded as no-data), 1 AWS failed for every ' +
        'series, 2 usage error (checked before any AWS call).',
    )
    .option(
      '--event <file>',
      'collector event as JSON: {runId, window:{start,end}, cluster:{clusterId, instanceIds, piResourceIds, instanceClasses?, engine?}, proxies, bucket?, skipPi?} (docs/collector.md)',
    )
    .option(
      '--lab <file>',
      'collect a finished cloud run of this deployed lab again: with --run-id only, the window comes from the run manifest and the resources from the stack outputs',
    )
    .option('--outputs <file>', 'with --lab: read the stack outputs from this file instead of CloudFormation')
    .option('--run-id <id>', 'run id (one path segment: letters, digits, . _ -)')
    .option('--start <iso>', 'window start, ISO-8601 with zone (2026-11-21T10:00:00Z)')
    .option('--end <iso>', 'window end, ISO-8601 with zone')
    .option('--cluster-id <id>', 'Aurora cluster identifier (RDS for PostgreSQL: the DB instance identifier)')
    .option('--instance-id <id>', 'DB instance identifier (repeatable)', collectList)
    .option(
      '--engine <engine>',
      'aurora-postgresql (default) or postgres (RDS for PostgreSQL): which instance metrics exist',
    )
    .option(
      '--instance-class <id=class>',
      'instance class, e.g. writer=db.t4g.medium; db.t* adds CPUCreditBalance (repeatable)',
      collectList,
    )
    .option(
      '--pi-resource-id <id>',
      'Performance Insights resource id, the DbiResourceId db-… (repeatable)',
      collectList,
    )
    .option('--proxy <name>', 'RDS Proxy name (repeatable)', collectList)
    .option('--no-pi', 'skip Performance Insights (no pi.json)')
    .option('--bucket <name>', "results bucket to write to (default: the event file's bucket)")
    .option('--out <dir>', 'write into this local run directory (DIR/metrics/*.json) instead of S3')
    .addOption(profileOption())
    .option('--region <region>', "AWS region (default: AWS_REGION / the profile's region)")
    .option('--json', 'print the summary as JSON')
    .action(async (flags: CollectFlags) => {
      const event =
        flags.lab !== undefined
          ? await eventFromLab(flags)
          : collectorModule().parseCollectEvent(readEvent(flags));
      const request = flags.pi ? event : { ...event, skipPi: true };
      const bucket = flags.bucket ?? request.bucket;
      if (flags.out !== undefined && flags.bucket !== undefined)
        throw new UsageError('give either --bucket or --out, not both');
      if (flags.out === undefined && bucket === undefined)
        throw new UsageError('no destination: give --bucket NAME or --out DIR');
      if (flags.out !== undefined) checkOutDir(flags.out);

      const clients = collectorModule().createCollectorClients({
        region: flags.region,
        profile: flags.profile,
      });
      try {
        const writer: RunWriter =
          flags.out !== undefined
            ? new (collectorModule().LocalRunWriter)(path.resolve(flags.out))
            : new (collectorModule().S3RunWriter)(clients.s3, requireBucket(bucket), request.runId);
        const summary = await collectorModule().collectMetrics(request, {
          cloudwatch: clients.cloudwatch,
          pi: collectorModule().wantsPi(request) ? clients.pi : null,
          writer,
        });
        process.stdout.write(flags.json ? JSON.stringify(summary, null, 2) + '\n' : formatSummary(summary));
        const all = [summary.cloudwatch, ...(summary.pi ? [summary.pi] : [])];
        const ok = all.reduce((n, s) => n + s.series.ok + s.series.noData, 0);
        const errors = all.reduce((n, s) => n + s.series.error, 0);
        if (errors > 0 && ok === 0) {
          throw new InfrastructureError(
            `every metric query failed (${errors} series); see the reasons in ${summary.written.join(', ')}`,
          );
        }
      } finally {
        clients.destroy();
      }
    });
}

/** `--lab FILE --run-id ID`: the event runner 0 sent, rebuilt from the manifest and the outputs. */
async function eventFromLab(flags: CollectFlags): Promise<CollectEvent> {
  const lab = loadModule().loadLabFile(flags.lab as string);
  const others = EVENT_FLAGS.filter((k) => k !== 'runId' && flags[k] !== undefined);
  if (flags.event !== undefined || others.length > 0)
    throw new UsageError(
      '--lab takes the window and resources from the deployed lab: give only --run-id with it',
    );
  if (flags.runId === undefined)
    throw new UsageError('--lab needs --run-id (the finished run to collect again)');
  const runId = operatorModule().validateRunId(flags.runId);
  const settings = operatorModule().awsSettings(flags, lab);
  const clients = clientsModule().createAwsClients(settings);
  try {
    const outputs = await outputsModule().readLabOutputs(
      lab.name,
      flags.outputs,
      () => clients.cloudformation,
    );
    return await recollectModule().eventForFinishedRun(clients.s3, outputs, lab, runId);
  } finally {
    clients.s3.destroy();
    clients.cloudformation.destroy();
  }
}

function readEvent(flags: CollectFlags): unknown {
  const given = EVENT_FLAGS.filter((k) => flags[k] !== undefined);
  if (flags.event === undefined) return collectorModule().eventFromFlags(flags);
  if (given.length > 0)
    throw new UsageError(
      '--event FILE cannot be combined with --run-id/--start/--end/--cluster-id/--instance-id/--instance-class/--pi-resource-id/--proxy',
    );
  try {
    // Bounded: a regular file (not a device or FIFO), size-limited, depth-limited JSON.
    return readJsonFile(path.resolve(flags.event), 'runFile');
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`--event: ${err.message}`, { code: err.code });
    throw err;
  }
}

function formatSummary(summary: CollectSummary): string {
  const line = (label: string, s: SourceSummary): string =>
    `  ${label}: period ${s.periodSec} s, ${s.series.ok + s.series.noData + s.series.error} series ` +
    `(${s.series.ok} ok, ${s.series.noData} no-data, ${s.series.error} error), ${s.calls} call(s) → ${s.written}\n`;
  return (
    `collected run ${summary.runId}, ${summary.window.start} → ${summary.window.end}\n` +
    line('cloudwatch', summary.cloudwatch) +
    (summary.pi ? line('pi', summary.pi) : '  pi: skipped\n')
  );
}

/** The destination bucket, checked above when --out is absent; a usage error if that ever changes. */
function requireBucket(bucket: string | undefined): string {
  if (bucket === undefined) throw new UsageError('no destination: give --bucket NAME or --out DIR');
  return bucket;
}
