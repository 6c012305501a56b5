/**
 * `proxylab run --lab FILE --suite NAME`: start a suite on the lab's runners through SSM
 * (AWS-RunShellScript, one command per runner), print the run id, follow progress from S3 until
 * the run ends (`--detach` returns at once). Runner 0 invokes the metrics collector at the end.
 */
import type { Command } from 'commander';
import { profileOption, regionOption } from './aws-options';
import { runExitCode } from '../../lib/suite/verdict';
import { UsageError } from '../../lib/core/errors';
import { createAwsClients, createSchedulerClient, requireRegion } from '../../lib/aws/clients';
import {
  awsSettings,
  defaultCloudRunId,
  followRun,
  runnerArgsFromOutputs,
  validateRunId,
  validateSuite,
  verdictCounts,
} from '../../lib/operator/operator';
import { readLabOutputs, stackNameFor } from '../../lib/operator/outputs';
import { formatDuration } from '../../lib/core/format';
import { runnerSoftwareVersion } from '../../lib/constructs/runner-bundle';
import { decideRunExpiry, estimateSuiteSec } from '../../lib/operator/run-window';
import { formatExpiresAt } from '../../lib/config/expiry';
import { extendLabExpiry, readLabExpiry } from '../../lib/operator/extend';
import { buildRunCommands, sendRunCommands } from '../../lib/operator/ssm';
import { buildRunRequest, writeRunRequest } from '../../lib/aws/run-request';
import { loadLabFile } from '../../lib/config/load';
import { labWarnings } from '../../lib/config/warnings';
import { labTargets } from '../../lib/config/targets';
import type { LabConfig } from '../../lib/config/types';
import { PRICE_TABLES } from '../../lib/cost/price-table';
import { targetPrices } from '../../lib/cost/target-prices';
import type { TargetPrice } from '../../lib/suite/types';

interface RunFlags {
  readonly lab: string;
  readonly suite: string;
  readonly runId?: string;
  readonly detach?: boolean;
  readonly dryRun?: boolean;
  readonly outputs?: string;
  readonly profile?: string;
  readonly region?: string;
  readonly pollSec: string;
  readonly extend?: boolean;
}

