/**
 * The cloud disruptions a lab's suites will inject (pure): each scenario of the lab's `suites` whose
 * probe is a disruption the lab's database can undergo. The lab stack grants the runner role exactly
 * the actions those need, on the lab's own ARNs (lib/constructs/runner-asset.ts); `proxylab run`
 * names them before it starts. Why a run will NOT inject one (`cloudDisruptionUnavailable`) is
 * decided here once: the runner records it, and the plan shows it before the run.
 */
import { UsageError } from '../core/errors';
import { getSuite, SUITE_NAMES, type Scenario, type Suite } from '../suite/catalog';
import { DISRUPTION_ACTIONS, type DisruptionAction } from '../suite/disruption';
import {
  disruptionAction,
  disruptionGrants,
  OLD_BLUE_SUFFIX,
  type DisruptionGrant,
} from '../suite/disruption-actions';

export { OLD_BLUE_SUFFIX };
import { loadLabel } from '../suite/disruption-load';
import { DATABASE_ENGINE_NAMES, type DatabaseEngine } from '../suite/engines';
import { dbInstanceCount } from './database';
import { nextKnownMinor } from './minor-versions';
import type { DatabaseConfig } from './types';
import type { PoolerEndpoint } from '../poolers/endpoint';
import { productEntry } from '../products';
import { SELF_HOSTED_POOLERS } from '../products/kinds';

/** The disruption actions that call AWS, and the engines each applies to (the actions' records). */
export const CLOUD_DISRUPTION_ENGINES: Readonly<
  Partial<Record<DisruptionAction, readonly DatabaseEngine[]>>
> = Object.fromEntries(
  DISRUPTION_ACTIONS.flatMap((a) => {
    const engines = disruptionAction(a).engines;
    return engines.length === 0 ? [] : [[a, engines]];
  }),
);

/**
 * The IAM statements the runner role needs for the cloud disruptions `actions` (names as the stack
 * receives them) on a lab of `engine`, each once: the records' grants (lib/suite/disruption-actions.ts).
 */
export function runnerDisruptionGrants(
  actions: readonly string[],
  engine?: DatabaseEngine,
): DisruptionGrant[] {
  return disruptionGrants(
    DISRUPTION_ACTIONS.filter((a) => actions.includes(a)),
    engine,
  );
}

/**
 * The Aurora cluster parameters the cloud disruptions of `suites` need (their records'
 * `auroraClusterParameters`, a Blue/Green switchover's rds.logical_replication): what the lab's
 * database construct puts in its cluster parameter group. Empty: none.
 */
export function auroraClusterParametersOf(suites: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of cloudDisruptionsOf(suites, 'aurora-postgresql'))
    Object.assign(out, disruptionAction(a).auroraClusterParameters ?? {});
  return out;
}

/** The lab's suites replace its database (a Blue/Green switchover): destroy looks for leftovers first. */
export function labReplacesDatabase(lab: {
  readonly suites: readonly string[];
  readonly database: { readonly engine: DatabaseEngine };
}): boolean {
  return cloudDisruptionsOf(lab.suites, lab.database.engine).some(
    (a) => disruptionAction(a).replacesDatabase === true,
  );
}

/** The AWS disruptions of `suites` that apply to a database of `engine`, each once, in catalog order. */
export function cloudDisruptionsOf(suites: readonly string[], engine: DatabaseEngine): DisruptionAction[] {
  const out: DisruptionAction[] = [];
  for (const name of suites) {
    if (!SUITE_NAMES.includes(name)) continue;
    for (const s of getSuite(name).scenarios) {
      const action = s.probe?.kind === 'disruption' ? s.probe.disruption.action : undefined;
      if (
        action !== undefined &&
        CLOUD_DISRUPTION_ENGINES[action]?.includes(engine) === true &&
        !out.includes(action)
      )
        out.push(action);
    }
  }
  return out;
}

/** What each disruption does to the lab, in words (`proxylab run` prints it before it starts). */
export const DISRUPTION_WORDS: Readonly<Record<DisruptionAction, string>> = Object.fromEntries(
  DISRUPTION_ACTIONS.map((a) => [a, disruptionAction(a).does]),
) as Record<DisruptionAction, string>;

