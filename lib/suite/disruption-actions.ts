/**
 * One record per disruption action (pure data): its words, where it runs, which engine it applies
 * to, what it needs of the lab's database, the IAM grants the runner gets for it, and what it costs
 * the plan. Every table that used to say one of these things per action (the words `proxylab run`
 * prints, the summary's phrase, the engines, validate's needs, the runner role's grants, the cost of
 * a failover that moves the writer) reads its field here.
 *
 * A new action = one record here, its runner in its world (lib/local/disruptions.ts or
 * lib/runner/disruptions.ts), and the scenario that injects it (lib/suite/experiments/disruptions.ts);
 * how each product undergoes it is the product's entry's (lib/products/<product>/entry.ts
 * `disruptions`). Names are stored in plan.json and results: never rename one.
 */
import type { DatabaseEngine } from './engines';

/** What an action needs of the lab's database before a run injects it (validate refuses the lab otherwise). */
export interface DisruptionNeed {
  /** The lab file's database section. */
  readonly section: 'aurora' | 'postgres';
  readonly field: string;
  /** The field must be a number at least this, or equal this value. */
  readonly atLeast?: number;
  readonly equals?: boolean;
  /**
   * The field is the engine version (its default when absent) and the kit must know a newer minor
   * version of the same major for it (lib/config/engine-versions.ts, lib/config/rds-postgres.ts).
   */
  readonly newerMinor?: true;
  /** What the field must be and why, after "must be ". */
  readonly why: string;
}

/**
 * An IAM statement the runner role gets for the action, on the lab's own resources: its database
 * cluster, its instances, or `*` for an action that takes no resource (Service Authorization
 * Reference, Amazon RDS).
 */
export interface DisruptionGrant {
  readonly actions: readonly string[];
  readonly on: ReadonlyArray<'cluster' | 'instances' | '*' | AccountResources | OldBlueResources>;
  /** Granted only to a lab of this engine (an action done one way on Aurora, another on RDS). */
  readonly engine?: DatabaseEngine;
  /**
   * The statement holds only for the lab's own resources by their `proxylab:lab` tag: `request` —
   * the call must tag what it creates with it (aws:RequestTag); `resource` — the resource must carry
   * it (aws:ResourceTag). For resources whose names AWS generates (`account:` kinds).
   */
  readonly labTag?: 'request' | 'resource';
}

/**
 * Every resource of one RDS resource type in the lab's account and region
 * (`arn:<partition>:rds:<region>:<account>:<type>:*`): for resources whose names AWS generates at
 * run time (a Blue/Green deployment's `bgd-…` identifier, its green copies), which "can't contain
 * partial resource name patterns such as my-db-prefix-*. Only wildcards (*) are supported" (RDS and
 * Aurora User Guides, "Authorizing access to … blue/green deployment operations"). Narrowed by
 * `labTag` where the action has the condition key.
 */
/**
 * The old blue database a Blue/Green switchover leaves, by the name AWS gives it — the lab's
 * identifier with `-old1` appended (User Guides, "Switching a blue/green deployment") — in the lab's
 * account and region (`arn:…:db:*-old1`, `arn:…:cluster:*-old1`): read while it is deleted, also
 * once it is gone (a resource that no longer exists carries no tag to match).
 */
export type OldBlueResources = 'old-blue:db' | 'old-blue:cluster';

/** The suffix AWS appends to the old blue resources' names at the first switchover. */
export const OLD_BLUE_SUFFIX = '-old1';

export type AccountResources =
  `account:${'deployment' | 'db' | 'cluster' | 'cluster-endpoint' | 'cluster-pg' | 'cluster-snapshot' | 'pg' | 'og' | 'subgrp'}`;

