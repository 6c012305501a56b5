/**
 * `proxylab status [runId]`: one run's progress (steps done/total, elapsed, ETA, status), or every
 * run in the lab's results bucket.
 */
import type { Command } from 'commander';
import { profileOption, regionOption } from './aws-options';
import { UsageError } from '../../lib/core/errors';
import { forTerminalLine } from '../../lib/core/terminal-text';
import type { LabConfig } from '../../lib/config/types';
import type { AwsSettings } from '../../lib/aws/clients';
import {
  clientsModule,
  cloudformationModule,
  loadModule,
  operatorModule,
  outputsModule,
  runsModule,
} from './lazy';

export interface BucketFlags {
  readonly lab?: string;
  readonly bucket?: string;
  readonly outputs?: string;
  readonly profile?: string;
  readonly region?: string;
}

/** The results bucket from --bucket, --outputs FILE or the deployed stack of --lab. */
export async function resolveBucket(
  flags: BucketFlags,
): Promise<{ bucket: string; settings: AwsSettings; lab: LabConfig | null }> {
  if (!flags.bucket && !flags.lab)
    throw new UsageError('give --lab FILE (the deployed lab) or --bucket NAME');
  const lab = flags.lab ? loadModule().loadLabFile(flags.lab) : null;
  const settings = operatorModule().awsSettings(flags, lab);
  if (flags.bucket && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(flags.bucket))
    throw new UsageError(`--bucket "${flags.bucket}" is not a valid S3 bucket name`);
  await clientsModule().requireRegion(settings);
  if (flags.bucket) return { bucket: flags.bucket, settings, lab };
  const outputs = await outputsModule().readLabOutputs(
    (lab as LabConfig).name,
    flags.outputs,
    () => new (cloudformationModule().CloudFormationClient)(clientsModule().clientConfig(settings)),
  );
  return { bucket: outputs.resultsBucketName, settings, lab };
}

export function addBucketOptions(cmd: Command): Command {
  return cmd
    .option('--lab <file>', 'lab file (JSON) of the deployed lab (its stack outputs name the results bucket)')
    .option('--bucket <name>', 'results bucket name (instead of --lab)')
    .option('--outputs <file>', 'read the stack outputs from this file instead of CloudFormation')
    .addOption(profileOption())
    .addOption(regionOption());
}

/** Runs listed without --limit. */
export const DEFAULT_STATUS_LIMIT = 50;

interface StatusFlags extends BucketFlags {
  readonly limit: string;
}

function parseLimit(value: string): number {
  if (!/^\d+$/.test(value))
    throw new UsageError(`--limit must be a whole number (0 = every run), got "${value}"`);
  const n = Number(value);
  return n === 0 ? Number.POSITIVE_INFINITY : n;
}

export function register(program: Command): void {
  addBucketOptions(
    program
      .command('status')
      .description(
        "Progress of a cloud run (steps done/total, elapsed, ETA, status) or, without RUNID, the newest runs in the lab's results bucket " +
          `(${DEFAULT_STATUS_LIMIT} unless --limit; a manifest that cannot be read is listed as unreadable).`,
      )
      .argument('[runId]', 'run id (default: list the newest runs)')
      .option(
        '--limit <n>',
        'list at most this many runs, newest first (0 = every run)',
        String(DEFAULT_STATUS_LIMIT),
      ),
  ).action(async (runId: string | undefined, flags: StatusFlags) => {
    if (runId !== undefined) operatorModule().validateRunId(runId);
    const limit = parseLimit(flags.limit);
    const { bucket, settings } = await resolveBucket(flags);
    const s3 = clientsModule().createS3Client(settings);
    if (runId !== undefined) {
      process.stdout.write(
        `${runsModule().formatListing(await runsModule().readListing(s3, bucket, runId))}\n`,
      );
      return;
    }
    const { ids, ignored } = await runsModule().listRuns(s3, bucket); // newest first
    const note = runsModule().formatIgnoredPrefixes(ignored);
    if (note !== null) process.stderr.write(`${note}\n`);
    if (ids.length === 0) {
      process.stdout.write(`no runs in s3://${bucket}/runs/\n`);
      return;
    }
    const shown = ids.slice(0, limit);
    const rows = await runsModule().mapBounded(shown, runsModule().LIST_CONCURRENCY, (id) =>
      runsModule().readListing(s3, bucket, id),
    );
    for (const row of rows) process.stdout.write(`${runsModule().formatListing(row)}\n`);
    if (shown.length < ids.length)
      process.stdout.write(
        `… ${shown.length} of ${ids.length} runs shown, newest first; --limit N for more, --limit 0 for all (bucket ${forTerminalLine(bucket)})\n`,
      );
  });
}
