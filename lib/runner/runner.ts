/**
 * The runner on an EC2 instance, as a library call (scripts/runner.ts is its thin entry):
 * read the DB secret, build the targets (writer + each proxy), read max_connections, plan the
 * suite, and run it through the engine with the cloud adapters — S3 sink, RDS Proxy pool control,
 * CPU guard, and with several runners the fleet split/merge through S3. Runner 0 invokes the
 * collector for the run window at the end.
 *
 * The password stays in memory and in pgbench's/psql's environment (PGPASSWORD): the logger
 * scrubs it from every line, and nothing here puts it into argv, a manifest or a step record.
 *
 * This file runs the phases in order; each lives in its own file: ./lab-targets.ts (secret, targets,
 * probes), ./runner-poolers.ts, ./run-environment.ts, ./runner-plan.ts (plan, start),
 * ./runner-ports.ts (fleet, progress, disruption probe), ./runner-collect.ts; ./runner-deps.ts
 * says what the runner is given.
 */
import { InfrastructureError, UsageError } from '../core/errors';
import { runSuite, type RunSuiteResult } from '../engine/run-suite';
import { getSuite, LAB_SUITE_NAME, type Suite } from '../suite/catalog';
import { getTestSuite } from '../suite/test-suites';
import { labSuite, withDisruptionLoad } from '../config/scenarios';
import { RunnerCpuMetricsSampler } from './cpu';
import type { RunnerArgs } from '../aws/runner-args';
import { acquireCloudRunLock } from './run-lock';
import { cloudSessionProbeRunner } from './session-probe-runner';
import { S3ResultSink } from '../aws/s3-sink';
import { redact, redactingLogger } from '../aws/secrets';
import { withPoolerSampler } from '../engine/pooler-metrics';
import { checkSoftwareVersion, type RunnerDeps, type RunnerResult } from './runner-deps';
import { connectTargets, probeTargets, readDbSecret } from './lab-targets';
import { cloudEnvironment, runSettings } from './run-environment';
import { checkResumable, planCloudRun, waitForAgreedStart } from './runner-plan';
import { disruptionRunner, fleetPorts, progressTo } from './runner-ports';
import { collectAfterRun } from './runner-collect';

export { checkSoftwareVersion, type RunnerDeps, type RunnerResult } from './runner-deps';
export { probeTargets, type ProbedTargets } from './lab-targets';
export { runSettings, runZones } from './run-environment';

export async function runCloudRunner(args: RunnerArgs, deps: RunnerDeps): Promise<RunnerResult> {
  const secrets: string[] = [];
  try {
    // One writer per run slot (lib/runner/run-lock.ts): a second runner with the same run id and
    // index is refused before it touches the run; the lock goes when this runner ends.
    const lock = await acquireCloudRunLock(deps.s3, args.bucket, {
      runId: args.runId,
      runnerIndex: args.runnerIndex,
      command: `proxylab-runner --run-id ${args.runId} --runner-index ${args.runnerIndex}`,
      log: (line) => deps.write(`${new Date().toISOString()} info ${line}\n`),
    });
    try {
      return await runCloudRunnerInner(args, deps, secrets);
    } finally {
      // A lock left behind refuses a resume on a replacement runner ("held by …"): say so, with
      // the key to delete, instead of swallowing the failure (the run's own outcome still wins).
      await lock.release().catch((err: unknown) => {
        deps.write(
          `${new Date().toISOString()} warn could not release the run lock s3://${args.bucket}/${lock.key}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}; a resume of run ${args.runId} on another runner is refused until it is deleted (aws s3 rm s3://${args.bucket}/${lock.key})\n`,
        );
      });
    }
  } catch (err) {
    // Belt and braces: no error message leaves the runner with the password in it.
    if (err instanceof Error) err.message = redact(err.message, secrets);
    throw err;
  }
}

