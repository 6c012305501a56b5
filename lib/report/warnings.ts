/**
 * The report's warnings: what about a run limits what its figures say (partial, saturated, stand-ins,
 * loopback, failed metrics), in words (./shape.ts).
 */
import { uniqueInOrder } from './cells';
import type { LoadedRun } from './load';
import { productEntry } from '../products';
import { PGBOUNCER_MAX_PREPARED_STATEMENTS_ON, PGBOUNCER_PREPARED_SINCE } from '../products/pgbouncer/entry';
import { targetProduct, type TargetDescriptor } from '../suite/targets';

// ---------------------------------------------------------------- warnings

export type WarningId =
  | 'partial-run'
  | 'infrastructure-error'
  | 'unreadable-files'
  | 'load-generator-saturated'
  | 'pooler-saturated'
  | 'fewer-transactions'
  | 'pgbouncer-stand-in'
  /** A local run: load generator, pooler and server on one machine, over loopback. */
  | 'local-loopback'
  /** A local pooler of another product (PgDoorman) stands in for a pooled target. */
  | 'pooler-stand-in'
  | 'no-plan'
  | 'metrics-failed'
  /** The chart library could not draw some data as given (lib/report/charts.ts renderSvg). */
  | 'chart-data';

export interface ReportWarning {
  readonly id: WarningId;
  readonly message: string;
  /** The steps it applies to (empty when it applies to the run). */
  readonly stepIds: readonly string[];
}

export function isPartial(run: LoadedRun): boolean {
  // A file that could not be read leaves the report partial too (docs/report.md, "partially bad runs").
  return run.manifest.status !== 'completed' || run.missingStepIds.length > 0 || run.problems.length > 0;
}

