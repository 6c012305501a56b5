/**
 * `proxylab destroy`'s first step for a lab whose suites switch its database over with Blue/Green
 * (lib/suite/disruption-actions.ts `replacesDatabase`): whatever a run left — a deployment still
 * there (a teardown that failed or never ran), its green copy, the old blue renamed `-old1` — is
 * outside CloudFormation and stays billable, so it is deleted before the stack
 * (lib/aws/blue-green-cleanup.ts). The lab's database is named by the stack's outputs
 * (ClusterIdentifier, DbInstanceIds); a stack that is not there has nothing left to look for.
 */
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { RDSClient } from '@aws-sdk/client-rds';
import { cleanUpBlueGreen } from '../aws/blue-green-cleanup';
import type { LabConfig } from '../config/types';
import { describeLabOutputs, stackNameFor } from './outputs';

export { labReplacesDatabase } from '../config/disruptions';

export interface BlueGreenDestroyDeps {
  readonly rds: RDSClient;
  readonly cloudformation: CloudFormationClient;
  readonly now?: () => Date;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Between two reads of an old instance being deleted. @default 30_000 */
  readonly pollMs?: number;
}

/**
 * Deletes the lab's Blue/Green leftovers; returns what could not be deleted, in words (empty: none
 * left). Lines of what it does go to `log`.
 */
export async function destroyBlueGreenLeftovers(
  lab: LabConfig,
  deps: BlueGreenDestroyDeps,
  log: (line: string) => void,
): Promise<string[]> {
  const outputs = await describeLabOutputs(deps.cloudformation, stackNameFor(lab.name)).catch(
    (e: Error) => e,
  );
  if (outputs instanceof Error) {
    log(`Blue/Green leftovers not looked for: ${outputs.message}`);
    return /does not exist/.test(outputs.message) ? [] : [outputs.message];
  }
  const db = {
    engine: outputs.databaseEngine,
    clusterId: outputs.databaseEngine === 'aurora-postgresql' ? outputs.clusterIdentifier : null,
    instanceIds: outputs.dbInstanceIds,
  };
  return cleanUpBlueGreen(
    {
      rds: deps.rds,
      now: deps.now ?? (() => new Date()),
      sleep: deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      ...(deps.pollMs !== undefined ? { blueGreenPollMs: deps.pollMs } : {}),
    },
    db,
    lab.name,
    log,
  );
}
