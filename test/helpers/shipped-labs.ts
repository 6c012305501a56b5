/**
 * The lab files proxylab ships (labs/NAME.json), named once for the tests that check each of them
 * (README cost rows, the $schema key). A test below asserts labs/ holds exactly these, so a new lab
 * file must be added here and is then checked everywhere.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const SHIPPED_LABS: readonly string[] = [
  'default',
  'e1-prepared-statements',
  'e2-client-sweep',
  'e3-connection-churn',
  'e4-pool-share',
  'e5-big-server',
  'e6-poolers',
  'existing-vpc',
  'own-workload',
  'failover-aurora',
  'failover-rds',
  'pocket',
  'private',
];

/** NAME of every labs/NAME.json, sorted. */
export function labFileNames(root: string): string[] {
  return readdirSync(join(root, 'labs'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}
