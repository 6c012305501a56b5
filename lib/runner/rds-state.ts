/**
 * What the cloud disruptions read of the lab's database while they poll it: the Aurora cluster
 * (DescribeDBClusters: status, writer, readers, engine version) and one instance by its
 * DBInstanceIdentifier (DescribeDBInstances: status, zone, engine version). Each call names the
 * lab's own resource, the only ARNs the runner role is granted (lib/constructs/runner-asset.ts).
 */
import { DescribeDBClustersCommand, DescribeDBInstancesCommand, type RDSClient } from '@aws-sdk/client-rds';

export interface ClusterState {
  readonly status: string | null;
  readonly writer: string | null;
  readonly readers: string[];
  /** DBCluster.EngineVersion (botocore rds model: "Indicates the database engine version"). */
  readonly version: string | null;
}

export async function clusterState(rds: RDSClient, clusterId: string): Promise<ClusterState> {
  const res = await rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: clusterId }));
  const c = res.DBClusters?.[0];
  const members = c?.DBClusterMembers ?? [];
  return {
    status: c?.Status ?? null,
    writer: members.find((m) => m.IsClusterWriter === true)?.DBInstanceIdentifier ?? null,
    readers: members
      .filter((m) => m.IsClusterWriter !== true && m.DBInstanceIdentifier)
      .map((m) => m.DBInstanceIdentifier as string),
    version: c?.EngineVersion ?? null,
  };
}

export interface InstanceState {
  readonly status: string | null;
  readonly zone: string | null;
  /** DBInstance.EngineVersion. */
  readonly version: string | null;
}

export async function instanceState(rds: RDSClient, id: string): Promise<InstanceState> {
  const res = await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }));
  const i = res.DBInstances?.[0];
  return {
    status: i?.DBInstanceStatus ?? null,
    zone: i?.AvailabilityZone ?? null,
    version: i?.EngineVersion ?? null,
  };
}
