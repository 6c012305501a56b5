/** Phase 7 of the cloud runner (./runner.ts): runner 0 invokes the metrics collector for the run window. */
import type { RunManifest } from '../suite/types';
import {
  buildCollectEvent,
  collectorWindow,
  incompleteSources,
  invokeCollector,
  settleWaitMs,
} from '../aws/collector-invoke';
import type { RunnerArgs } from '../aws/runner-args';
import type { Logger } from '../aws/secrets';
import type { RunnerDeps, RunnerResult } from './runner-deps';

/**
 * Runner 0, after a run that was not interrupted: invoke the metrics collector once CloudWatch and
 * PI have published the run's last minutes. A failure is a warning (`proxylab collect` later), never
 * the run's outcome.
 */
export async function collectAfterRun(
  args: RunnerArgs,
  deps: RunnerDeps,
  manifest: RunManifest,
  log: Logger,
  me: string,
): Promise<RunnerResult['collector']> {
  let collector: RunnerResult['collector'] = 'skipped';
  if (args.collector && args.runnerIndex === 0 && manifest.status !== 'interrupted') {
    const start = new Date(manifest.startedAt);
    const end = new Date(manifest.endedAt ?? deps.clock.now().toISOString());
    try {
      const event = buildCollectEvent(args.collector, args.runId, collectorWindow(start, end), args.bucket);
      // Collect once the metrics of the run's last minutes have been published, not at once.
      const waitMs = settleWaitMs(new Date(event.window.end), deps.clock.now(), deps.metricsSettleMs);
      if (waitMs > 0) {
        log.info(
          `${me}: waiting ${Math.round(waitMs / 1000)} s for CloudWatch and PI to publish the run's last minutes`,
        );
        await deps.clock.sleep(waitMs);
      }
      const summary = await invokeCollector(deps.lambda, args.collector.functionName, event);
      collector = 'invoked';
      log.info(
        `${me}: collector ${args.collector.functionName} wrote metrics for ${event.window.start} – ${event.window.end}`,
      );
      const incomplete = incompleteSources(summary);
      if (incomplete.length > 0)
        log.warn(
          `${me}: ${incomplete.join(' and ')} had not published the whole window yet; collect again later: npx proxylab collect --lab FILE --run-id ${args.runId}`,
        );
    } catch (err) {
      collector = 'failed';
      log.warn(
        `${me}: collector failed (run \`proxylab collect\` later): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  return collector;
}
