/**
 * `proxylab doctor` on an Aurora lab whose suites switch over with Blue/Green: the cluster parameter
 * group's rds.logical_replication (set by the lab's database construct) is static, so it applies
 * only once each instance has rebooted with it — at the cluster's creation, or after a reboot when
 * the suite was added to a deployed lab. Blue/Green "requires the writer instance to be in sync with
 * the DB cluster parameter group, otherwise creation fails" (Aurora User Guide, "Creating a
 * blue/green deployment", preparing an Aurora PostgreSQL cluster). Each member's
 * DBClusterParameterGroupStatus (DescribeDBClusters, DBClusterMember) says so.
 */
import { DescribeDBClustersCommand, type RDSClient } from '@aws-sdk/client-rds';
import { bad, message, ok, type Check } from './doctor-check';

const TITLE = 'cluster parameter group in sync (Blue/Green: rds.logical_replication)';

export async function blueGreenParameterCheck(rds: RDSClient, clusterId: string): Promise<Check> {
  try {
    const c = (await rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: clusterId })))
      .DBClusters?.[0];
    const members = c?.DBClusterMembers ?? [];
    if (members.length === 0)
      return bad(TITLE, `cluster ${clusterId}: no member instances`, 'deploy the lab');
    const off = members.filter((m) => m.DBClusterParameterGroupStatus !== 'in-sync');
    return off.length === 0
      ? ok(TITLE, members.map((m) => m.DBInstanceIdentifier ?? '?').join(', '))
      : bad(
          TITLE,
          off
            .map((m) => `${m.DBInstanceIdentifier ?? '?'}: ${m.DBClusterParameterGroupStatus ?? 'unknown'}`)
            .join('; '),
          `${off
            .map(
              (m) => `aws rds reboot-db-instance --db-instance-identifier ${m.DBInstanceIdentifier ?? '?'}`,
            )
            .join(
              ' && ',
            )} (a static parameter applies at reboot; CreateBlueGreenDeployment fails until the writer is in sync)`,
        );
  } catch (err) {
    return bad(TITLE, message(err), 'the CLI needs rds:DescribeDBClusters on the lab cluster');
  }
}