export interface DisruptionActionRecord {
  /** What it does to the lab, in words (`proxylab run` and `plan` print it). */
  readonly does: string;
  /** The same as a noun phrase, for the summary's "what a client lived through" line. */
  readonly phrase: string;
  /** `local`: on the throwaway stack of `proxylab local`; `cloud`: an RDS or Aurora API call on the lab. */
  readonly world: 'local' | 'cloud';
  /** The engines a cloud action applies to; empty for local ones. */
  readonly engines: readonly DatabaseEngine[];
  /** What it needs of the lab's database: each need whose section the lab has applies. */
  readonly needs: readonly DisruptionNeed[];
  readonly grants: readonly DisruptionGrant[];
  /** It moves the writer role to another instance (the cost estimate bills the load on both). */
  readonly movesWriter: boolean;
  /**
   * What a cloud action is called on: the Aurora cluster, the writer instance, or the cluster on
   * Aurora and the instance on RDS. null: a local action.
   */
  readonly actsOn: 'cluster' | 'writer' | 'cluster-or-writer' | null;
  /** It needs a reader instance to move the writer to (a run on a lab without one records why not). */
  readonly needsReader?: boolean;
  /** A local action a lab's run cannot inject yet, and why (otherwise: "a local disruption"). */
  readonly notOnALab?: string;
  /**
   * A local action a lab's run injects on its self-hosted pooler hosts, through each host's agent
   * (lib/runner/pooler-roll.ts), not through AWS: no grant, no database section it needs; the lab
   * must have a pooler (`poolers`) whose host has the agent's control channel.
   */
  readonly onPoolerHosts?: true;
  /**
   * It leaves the lab on another engine version (a minor upgrade): `plan` names the versions and
   * says the lab stays on the new one; each repetition needs a newer minor version again.
   */
  readonly changesVersion?: true;
  /**
   * It replaces the lab's database by a copy (a Blue/Green switchover): a second database runs, and
   * is billed, from before the group until the teardown deletes the old one; `plan` and `cost` say so.
   */
  readonly replacesDatabase?: true;
  /**
   * Parameters the lab's Aurora cluster parameter group must hold for it: the database construct
   * sets them when the lab's suites hold the action (lib/constructs/database.ts).
   */
  readonly auroraClusterParameters?: Readonly<Record<string, string>>;
  /**
   * How a needed lab-level list must look (a need outside the database section): the lab file's
   * field and at least this many entries, and why.
   */
  readonly needsList?: { readonly field: 'proxies'; readonly atLeast: number; readonly why: string };
}

// A failover or reboot polls its instances (DescribeDBInstances, named one by one: a call with a
// cluster filter is authorized on `db:*`) and reads the event log the run aligns on its clock
// (DescribeEvents, which takes no resource type).
const POLL: readonly DisruptionGrant[] = [
  { actions: ['rds:DescribeDBInstances'], on: ['instances'] },
  { actions: ['rds:DescribeEvents'], on: ['*'] },
];

const LOCAL = {
  world: 'local',
  engines: [],
  needs: [],
  grants: [],
  movesWriter: false,
  actsOn: null,
} as const;