async function runCloudRunnerInner(
  args: RunnerArgs,
  deps: RunnerDeps,
  secrets: string[],
): Promise<RunnerResult> {
  const suite = runnerSuite(args, deps);
  const log = redactingLogger(deps.write, () => secrets);
  // 0-based like the files (`runner-<i>`, `part-<i>.json`) and the docs: runner 0 leads.
  const me = `runner ${args.runnerIndex} (of ${args.runnerCount})`;
  checkSoftwareVersion(args.expectVersion, deps.softwareVersion?.() ?? null);

  const credentials = await readDbSecret(args, deps, secrets);
  log.info(
    `${me}: run ${args.runId}, suite ${args.suite}, bucket ${args.bucket}, writer ${args.writerEndpoint.host}, proxies ${args.proxies.map((p) => p.name).join(', ') || 'none'}`,
  );
  const lab = await connectTargets(args, deps, credentials, secrets, log, me);
  const probed = await probeTargets(lab.targets, lab.writer, log, me);
  // Every object the runner writes is scrubbed of the password: the engine records error messages
  // (manifest.error) and raw pgbench output, and neither is ours to trust.
  const scrub = (text: string): string => redact(text, secrets);
  const s3Sink = new S3ResultSink(deps.s3, args.bucket, args.runId, scrub);
  const prev = await s3Sink.readManifest();
  if (prev) checkResumable(prev, args);
  const environment = await cloudEnvironment(args, deps, lab, probed);
  const steps = await planCloudRun(
    args,
    deps,
    suite,
    s3Sink,
    lab.targets,
    probed.capacities,
    environment,
    log,
    me,
  );
  const stepById = new Map(steps.map((s) => [s.stepId, s]));
  const { executor, sink } = fleetPorts(args, deps, s3Sink, stepById, scrub, log);
  await waitForAgreedStart(args, deps, log, me);

  // Runner 0 watches the connections held on the (shared) database around each step.
  const direct = lab.targets.find((t) => !(t.descriptor?.capabilities.pooled ?? true));
  const held =
    args.runnerIndex === 0 && direct && deps.serverConnections
      ? deps.serverConnections(direct.connection(), (line) => log.warn(`${me}: ${line}`))
      : null;
  const result = await runSuite({
    runId: args.runId,
    suite,
    steps,
    targets: lab.targets,
    executor,
    pool: lab.pool,
    sink,
    sampler: withPoolerSampler(
      new RunnerCpuMetricsSampler(`runner-${args.runnerIndex}`),
      lab.poolers.sampler,
    ),
    clock: deps.clock,
    progress: progressTo(args, deps, log, me),
    ...(deps.signal ? { signal: deps.signal } : {}),
    mode: 'cloud',
    environment,
    settings: runSettings(args, suite.name, probed.maxConnections),
    metricsName: 'runner',
    ...(held ? { serverConnections: held } : {}),
    probes: {
      'session-state': cloudSessionProbeRunner({
        targets: lab.targets,
        runnerCount: args.runnerCount,
        proxyNames: Object.fromEntries(args.proxies.map((p) => [p.name, p.dbProxyName])),
        narrow: async (target) => (await lab.poolers.control?.narrowToOne(target)) ?? null,
        reset: (target) => lab.pool.reset(target),
        pinPeriodMs: args.pinPeriodMs,
      }),
      disruption: disruptionRunner(args, deps, lab.targets),
    },
  }).finally(() => held?.close());
  const collector = await collectAfterRun(args, deps, result.manifest, log, me);
  return { result, collector, allHeld: runnerAllHeld(args, result) };
}

/**
 * The suite this run executes: the lab's own scenarios as the request carries them (`lab`), else
 * the catalog's (a test may give its own catalog).
 */
export function runnerSuite(
  args: Pick<RunnerArgs, 'suite' | 'scenarios'> & Partial<Pick<RunnerArgs, 'testSuites' | 'disruptionLoad'>>,
  deps: Pick<RunnerDeps, 'suiteCatalog'>,
): Suite {
  // The lab's background load, on each disruption scenario that names none (lib/config/scenarios.ts).
  const load = args.disruptionLoad ?? null;
  if (args.suite === LAB_SUITE_NAME) {
    if (!args.scenarios || args.scenarios.length === 0)
      throw new UsageError(`suite "${LAB_SUITE_NAME}": the run request carries no scenarios`);
    return withDisruptionLoad(labSuite({ scenarios: args.scenarios }), load);
  }
  return withDisruptionLoad(
    (deps.suiteCatalog ?? (args.testSuites ? catalogOrTestSuite : getSuite))(args.suite),
    load,
  );
}

/**
 * Phase 6: this runner's answer. A failed run throws (its finished steps are in the bucket). The
 * engine judged every step and comparison on what the sink stored — with several runners, runner
 * 0's records merged from every part — and wrote the manifest once with them. Other runners only
 * say whether they completed their parts.
 */
export function runnerAllHeld(
  args: Pick<RunnerArgs, 'runId' | 'bucket' | 'runnerCount' | 'runnerIndex'>,
  result: Pick<RunSuiteResult, 'manifest' | 'allHeld'>,
): boolean {
  if (result.manifest.status === 'failed') {
    throw new InfrastructureError(
      `run ${args.runId} failed: ${result.manifest.error ?? 'unknown error'} (finished steps are in s3://${args.bucket}/runs/${args.runId}/)`,
    );
  }
  return args.runnerCount > 1 && args.runnerIndex > 0
    ? result.manifest.status === 'completed'
    : result.allHeld;
}

/** With `--test-suites on` (tests only): a test-only suite of that name, else the catalog's. */
function catalogOrTestSuite(name: string): Suite {
  return getTestSuite(name) ?? getSuite(name);
}
