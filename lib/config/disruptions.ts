/**
 * The cloud disruptions a lab's suites will inject (pure): each scenario of the lab's `suites` whose
 * probe is a disruption the lab's database can undergo. The lab stack grants the runner role exactly
 * the actions those need, on the lab's own ARNs (lib/constructs/runner-asset.ts); `proxylab run`
 * names them before it starts.
 */
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
      const action = s.probe?.disruption.action;
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
