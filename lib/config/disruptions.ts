/**
 * The cloud disruptions a lab's suites will inject (pure): each scenario of the lab's `suites` whose
 * probe is a disruption the lab's database can undergo. The lab stack grants the runner role exactly
 * the actions those need, on the lab's own ARNs (lib/constructs/runner-asset.ts); `proxylab run`
 * names them before it starts.
 */
import { UsageError } from '../core/errors';
import { getSuite, SUITE_NAMES } from '../suite/catalog';
import type { DisruptionAction } from '../suite/disruption';
import type { DatabaseEngine } from '../suite/engines';

/** The disruption actions that call AWS, and the engine each applies to. */
export const CLOUD_DISRUPTION_ENGINES: Readonly<Partial<Record<DisruptionAction, DatabaseEngine>>> = {
  'aurora-failover': 'aurora-postgresql',
  'rds-reboot-failover': 'postgres',
  'rds-reboot': 'postgres',
};

/** The AWS disruptions of `suites` that apply to a database of `engine`, each once, in catalog order. */
export function cloudDisruptionsOf(suites: readonly string[], engine: DatabaseEngine): DisruptionAction[] {
  const out: DisruptionAction[] = [];
  for (const name of suites) {
    if (!SUITE_NAMES.includes(name)) continue;
    for (const s of getSuite(name).scenarios) {
      const action = s.probe?.kind === 'disruption' ? s.probe.disruption.action : undefined;
      if (action !== undefined && CLOUD_DISRUPTION_ENGINES[action] === engine && !out.includes(action))
        out.push(action);
    }
  }
  return out;
}

/** What each disruption does to the lab, in words (`proxylab run` prints it before it starts). */
export const DISRUPTION_WORDS: Readonly<Record<DisruptionAction, string>> = {
  'postgres-restart': 'restart PostgreSQL',
  'backend-terminate': 'terminate every client backend',
  'pooler-pause': 'PAUSE the pooler, restart PostgreSQL, RESUME',
  'pooler-restart': 'restart the pooler process by process',
  'primary-failover': 'stop the primary and promote a standby',
  'aurora-failover': 'fail the Aurora cluster over to a reader (FailoverDBCluster)',
  'rds-reboot-failover': 'reboot the RDS instance with a Multi-AZ failover (RebootDBInstance ForceFailover)',
  'rds-reboot': 'reboot the RDS instance in place (RebootDBInstance)',
};

/** The lab's database by its identifiers, as the stack outputs name it. */
export interface DisruptedDatabase {
  readonly engine: DatabaseEngine;
  /** Aurora's cluster; null for RDS for PostgreSQL. */
  readonly clusterId: string | null;
  /** Writer first. */
  readonly instanceIds: readonly string[];
}

/**
 * What a run of `suite` will disrupt on this lab, in words, one line per disruption scenario (empty:
 * the suite disrupts nothing). `proxylab run` prints it before it starts anything.
 */
export function disruptionNotice(suite: string, db: DisruptedDatabase): string[] {
  const lines: string[] = [];
  for (const s of getSuite(suite).scenarios) {
    const p = s.probe;
    if (p?.kind !== 'disruption') continue;
    const action = p.disruption.action;
    const engine = CLOUD_DISRUPTION_ENGINES[action];
    const times = `${s.repetitions} time(s), each after a ${p.warmupSec} s warm-up, probed for ${p.recoverySec} s`;
    if (engine === undefined)
      lines.push(`  ${s.name}: ${DISRUPTION_WORDS[action]} — not injected on a lab (recorded not available)`);
    else if (engine !== db.engine)
      lines.push(`  ${s.name}: not for this lab's engine (recorded not available)`);
    else {
      const on =
        action === 'aurora-failover'
          ? `cluster ${db.clusterId ?? '?'} (instances ${db.instanceIds.join(', ')})`
          : `instance ${db.instanceIds[0] ?? '?'}`;
      lines.push(`  ${s.name}: ${DISRUPTION_WORDS[action]} on ${on}, ${times}`);
    }
  }
  return lines;
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