export const DISRUPTION_ACTION_RECORDS = {
  // local, on the throwaway stack
  'postgres-restart': {
    ...LOCAL,
    does: 'restart PostgreSQL',
    phrase: 'a PostgreSQL restart',
  },
  'backend-terminate': {
    ...LOCAL,
    does: 'terminate every client backend',
    phrase: 'a kill of every server session',
  },
  'pooler-pause': {
    ...LOCAL,
    does: 'PAUSE the pooler, restart PostgreSQL, RESUME',
    phrase: 'PAUSE, restart, RESUME',
  },
  'pooler-restart': {
    ...LOCAL,
    does: 'restart the pooler process by process',
    phrase: 'a rolling restart of the pooler',
    onPoolerHosts: true,
  },
  'primary-failover': {
    ...LOCAL,
    does: 'stop the primary and promote a standby',
    phrase: 'a failover to the standby',
    movesWriter: true,
  },
  // cloud, on the lab's own resources
  'aurora-failover': {
    does: 'fail the Aurora cluster over to a reader (FailoverDBCluster)',
    phrase: 'an Aurora failover',
    world: 'cloud',
    engines: ['aurora-postgresql'],
    // FailoverDBCluster's TargetDBInstanceIdentifier names "the DB instance to promote to the primary
    // DB instance" (botocore rds service model): a cluster without a reader has none to promote.
    needs: [
      {
        section: 'aurora',
        field: 'readers',
        atLeast: 1,
        why: 'an integer ≥ 1: an Aurora failover (FailoverDBCluster) promotes a reader, and this lab has none',
      },
    ],
    // FailoverDBCluster on `cluster` (required) and `db` (the TargetDBInstanceIdentifier); the runner
    // waits for the cluster's new writer (DescribeDBClusters on `cluster`).
    grants: [
      { actions: ['rds:FailoverDBCluster'], on: ['cluster', 'instances'] },
      { actions: ['rds:DescribeDBClusters'], on: ['cluster'] },
      ...POLL,
    ],
    movesWriter: true,
    needsReader: true,
    actsOn: 'cluster',
  },
  'rds-reboot-failover': {
    does: 'reboot the RDS instance with a Multi-AZ failover (RebootDBInstance ForceFailover)',
    phrase: 'an RDS Multi-AZ failover',
    world: 'cloud',
    engines: ['postgres'],
    // RebootDBInstance ForceFailover: "You can't enable force failover if the instance isn't configured for Multi-AZ."
    needs: [
      {
        section: 'postgres',
        field: 'multiAz',
        equals: true,
        why: 'true: a reboot with failover (RebootDBInstance ForceFailover) needs a Multi-AZ standby, and this lab has none',
      },
    ],
    grants: [{ actions: ['rds:RebootDBInstance'], on: ['instances'] }, ...POLL],
    // the standby becomes the primary in place of the same instance: one instance is billed either way
    movesWriter: false,
    actsOn: 'writer',
  },
  'rds-reboot': {
    does: 'reboot the RDS instance in place (RebootDBInstance)',
    phrase: 'an RDS reboot',
    world: 'cloud',
    engines: ['postgres'],
    needs: [],
    grants: [{ actions: ['rds:RebootDBInstance'], on: ['instances'] }, ...POLL],
    movesWriter: false,
    actsOn: 'writer',
  },
  'minor-upgrade': {
    does: 'upgrade the database to the next minor engine version, applied immediately (ModifyDBCluster on Aurora, ModifyDBInstance on RDS)',
    phrase: 'a minor-version upgrade',
    // Locally (`proxylab local`) a stand-in named as such: a fast restart onto another installed minor
    // build of the stack's PostgreSQL major, else a plain fast restart (lib/local/disruptions.ts).
    world: 'cloud',
    engines: ['aurora-postgresql', 'postgres'],
    // The target is the lowest ValidUpgradeTarget with IsMajorVersionUpgrade false of the lab's
    // version (DescribeDBEngineVersions, read by the runner at T0); validate can only ask the kit's
    // own version lists, and refuses a version with no newer minor there.
    needs: [
      {
        section: 'aurora',
        field: 'engineVersion',
        newerMinor: true,
        why: 'a version with a newer minor version of the same major: a minor upgrade (ModifyDBCluster EngineVersion) needs one to go to',
      },
      {
        section: 'postgres',
        field: 'engineVersion',
        newerMinor: true,
        why: 'a version with a newer minor version of the same major: a minor upgrade (ModifyDBInstance EngineVersion) needs one to go to',
      },
    ],
    // Service Authorization Reference, Amazon RDS: ModifyDBCluster on `cluster` (required),
    // ModifyDBInstance on `db` (required), DescribeDBEngineVersions on no resource type (only `*`).
    // The runner reads the version and polls the writer (DescribeDBClusters / DescribeDBInstances).
    grants: [
      { actions: ['rds:ModifyDBCluster'], on: ['cluster'], engine: 'aurora-postgresql' },
      { actions: ['rds:DescribeDBClusters'], on: ['cluster'], engine: 'aurora-postgresql' },
      { actions: ['rds:ModifyDBInstance'], on: ['instances'], engine: 'postgres' },
      { actions: ['rds:DescribeDBEngineVersions'], on: ['*'] },
      ...POLL,
    ],
    movesWriter: false,
    actsOn: 'cluster-or-writer',
    changesVersion: true,
  },
  'blue-green-switchover': {
    does: "create a Blue/Green deployment of the lab's database before the group (CreateBlueGreenDeployment, same engine version), switch over at T0 (SwitchoverBlueGreenDeployment), then delete the deployment and the old blue database",
    phrase: 'a Blue/Green switchover',
    world: 'cloud',
    engines: ['aurora-postgresql', 'postgres'],
    // Aurora PostgreSQL needs rds.logical_replication in the cluster parameter group (Aurora User
    // Guide, "Creating a blue/green deployment", "Preparing an Aurora PostgreSQL DB cluster"): the
    // lab's database construct sets it when the lab's suites hold this action
    // (lib/constructs/database.ts). RDS for PostgreSQL on the same major version replicates
    // physically (RDS User Guide, "PostgreSQL replication methods for blue/green deployments"). Every
    // version the kit accepts (≥ 14.13 / 14.20) is one Blue/Green supports (≥ 14.9). What the lab
    // must have is the proxy the scenario measures through: "your blue instance must already be a
    // target of the proxy before you create the blue/green deployment" (RDS and Aurora User Guides,
    // "Using RDS Proxy with Blue/Green Deployments", Limitations) — the lab's proxies target its
    // database from the deploy on.
    needs: [],
    needsList: {
      field: 'proxies',
      atLeast: 1,
      why: 'a list of at least 1 RDS Proxy: the Blue/Green switchover is measured behind RDS Proxy (the figure no source publishes for PostgreSQL), and the blue database must be a proxy target before the deployment is created',
    },
    // Service Authorization Reference, Amazon RDS: CreateBlueGreenDeployment on `deployment`
    // (required) and the source `cluster` / `db`, condition key aws:RequestTag; Switchover- and
    // DeleteBlueGreenDeployment on `deployment` with aws:ResourceTag; DescribeBlueGreenDeployments on
    // `deployment`, no condition key. The deployment's identifier (`bgd-…`) exists only after the
    // call, so `deployment:*` narrowed by the lab's tag, which the runner puts on it (Tags).
    // What RDS does on the caller's behalf needs the caller's permission too (User Guides,
    // "Authorizing access to … blue/green deployment operations"): Aurora — create:
    // CreateDBCluster, CreateDBInstance, CreateDBClusterEndpoint; switch over: ModifyDBCluster,
    // PromoteReadReplicaDBCluster; delete: DeleteDBCluster, DeleteDBInstance,
    // DeleteDBClusterEndpoint; RDS — create: CreateDBInstanceReadReplica; switch over:
    // ModifyDBInstance, PromoteReadReplica; delete: DeleteDBInstance; both: AddTagsToResource. The
    // green resources' names are generated ("Only wildcards (*) are supported"): each on its
    // resource types' `*` ARNs in the lab's account and region, and what changes or deletes an
    // existing resource only where it carries the lab's tag (the old blue keeps the lab's tags).
    grants: [
      {
        actions: ['rds:CreateBlueGreenDeployment'],
        on: ['cluster', 'account:deployment'],
        engine: 'aurora-postgresql',
        labTag: 'request',
      },
      {
        actions: ['rds:CreateBlueGreenDeployment'],
        on: ['instances', 'account:deployment'],
        engine: 'postgres',
        labTag: 'request',
      },
      { actions: ['rds:AddTagsToResource'], on: ['account:deployment'], labTag: 'request' },
      { actions: ['rds:DescribeBlueGreenDeployments'], on: ['account:deployment'] },
      {
        actions: ['rds:SwitchoverBlueGreenDeployment', 'rds:DeleteBlueGreenDeployment'],
        on: ['account:deployment'],
        labTag: 'resource',
      },
      {
        actions: ['rds:CreateDBCluster', 'rds:CreateDBInstance', 'rds:CreateDBClusterEndpoint'],
        on: [
          'account:cluster',
          'account:db',
          'account:cluster-endpoint',
          'account:cluster-pg',
          'account:pg',
          'account:og',
          'account:subgrp',
        ],
        engine: 'aurora-postgresql',
      },
      {
        actions: ['rds:CreateDBInstanceReadReplica'],
        on: ['account:cluster', 'account:db', 'account:pg', 'account:og', 'account:subgrp'],
        engine: 'postgres',
      },
      { actions: ['rds:DescribeDBClusters'], on: ['old-blue:cluster'], engine: 'aurora-postgresql' },
      { actions: ['rds:DescribeDBInstances'], on: ['old-blue:db'] },
      {
        actions: ['rds:ModifyDBCluster', 'rds:PromoteReadReplicaDBCluster', 'rds:DeleteDBCluster'],
        on: ['account:cluster', 'account:cluster-snapshot'],
        engine: 'aurora-postgresql',
        labTag: 'resource',
      },
      {
        actions: ['rds:DeleteDBClusterEndpoint'],
        on: ['account:cluster-endpoint'],
        engine: 'aurora-postgresql',
        labTag: 'resource',
      },
      {
        actions: ['rds:ModifyDBInstance', 'rds:PromoteReadReplica', 'rds:DeleteDBInstance'],
        on: ['account:db'],
        labTag: 'resource',
      },
      ...POLL,
    ],
    movesWriter: false,
    actsOn: 'cluster-or-writer',
    replacesDatabase: true,
    // "Associate the cluster with a custom DB cluster parameter group with logical replication
    // (rds.logical_replication) turned on" (Aurora User Guide, "Creating a blue/green deployment",
    // preparing an Aurora PostgreSQL cluster). Static: applied at the cluster's creation; a lab that
    // adds the suite later needs its writer rebooted (`proxylab doctor` says so).
    auroraClusterParameters: { 'rds.logical_replication': '1' },
  },
} as const satisfies Record<string, DisruptionActionRecord>;

