/**
 * `proxylab fetch RUNID`: copy s3://<bucket>/runs/<runId>/ to <out>/<runId>/ — the layout
 * `proxylab local` writes — then write the report when lib/report can.
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import { UsageError } from '../../lib/core/errors';
import { checkOutDir } from '../../lib/core/out-dir';
import { forTerminalLine } from '../../lib/core/terminal-text';
import { FileSystemBlobStore } from '../../lib/results/fs-blob-store';
import { addBucketOptions, resolveBucket, type BucketFlags } from './status';
import { clientsModule, operatorModule, reportModule, runsModule } from './lazy';

interface FetchFlags extends BucketFlags {
  readonly out: string;
  readonly report: boolean;
}

export function register(program: Command): void {
  addBucketOptions(
    program
      .command('fetch')
      .description(
        'Download a cloud run (manifest, step JSON, raw pgbench output, metrics) into OUT/RUNID/, the layout proxylab local writes; then write its report. ' +
          'A file that cannot be read or does not fit its schema is skipped and named, and the copy is reported PARTIAL.\n\n' +
          'Exit codes: 0 copied (possibly partial), 2 no such run, or its manifest.json / plan.json unreadable.',
      )
      .argument('<runId>', 'run id (proxylab status lists them)')
      .option('--out <dir>', 'directory that holds run directories', 'runs')
      .option('--no-report', 'do not write report.html / summary.md after fetching'),
  ).action(async (runId: string, flags: FetchFlags) => {
    operatorModule().validateRunId(runId);
    checkOutDir(flags.out);
    const { bucket, settings } = await resolveBucket(flags);
    const s3 = clientsModule().createS3Client(settings);
    // Listed like `status` does: an unreadable manifest is named, and the rest is still copied.
    const progress = await runsModule().readListing(s3, bucket, runId);
    const runDir = path.resolve(flags.out, runId);
    const res = await runsModule().fetchRun(s3, bucket, runId, new FileSystemBlobStore(runDir));
    // The store makes runDir with the first file it writes: with none written, no message names it
    // as the place of a copy (it may not exist).
    const copied = res.files > 0;
    process.stdout.write(
      `${runsModule().formatListing(progress)}\n` +
        (copied
          ? `fetched ${res.files} files (${(res.bytes / 1024).toFixed(0)} KiB) into ${runDir}\n`
          : `fetched no file: nothing written to ${runDir}\n`),
    );
    // Key names come from the bucket: shown with control characters made visible.
    for (const s of res.skipped)
      process.stderr.write(`warning: skipped ${forTerminalLine(s.key)}: ${forTerminalLine(s.reason)}\n`);
    // Partially bad runs (docs/report.md): the same policy as report, compare and status.
    if (res.skipped.length > 0)
      process.stderr.write(
        `PARTIAL copy: ${res.skipped.length} file(s) skipped (named above); ${copied ? `the rest is in ${runDir}` : 'nothing else was copied'}\n`,
      );
    if (res.identityUnreadable.length > 0)
      throw new UsageError(
        `${res.identityUnreadable.map(forTerminalLine).join(', ')} could not be copied: ` +
          (copied
            ? `without it the copy in ${runDir} is not a run (no report written)`
            : 'nothing else was copied either, so no run directory was made (no report written)'),
        { code: 'run-file-invalid' },
      );
    if (flags.report) {
      // A report that cannot be written does not fail the fetch: the data is on disk.
      try {
        const r = reportModule().writeReport(runDir);
        process.stdout.write(`report: ${r.htmlPath}\nsummary: ${r.mdPath}\n`);
      } catch (err) {
        process.stdout.write(
          `report not written: ${forTerminalLine(err instanceof Error ? err.message : String(err))} (retry: npx proxylab report ${runDir})\n`,
        );
      }
    }
  });
}