export function reportWarnings(run: LoadedRun): ReportWarning[] {
  const out: ReportWarning[] = [];
  const { manifest } = run;
  if (isPartial(run)) {
    const why =
      manifest.status === 'running'
        ? 'the run has not recorded its end (still running, or killed before it could)'
        : manifest.status !== 'completed'
          ? `the run ${manifest.status === 'failed' ? 'failed' : 'was interrupted'}${manifest.error ? ` (${manifest.error})` : ''}`
          : run.missingStepIds.length > 0
            ? 'the run completed without some planned steps'
            : `${run.problems.length} file(s) of the run could not be read (listed below)`;
    out.push({
      id: 'partial-run',
      message: `Partial run: ${why}; ${run.steps.length} of ${manifest.stepIds.length} planned steps have results. Missing cells are not failures — they were not measured.`,
      stepIds: run.missingStepIds,
    });
  }
  if (run.unmeasured.length > 0) {
    const causes = run.unmeasured.map((r) => `${r.stepId} (${r.note ?? 'cause unknown'})`);
    out.push({
      id: 'infrastructure-error',
      message: `${run.unmeasured.length} step(s) were not measured because the infrastructure failed during them: ${causes.join('; ')}. They are not findings either way; resume the run with the same run id to measure them.`,
      stepIds: run.unmeasured.map((r) => r.stepId),
    });
  }
  if (run.problems.length > 0) {
    out.push({
      id: 'unreadable-files',
      message: `PARTIAL report: ${run.problems.length} file(s) of the run could not be read and are left out: ${run.problems.join('; ')}`,
      stepIds: [],
    });
  }
  const saturated = run.steps.filter((s) => s.loadGeneratorSaturated);
  if (saturated.length > 0) {
    const reasons = uniqueInOrder(saturated.map((s) => s.saturationReason ?? 'reason not recorded'));
    out.push({
      id: 'load-generator-saturated',
      message: `Load generator saturated in ${saturated.length} step(s): their tps measures the client, not the target (${reasons.slice(0, 3).join('; ')}).`,
      stepIds: saturated.map((s) => s.stepId),
    });
  }
  const poolerBound = run.steps.filter((s) => s.poolerSaturated === true);
  if (poolerBound.length > 0) {
    out.push({
      id: 'pooler-saturated',
      message: `Pooler CPU-bound in ${poolerBound.length} step(s): a pooler process averaged ≥ 90 % of the cores it can use (one for a PgBouncer process, its worker threads for PgDoorman), so their tps measures the pooler, not the database (see process_cpu_percent).`,
      stepIds: poolerBound.map((s) => s.stepId),
    });
  }
  const short = run.steps.filter((s) => {
    const r = s.result;
    return (
      r !== null &&
      r.transactionsExpected !== null &&
      r.transactionsProcessed !== null &&
      r.transactionsProcessed < r.transactionsExpected
    );
  });
  if (short.length > 0) {
    out.push({
      id: 'fewer-transactions',
      message: `${short.length} step(s) processed fewer transactions than expected (clients aborted or were refused): their tps covers only the clients that finished.`,
      stepIds: short.map((s) => s.stepId),
    });
  }
  if (run.plan === null) {
    out.push({
      id: 'no-plan',
      message:
        'This run has no plan.json (an older release): its targets are labelled from the current catalog, their versions and prepared-statement support unknown.',
      stepIds: [],
    });
  }
  // a pooler deployed in the cloud lab (dedicated host, on the runners) is itself a target, no stand-in
  const standIns = run.steps.filter((s) => {
    const d = run.descriptorOf(s);
    return d.capabilities.pooled && d.placement === 'local';
  });
  // a product whose prepared-statement support is switched per step (PgBouncer) gets the note that
  // explains its sweep; every other stand-in the general one
  const switches = (s: (typeof standIns)[number]): boolean =>
    (productEntry(targetProduct(s.target).id).prepared?.onValue ?? null) !== null;
  const bouncers = uniqueInOrder(standIns.filter(switches).map((s) => s.target.name));
  if (bouncers.length > 0) {
    out.push({ id: 'pgbouncer-stand-in', message: standInNote(run, bouncers), stepIds: [] });
  }
  const others = standIns.filter((s) => !switches(s));
  for (const name of uniqueInOrder(others.map((s) => s.target.name))) {
    const step = others.find((s) => s.target.name === name);
    if (step)
      out.push({ id: 'pooler-stand-in', message: otherStandInNote(run.descriptorOf(step)), stepIds: [] });
  }
  if (manifest.mode === 'local' && run.steps.some((s) => run.descriptorOf(s).capabilities.pooled)) {
    out.push({ id: 'local-loopback', message: LOCAL_LOOPBACK_NOTE, stepIds: [] });
  }
  const failedSeries = run.metrics.flatMap((m) =>
    m.file.series
      .filter((s) => s.status === 'error')
      .map((s) => `${m.name}: ${s.name} (${s.reason ?? 'no reason recorded'})`),
  );
  if (failedSeries.length > 0) {
    out.push({
      id: 'metrics-failed',
      message: `${failedSeries.length} metric series could not be collected: ${failedSeries.slice(0, 5).join('; ')}${failedSeries.length > 5 ? '; …' : ''}`,
      stepIds: [],
    });
  }
  return out;
}

/**
 * A local pooler of another product than PgBouncer (PgDoorman), from its descriptor in the plan:
 * its version, and whether its transaction pool carried prepared statements.
 */
function otherStandInNote(d: TargetDescriptor): string {
  const label = targetProduct(d).label;
  const mps = d.settings.maxPreparedStatements;
  const threads = d.settings.workerThreads;
  const carried =
    d.poolMode !== 'transaction'
      ? 'a session pool: each client keeps its server connection, prepared statements included'
      : d.capabilities.carriesPreparedStatements === 'yes'
        ? `its transaction pool carries prepared statements across server connections (cache of ${mps ?? '?'})`
        : 'its transaction pool does not carry prepared statements across server connections (its cache is off)';
  return `A local ${label}${d.version ? ` ${d.version}` : ''}${threads ? ` with ${threads} worker threads` : ''} (${d.name}) shares the machine with PostgreSQL, pgbench and the other poolers: ${carried}. Read its figures beside the other local poolers', not as what it does on a host of its own.`;
}