export type DisruptionActionName = keyof typeof DISRUPTION_ACTION_RECORDS;

/** The record of `action`. */
export function disruptionAction(action: DisruptionActionName): DisruptionActionRecord {
  return DISRUPTION_ACTION_RECORDS[action];
}

/**
 * The IAM statements the runner role needs for `actions`, each once, in the records' order: what
 * lib/constructs/runner-asset.ts grants on the lab's own ARNs. With `engine`: only the statements a
 * lab of that engine needs (a grant marked for the other engine is left out).
 */
export function disruptionGrants(
  actions: readonly DisruptionActionName[],
  engine?: DatabaseEngine,
): DisruptionGrant[] {
  const out: DisruptionGrant[] = [];
  const seen = new Set<string>();
  for (const a of actions)
    for (const g of DISRUPTION_ACTION_RECORDS[a].grants as readonly DisruptionGrant[]) {
      if (engine !== undefined && g.engine !== undefined && g.engine !== engine) continue;
      const key = `${g.actions.join(',')}@${g.on.join(',')}#${g.labTag ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(g);
    }
  return out.filter((g) => !coveredByLabTag(g, out));
}

/** The `account:` kind that holds each of the lab's own resources. */
const OWN_KIND: Readonly<Record<string, AccountResources>> = {
  cluster: 'account:cluster',
  instances: 'account:db',
};

/**
 * A grant on the lab's own cluster or instances is left out when, for each of its actions, another
 * grant allows that action on every resource of that type carrying the lab's tag: the lab's
 * resources carry it (lib/lab-stack.ts tags every resource), so the narrower statement would allow
 * nothing more (a minor upgrade's ModifyDBInstance beside a Blue/Green switchover's).
 */
function coveredByLabTag(g: DisruptionGrant, all: readonly DisruptionGrant[]): boolean {
  if (g.labTag !== undefined || g.on.some((o) => OWN_KIND[o] === undefined)) return false;
  return g.actions.every((a) =>
    g.on.every((o) =>
      all.some(
        (h) =>
          h !== g &&
          h.labTag === 'resource' &&
          h.actions.includes(a) &&
          h.on.includes(OWN_KIND[o] as AccountResources),
      ),
    ),
  );
}