export function register(program: Command): void {
  program
    .command('run')
    .description(
      "Run a suite on a deployed lab's runners: one SSM SendCommand (AWS-RunShellScript) per runner, each " +
        'step written to s3://<bucket>/runs/<runId>/ as it ends; follows progress (steps done/total, ETA) until ' +
        'the run ends. Re-running with the same --run-id resumes without repeating finished steps. Exit 0 when ' +
        'every verdict held, 1 when one broke or the run failed, 2 for usage errors.',
    )
    .requiredOption('--lab <file>', 'lab file (JSON) of the deployed lab')
    .requiredOption(
      '--suite <name>',
      'suite to run (proxylab local --help lists them; e1…e5 are the published experiments)',
    )
    .option(
      '--run-id <id>',
      'run id (letters, digits, . _ -); default cloud-<UTC date>-<time>; an existing id resumes',
    )
    .option('--detach', 'start the run and return at once (follow later with proxylab status RUNID)')
    .option(
      '--dry-run',
      'print the exact SendCommand requests as JSON and send nothing (still reads the stack outputs from CloudFormation; with --outputs FILE no AWS call at all)',
    )
    .option(
      '--outputs <file>',
      'read the stack outputs from this file (cdk --outputs-file JSON or DescribeStacks JSON) instead of CloudFormation',
    )
    .option(
      '--extend',
      "when the suite's estimated end is past the lab's expiry, move the expiry later by the hours missing (default: refuse)",
    )
    .option('--poll-sec <s>', 'progress poll interval in seconds', '15')
    .addOption(profileOption())
    .addOption(regionOption())
    .action(async (flags: RunFlags) => {
      // Everything the user typed is checked before the first AWS call.
      const lab = loadLabFile(flags.lab);
      const suite = validateSuite(flags.suite);
      const now = new Date();
      const runId = validateRunId(flags.runId ?? defaultCloudRunId(now));
      const pollSec = Number(flags.pollSec);
      if (!Number.isFinite(pollSec) || pollSec < 1)
        throw new UsageError(`--poll-sec must be a number ≥ 1, got "${flags.pollSec}"`);
      const settings = awsSettings(flags, lab);
      // The runners need the region explicitly (the SDK on EC2 does not read it from IMDS).
      const region = await requireRegion(settings);
      const stackName = stackNameFor(lab.name);
      const clients = createAwsClients(settings);
      const outputs = await readLabOutputs(lab.name, flags.outputs, () => clients.cloudformation);
      if (outputs.labName !== lab.name)
        throw new UsageError(`the outputs are of lab "${outputs.labName}", not "${lab.name}"`);
      const base = runnerArgsFromOutputs(outputs, lab, {
        runId,
        suite,
        region,
        startAt: now.toISOString(),
        // The runners refuse to run another version of the runner software than this checkout's.
        expectVersion: runnerSoftwareVersion(),
        // What each target adds per hour in the region the lab runs in, for the decision table.
        targetPrices: runTargetPrices(lab, region),
      });
      for (const w of labWarnings(lab)) process.stderr.write(`warning [${w.id}] ${w.path}: ${w.message}\n`);
      const request = buildRunRequest(base, outputs.runnerInstanceIds.length);
      const plans = buildRunCommands(outputs.runnerInstanceIds, request);
      if (flags.dryRun) {
        // The request that would be written to S3, then the exact SendCommand requests.
        process.stdout.write(
          JSON.stringify({ request, sendCommands: plans.map((p) => p.input) }, null, 2) + '\n',
        );
        return;
      }
      // A run must end before the lab deletes itself (and its results bucket).
      if (lab.ttlHours !== null) {
        const scheduler = createSchedulerClient({ ...settings, region });
        let expiresAt: Date | null = null;
        try {
          expiresAt = await readLabExpiry(scheduler, stackName);
        } catch (err) {
          // Without scheduler:GetSchedule the run still starts; say what was not checked.
          process.stdout.write(
            `warning: could not read the expiry schedule (${err instanceof Error ? err.message : String(err)}); not checking that the run ends before the lab expires\n`,
          );
        }
        const decision = decideRunExpiry({
          now,
          estimatedSec: estimateSuiteSec(suite, lab),
          expiresAt,
          allowExtend: flags.extend ?? false,
          suite,
          labFile: flags.lab,
        });
        if (decision.kind === 'extend') {
          const ext = await extendLabExpiry(scheduler, { stackName, hours: decision.hours, now });
          process.stdout.write(
            `extended the lab by ${decision.hours} h: it now expires at ${formatExpiresAt(ext.expiresAt)} (run ends about ${formatExpiresAt(decision.estimatedEnd)})\n`,
          );
        }
      }
      // The runners read what to run from S3: the request goes there before any of them starts.
      await writeRunRequest(clients.s3, request);
      const sent = await sendRunCommands(clients.ssm, plans);
      process.stdout.write(
        `run ${runId}: suite ${suite} on ${sent.length} runner(s) (${sent.map((s) => `${s.instanceId}: ${s.commandId}`).join(', ')})\n` +
          `results: s3://${outputs.resultsBucketName}/runs/${runId}/\n`,
      );
      if (flags.detach) {
        process.stdout.write(
          `detached. Follow: npx proxylab status ${runId} --lab ${flags.lab}; then: npx proxylab fetch ${runId} --lab ${flags.lab}\n`,
        );
        return;
      }
      process.stdout.write('following progress (Ctrl-C stops following, not the run)…\n');
      const progress = await followRun({
        s3: clients.s3,
        ssm: clients.ssm,
        bucket: outputs.resultsBucketName,
        runId,
        sent,
        since: now,
        pollMs: pollSec * 1000,
        print: (line) => process.stdout.write(`${line}\n`),
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
        now: () => new Date(),
      });
      const counts = await verdictCounts(clients.s3, outputs.resultsBucketName, runId);
      process.stdout.write(
        `run ${runId} ${progress.status} in ${formatDuration(progress.elapsedSec)}: ${counts.held} verdicts held, ${counts.broke} broken (${counts.comparisonsBroke} of them scenario comparisons), ${counts.informational} informational.\n` +
          `Fetch it: npx proxylab fetch ${runId} --lab ${flags.lab}\n`,
      );
      // The same rule as `proxylab local`: step verdicts and judged comparisons (lib/suite/verdict.ts).
      if (runExitCode(progress.status === 'completed', counts) !== 0) process.exitCode = 1;
    });
}

/**
 * Each target's price per hour in `region`; in a region the price table lacks (a lab deployed with
 * `deploy --force`), every target is recorded as not priced, saying why, and the run goes on.
 */
export function runTargetPrices(lab: LabConfig, region: string): TargetPrice[] {
  if (PRICE_TABLES[region]) return targetPrices(lab, { region, regionFrom: 'deploy' });
  return labTargets(lab).map((t) => ({
    target: t.ref.name,
    usdPerHour: null,
    basis: `not priced: no price table for ${region} in lib/cost/price-table.ts`,
  }));
}