/**
 * What a local run's pooled vs direct figures mean (issue 25 item 8): measured on 2 cores, pooled
 * tps was 0.42 × direct — the hop, not the pooler's worth in a lab.
 */
export const LOCAL_LOOPBACK_NOTE =
  'One machine, loopback: pgbench, PgBouncer and PostgreSQL share these CPUs and talk over 127.0.0.1. ' +
  'A pooled step adds a process hop whose CPU (PgBouncer, and pgbench waiting on it) is taken from the same cores ' +
  'the server and the load generator need, with no network round trip for the pool to save — so pooled tps ' +
  'below direct here (about 0.4 × on 2 cores) is the cost of that hop on a shared machine, not what a pooler on ' +
  'its own host in front of a remote database does. What carries over: refusals above max_connections, error ' +
  'classes (prepared statements through a transaction pool), queueing instead of failing, and per-transaction ' +
  'connect (-C) ratios; compare pooled with pooled here, and measure throughput on a lab.';

/**
 * What the PgBouncer stand-in was, from the run's environment and plan: its version and whether
 * (and how) it carried prepared statements through the transaction pool.
 */
function standInNote(run: LoadedRun, names: readonly string[]): string {
  const env = run.manifest.environment;
  // the plan's descriptor says which PgBouncer it was (a run may have PgDoorman's version in env too)
  // (the environment names the first local pooler's, which may be another product's); a step of a
  // prepared-statement sweep runs with the cell's setting, not the one at start
  const ownSteps = run.plan === null ? [] : run.steps.filter((s) => names.includes(s.target.name));
  const planned = ownSteps.map((s) => run.descriptorOf(s))[0];
  const atStart = ownSteps.find((s) => (s.params.preparedStatements ?? null) === null);
  const version = planned?.version ?? env.poolerVersion;
  const mps = atStart
    ? run.descriptorOf(atStart).settings.maxPreparedStatements
    : (env.maxPreparedStatements ?? null);
  const swept = run.steps.some((s) => (s.params.preparedStatements ?? null) !== null);
  // `proxylab local --lab FILE` records the lab: its PgBouncer pools are what the local one stands in for.
  const lab = typeof run.manifest.settings.lab === 'string' ? run.manifest.settings.lab : null;
  const head =
    lab !== null
      ? `A local PgBouncer${version ? ` ${version}` : ''} stands in for lab ${lab}'s PgBouncer pools (${names.join(', ')}), whose release, host and pool size differ`
      : `A local PgBouncer${version ? ` ${version}` : ''} stands in for RDS Proxy (${names.join(', ')})`;
  let prepared: string;
  if (mps === null)
    prepared =
      env.maxPreparedStatements === undefined && run.plan === null
        ? 'its prepared-statement support was not recorded (a run of an older release)'
        : `it has no max_prepared_statements (needs PgBouncer ≥ ${PGBOUNCER_PREPARED_SINCE}), so its transaction pool does not carry prepared statements across server connections${swept ? '; the max_prepared_statements-on cells are reported as not available' : ''}`;
  else
    prepared = `max_prepared_statements ${mps} at start${swept ? `, set to 0 and to ${PGBOUNCER_MAX_PREPARED_STATEMENTS_ON} per step where a cell says so` : ''}: with it above 0 its transaction pool carries prepared statements across server connections, with 0 it does not`;
  const tail =
    lab !== null
      ? `the lab's RDS Proxies have no local counterpart and were not measured here`
      : `RDS Proxy's behaviour with named prepared statements is measured, not predicted; read PgBouncer's results as the local analogue, not as RDS Proxy's`;
  return `${head}: ${prepared}. ${tail[0]?.toUpperCase() ?? ''}${tail.slice(1)}.`;
}