/** The lab's database by its identifiers, as the stack outputs name it. */
export interface DisruptedDatabase {
  readonly engine: DatabaseEngine;
  /** Aurora's cluster; null for RDS for PostgreSQL. */
  readonly clusterId: string | null;
  /** Writer first. */
  readonly instanceIds: readonly string[];
  /** The engine version the lab file asks for (the plan's "from" of a minor upgrade); absent: not known. */
  readonly engineVersion?: string;
}

/**
 * The lab's database as its file describes it, for what is decided before a deploy (the plan): the
 * engine and how many instances it has. The identifiers are the deployed stack's, so they are named
 * here by role (`writer`, `reader-1`), never printed as the lab's.
 */
export function labDatabaseShape(db: DatabaseConfig): DisruptedDatabase {
  const readers = Math.max(0, dbInstanceCount(db) - 1);
  return {
    engine: db.engine,
    clusterId: db.engine === 'aurora-postgresql' ? 'cluster' : null,
    instanceIds: ['writer', ...Array.from({ length: readers }, (_, i) => `reader-${i + 1}`)],
    engineVersion: db.engineVersion,
  };
}

/** What decides whether a cloud run can inject a disruption: the lab's database and the run's runners. */
export interface CloudDisruptionRun {
  /** The lab's database; null when the run request does not name it (written by an older CLI). */
  readonly database: DisruptedDatabase | null;
  readonly runnerCount: number;
  /** The lab's self-hosted poolers (`controlPort` absent: a host deployed before the control channel); absent: none. */
  readonly poolers?: readonly Pick<PoolerEndpoint, 'name' | 'controlPort'>[];
}

/** Why a lab's run cannot roll its pooler hosts (an `onPoolerHosts` action), or null. */
function poolerHostsUnavailable(action: DisruptionAction, o: CloudDisruptionRun): string | null {
  const poolers = o.poolers ?? [];
  if (poolers.length === 0)
    return `${action} restarts a self-hosted pooler, and this lab has none (poolers: add a ${SELF_HOSTED_POOLERS.map((p) => productEntry(p).label).join(' or ')} pooler to the lab file)`;
  const old = poolers.filter((p) => p.controlPort === undefined).map((p) => p.name);
  if (old.length === poolers.length)
    return `the pooler host(s) ${old.join(', ')} were deployed before the agent's control channel (PoolerEndpoints has no controlPort): deploy the lab again`;
  if (o.runnerCount > 1)
    return `a disruption is injected once, by one runner: this run has ${o.runnerCount} (use a lab with runners.count 1)`;
  return null;
}

/**
 * Why a cloud run cannot inject `action` into the lab, or null: the reason the runner records on
 * each step of the disruption (`not-available`, lib/runner/disruptions.ts), and the one `plan`,
 * `validate` and `run` show before anything starts (lib/cost/run-plan.ts, `disruptionNotice`).
 */
export function cloudDisruptionUnavailable(action: DisruptionAction, o: CloudDisruptionRun): string | null {
  const record = disruptionAction(action);
  const engines = record.engines;
  if (engines.length === 0 && record.onPoolerHosts === true) return poolerHostsUnavailable(action, o);
  if (engines.length === 0)
    return (
      record.notOnALab ??
      `${action} is a local disruption (proxylab local's throwaway stack), not one of a lab`
    );
  if (o.database === null)
    return 'the run request does not name the lab database (written by an older CLI): run it again with this one';
  if (!engines.includes(o.database.engine))
    return `${action} needs ${engines.map((e) => DATABASE_ENGINE_NAMES[e]).join(' or ')}; this lab runs ${DATABASE_ENGINE_NAMES[o.database.engine]}`;
  if (record.needsReader === true && (o.database.clusterId === null || o.database.instanceIds.length < 2))
    return 'the Aurora cluster has no reader to fail over to (aurora.readers must be ≥ 1)';
  if (o.runnerCount > 1)
    return `a disruption is injected once, by one runner: this run has ${o.runnerCount} (use a lab with runners.count 1)`;
  return null;
}

/**
 * What a run of `suite` will disrupt on this lab, in words, one line per disruption scenario (empty:
 * the suite disrupts nothing); a disruption the runners will not inject says why, in the words the
 * runner records. `proxylab run` prints it before it starts anything.
 */
