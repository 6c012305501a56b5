/**
 * The engine ports the cloud runner (./runner.ts) adds to its targets: the executor and sink (one
 * runner, or a fleet's barriers and merge), the progress lines, and the disruption probe.
 */
import { InfrastructureError } from '../core/errors';
import type { Clock, PgbenchExecutor, ResultSink, Target } from '../engine/ports';
import type { ProgressEvent } from '../engine/run-suite';
import type { PlannedStep } from '../suite/expand';
import type { StepRecord } from '../suite/types';
import { CPU_SATURATION_PERCENT, judgeStep } from '../suite/verdict';
import { CpuGuardExecutor } from './cpu';
import { FleetCoordinator, FleetExecutor, FleetSink } from './fleet-coordinator';
import type { RunnerArgs } from '../aws/runner-args';
import type { S3ResultSink } from '../aws/s3-sink';
import type { Logger } from '../aws/secrets';
import { disruptionProbeRunner, pgbenchSelectFloor, targetProbeEndpoint } from '../exec/disruption-probe';
import { pgConnector } from '../exec/pg-probe';
import type { ProbeRunner } from '../engine/ports';
import { cloudDisruptionWorld } from './disruptions';
import type { RunnerDeps } from './runner-deps';
import { poolerRollOf } from './runner-poolers';

/**
 * The executor and sink this runner measures through: with one runner, the S3 run store; in a
 * fleet, each step's barrier (FleetExecutor) and the leader's merge of every runner's part
 * (FleetSink, judged on the merged measurement).
 */
export function fleetPorts(
  args: RunnerArgs,
  deps: RunnerDeps,
  s3Sink: S3ResultSink,
  stepById: ReadonlyMap<string, PlannedStep>,
  scrub: (text: string) => string,
  log: Logger,
): { executor: PgbenchExecutor; sink: ResultSink } {
  const executor: PgbenchExecutor = new CpuGuardExecutor(deps.executor);
  if (args.runnerCount <= 1) return { executor, sink: s3Sink };
  const fleet = new FleetCoordinator({
    s3: deps.s3,
    bucket: args.bucket,
    runId: args.runId,
    runnerIndex: args.runnerIndex,
    runnerCount: args.runnerCount,
    attempt: args.startAt ?? 'default',
    clock: deps.clock,
    barrierTimeoutMs: args.barrierTimeoutSec * 1000,
    leadMs: args.fleetLeadMs,
    pollMs: deps.pollMs ?? args.fleetPollMs,
    log: (l) => log.info(l),
    scrub,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  return {
    executor: new FleetExecutor(executor, fleet),
    sink: new FleetSink(s3Sink, fleet, {
      judge: (record: StepRecord) => {
        const step = stepById.get(record.stepId);
        return step ? judgeStep(step, record.status, record.result) : record.verdict;
      },
      cpuSaturationPercent: CPU_SATURATION_PERCENT,
    }),
  };
}

function progressLine(ev: ProgressEvent, leader: boolean): string | null {
  switch (ev.type) {
    case 'run-start':
      return `run ${ev.runId}: ${ev.total} steps${ev.resumed ? `, resuming (${ev.alreadyDone} already done)` : ''}`;
    case 'init-data':
      return leader
        ? `loading pgbench data, scale ${ev.scale}, through ${ev.target}`
        : `pgbench data (scale ${ev.scale}) is loaded by runner 0`;
    case 'step-skip':
      return `[${ev.index}/${ev.total}] ${ev.step.stepId}: already done, skipped`;
    case 'step-start':
      return `[${ev.index}/${ev.total}] ${ev.step.stepId}: start${ev.note ? ` (${ev.note})` : ''}${ev.etaSec !== null ? `, ETA ${ev.etaSec} s` : ''}`;
    case 'step-end': {
      const r = ev.record.result;
      const what = ev.record.probe ? ev.record.verdict.observed : `tps ${r?.tps ?? 'unknown'}`;
      return `[${ev.index}/${ev.total}] ${ev.step.stepId}: ${ev.record.status}, ${what}, verdict ${ev.record.verdict.held === null ? '-' : ev.record.verdict.held ? 'held' : 'BROKEN'}`;
    }
    case 'probe-log':
      return `${ev.step.probe?.group ?? ev.step.stepId}: ${ev.line}`;
    case 'scenario-end':
      return null;
    case 'run-end':
      return `run ended: ${ev.status}${ev.error ? ` — ${ev.error}` : ''} after ${Math.round(ev.elapsedSec)} s`;
  }
}

/** The engine's progress as this runner's log lines, then to the entry's own listener. */
export function progressTo(
  args: RunnerArgs,
  deps: RunnerDeps,
  log: Logger,
  me: string,
): (ev: ProgressEvent) => void {
  return (ev) => {
    const line = progressLine(ev, args.runnerIndex === 0);
    if (line) log.info(`${me}: ${line}`);
    deps.onProgress?.(ev);
  };
}

/**
 * The disruption probe of a cloud run (lib/runner/disruptions.ts): probe clients on every target,
 * the disruption on the lab's own database (the request's databaseResources), its events on the
 * run's clock, the ledger on the writer endpoint.
 */
export function disruptionRunner(
  args: RunnerArgs,
  deps: RunnerDeps,
  targets: readonly Target[],
): ProbeRunner<'disruption'> {
  const direct = targets.find((t) => t.descriptor !== undefined && !t.descriptor.capabilities.pooled);
  const ledger = direct ?? targets[0];
  if (ledger === undefined) throw new InfrastructureError('the run has no target to keep the ledger on');
  return disruptionProbeRunner({
    connector: pgConnector,
    // a scenario's background load runs through the runner's pgbench, as its steps do
    pgbench: deps.executor,
    world: cloudDisruptionWorld({
      rds: deps.rds,
      database: args.databaseResources ?? null,
      proxyNames: args.proxies.map((p) => p.dbProxyName),
      runnerCount: args.runnerCount,
      ledger,
      now: () => deps.clock.now(),
      sleep: (ms, signal) => sleepUnless(deps.clock, ms, signal),
      ...(deps.pollMs !== undefined ? { pollMs: deps.pollMs } : {}),
      ...(deps.eventReadDelayMs !== undefined ? { eventReadDelayMs: deps.eventReadDelayMs } : {}),
      pgbenchFloor: (t) => pgbenchSelectFloor(deps.executor, t),
      // before a Blue/Green deployment copies the database (lib/runner/disruptions.ts ensureLedger)
      ensureLedger: async () => {
        const c = await pgConnector(targetProbeEndpoint(ledger), 10_000);
        try {
          await c.ensureLedger(10_000);
        } finally {
          await c.close();
        }
      },
      ...poolerRollOf(args, deps),
    }),
  });
}

/** The clock's sleep, cut short when `signal` aborts. */
function sleepUnless(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return clock.sleep(ms);
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void clock.sleep(ms).then(done);
  });
}
