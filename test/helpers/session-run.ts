/** The session-state suite run through the engine on a local stack, as `proxylab local` runs it. */
import { systemClock } from '../../lib/engine/ports';
import { runSuite, type RunSuiteResult } from '../../lib/engine/run-suite';
import type { FileSystemSink } from '../../lib/local/fs-sink';
import { BENCH_DB } from '../../lib/local/postgres';
import { localSessionProbeRunner } from '../../lib/local/session-probe-runner';
import type { LocalStack } from '../../lib/local/stack';
import type { Suite } from '../../lib/suite/scenario';

type Steps = Parameters<typeof runSuite>[0]['steps'];

/** `steps` of `suite` on `stack` (its targets, executor, pool control and session probe), into `sink`. */
export function runOnLocalStack(
  stack: LocalStack,
  run: {
    readonly runId: string;
    readonly suite: Suite;
    readonly steps: Steps;
    readonly sink: FileSystemSink;
  },
): Promise<RunSuiteResult> {
  return runSuite({
    runId: run.runId,
    suite: run.suite,
    steps: run.steps,
    targets: stack.targets,
    executor: stack.executor,
    pool: stack.pool,
    sink: run.sink,
    clock: systemClock,
    mode: 'local',
    environment: stack.environment,
    settings: { suite: run.suite.name },
    infrastructure: stack.infrastructure,
    probes: { 'session-state': localSessionProbeRunner(stack, BENCH_DB) },
  });
}