export function disruptionNotice(
  suite: Pick<Suite, 'scenarios'>,
  db: DisruptedDatabase,
  runnerCount: number,
  poolers: CloudDisruptionRun['poolers'] = [],
): string[] {
  const lines: string[] = [];
  for (const s of suite.scenarios) {
    const p = s.probe;
    if (p?.kind !== 'disruption') continue;
    const action = p.disruption.action;
    const why = cloudDisruptionUnavailable(action, { database: db, runnerCount, poolers });
    if (why !== null) {
      lines.push(`  ${s.name}: ${DISRUPTION_WORDS[action]} — not injected: ${why} (recorded not available)`);
      continue;
    }
    const times = `${s.repetitions} time(s), each after a ${p.warmupSec} s warm-up, probed for ${p.recoverySec} s`;
    const record = disruptionAction(action);
    const onCluster =
      record.actsOn === 'cluster' || (record.actsOn === 'cluster-or-writer' && db.clusterId !== null);
    const on =
      record.onPoolerHosts === true
        ? `the pooler host(s) ${(poolers ?? []).map((x) => x.name).join(', ')}, process by process`
        : onCluster
          ? `cluster ${db.clusterId ?? '?'} (instances ${db.instanceIds.join(', ')})`
          : `instance ${db.instanceIds[0] ?? '?'}`;
    const change =
      record.changesVersion === true
        ? `; ${versionChange(db)}`
        : record.replacesDatabase === true
          ? `; ${REPLACED}`
          : '';
    const load = p.load !== undefined ? `, under a background load of ${loadLabel(p.load)} per target` : '';
    lines.push(`  ${s.name}: ${DISRUPTION_WORDS[action]} on ${on}, ${times}${load}${change}`);
  }
  return lines;
}

/**
 * What `scenario` leaves changed on the lab after the run, in words, or null (it changes nothing
 * that stays): a minor upgrade's from/to versions. `plan` prints it under the scenario.
 */
export function disruptionChange(scenario: Pick<Scenario, 'probe'>, db: DisruptedDatabase): string | null {
  const p = scenario.probe;
  if (p?.kind !== 'disruption') return null;
  const record = disruptionAction(p.disruption.action);
  if (record.replacesDatabase === true) return REPLACED;
  if (record.changesVersion !== true) return null;
  return versionChange(db);
}

/** What a Blue/Green switchover leaves: the green copy under the lab's identifiers (lib/runner/blue-green.ts). */
const REPLACED =
  "the lab's database is replaced by its green copy (same identifiers, endpoints and engine version; new instances, so a cold cache); the old blue is deleted after the group";

/**
 * The versions a minor upgrade goes from and to, as far as the kit knows before the run: the next
 * minor of the lab's version among the versions the kit accepts; the run takes the lowest
 * ValidUpgradeTarget that is not a major upgrade (DescribeDBEngineVersions, at T0).
 */
function versionChange(db: DisruptedDatabase): string {
  const from = db.engineVersion;
  if (from === undefined)
    return "from the lab's version to its next minor version; the lab stays on the new version";
  const to = nextKnownMinor(db.engine, from);
  return `from ${from} to ${to ?? 'a newer minor (none known to the kit)'} (the next minor the kit knows; the run takes the lowest minor target DescribeDBEngineVersions offers then); the lab stays on the new version`;
}

/**
 * A run of `suite` must inject only what the lab's runner role was granted when it was deployed
 * (the lab file's `suites`): a UsageError naming the field and what to do, before any AWS call.
 */
export function checkDisruptionGrants(
  suite: string,
  labSuites: readonly string[],
  engine: DatabaseEngine,
  labFile: string,
): void {
  const granted = cloudDisruptionsOf(labSuites, engine);
  const missing = cloudDisruptionsOf([suite], engine).filter((a) => !granted.includes(a));
  if (missing.length > 0)
    throw new UsageError(
      `suite ${suite} injects ${missing.join(', ')}, which the runners of this lab may not: the runner role gets a disruption's actions only when the lab file's "suites" lists a suite that injects it (${labFile}: suites ${JSON.stringify(labSuites)}). Add "${suite}" to suites, deploy again, then run`,
    );
}
