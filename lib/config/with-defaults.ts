/** A valid lab file with every default applied: the LabConfig the stack, the estimate and the CLI read. */
import { DEFAULTS, defaultMaxIdleConnectionsPercent } from './defaults';
import { poolerDriver } from '../poolers/registry';
import { settingsOf } from './settings';
import { LAB_SUITE_NAME } from '../suite/catalog';
import { labDisruptionLoad, labScenariosWithDefaults, type ScriptTexts } from './scenarios';
import { LabFileInput } from './schema';
import type { NetworkConfig } from './network';
import type { AuroraConfig, DatabaseConfig, LabConfig, PoolerConfig, ProxyConfig } from './types';

// ---------------------------------------------------------------------------------------------
// defaults

export function databaseWithDefaults(input: LabFileInput): DatabaseConfig {
  const p = input.postgres;
  if (p) {
    const d = DEFAULTS.postgres;
    return {
      engine: 'postgres',
      engineVersion: p.engineVersion ?? d.engineVersion,
      instanceClass: p.instanceClass ?? d.instanceClass,
      allocatedStorageGb: p.allocatedStorageGb ?? d.allocatedStorageGb,
      storageType: p.storageType ?? d.storageType,
      multiAz: p.multiAz ?? d.multiAz,
      maxConnections: p.maxConnections ?? null,
      performanceInsights: p.performanceInsights ?? d.performanceInsights,
      logConnections: p.logConnections ?? d.logConnections,
      snapshotOnDestroy: p.snapshotOnDestroy ?? d.snapshotOnDestroy,
    };
  }
  const a = input.aurora ?? {};
  const capacity: AuroraConfig['capacity'] = a.serverless
    ? {
        kind: 'serverless',
        minCapacityAcu: a.serverless.minCapacity,
        maxCapacityAcu: a.serverless.maxCapacity,
      }
    : { kind: 'provisioned', instanceClass: a.instanceClass ?? DEFAULTS.aurora.instanceClass };
  return {
    engine: 'aurora-postgresql',
    engineVersion: a.engineVersion ?? DEFAULTS.aurora.engineVersion,
    capacity,
    readers: a.readers ?? DEFAULTS.aurora.readers,
    storageType: a.storageType ?? DEFAULTS.aurora.storageType,
    maxConnections: a.maxConnections ?? null,
    performanceInsights: a.performanceInsights ?? DEFAULTS.aurora.performanceInsights,
    logConnections: a.logConnections ?? DEFAULTS.aurora.logConnections,
    snapshotOnDestroy: a.snapshotOnDestroy ?? DEFAULTS.aurora.snapshotOnDestroy,
  };
}

export function networkWithDefaults(input: LabFileInput): NetworkConfig {
  const n = input.network;
  if (n === undefined || n === 'create') return { mode: 'create' };
  return {
    mode: 'existing',
    account: n.account,
    // validate.ts requires the region with an existing VPC (checkNetwork)
    region: input.region ?? '',
    vpcId: n.vpcId,
    subnetIds: n.subnetIds,
    egress: n.egress,
    endpoints: n.endpoints ?? DEFAULTS.network.endpoints,
    endpointCidrs: n.endpointCidrs ?? [],
  };
}

export function withDefaults(input: LabFileInput, texts: ScriptTexts): LabConfig {
  const proxies: ProxyConfig[] = (input.proxies ?? []).map((p) => {
    const maxConnectionsPercent = p.maxConnectionsPercent ?? DEFAULTS.proxy.maxConnectionsPercent;
    return {
      name: p.name,
      maxConnectionsPercent,
      maxIdleConnectionsPercent:
        p.maxIdleConnectionsPercent ?? defaultMaxIdleConnectionsPercent(maxConnectionsPercent),
      borrowTimeoutSeconds: p.borrowTimeoutSeconds ?? DEFAULTS.proxy.borrowTimeoutSeconds,
      requireTls: p.requireTls ?? DEFAULTS.proxy.requireTls,
      debugLogging: p.debugLogging ?? DEFAULTS.proxy.debugLogging,
      settings: settingsOf(p.settings),
    };
  });
  const poolers: PoolerConfig[] = (input.poolers ?? []).map((p) => ({
    name: p.name,
    kind: p.kind,
    placement: p.placement,
    instanceType: p.instanceType ?? null,
    version: p.version ?? poolerDriver(p.kind).defaultVersion,
    poolModes: p.poolModes ?? DEFAULTS.pooler.poolModes,
    poolPercent: p.poolPercent ?? DEFAULTS.pooler.poolPercent,
    maxPreparedStatements: p.maxPreparedStatements ?? poolerDriver(p.kind).defaultMaxPreparedStatements,
    processes: p.processes ?? DEFAULTS.pooler.processes,
    workerThreads: p.workerThreads ?? null,
    tls: p.tls ?? DEFAULTS.pooler.tls,
    settings: settingsOf(p.settings),
  }));
  const scenarios = labScenariosWithDefaults(input.scenarios, texts);
  return {
    name: input.name,
    description: input.description ?? DEFAULTS.description,
    region: input.region ?? null,
    owner: input.owner ?? null,
    database: databaseWithDefaults(input),
    proxies,
    poolers,
    runners: {
      instanceType: input.runners?.instanceType ?? DEFAULTS.runners.instanceType,
      count: input.runners?.count ?? DEFAULTS.runners.count,
      placement: input.runners?.placement ?? DEFAULTS.runners.placement,
      spot: input.runners?.spot ?? DEFAULTS.runners.spot,
    },
    crossZone: input.crossZone ?? DEFAULTS.crossZone,
    network: networkWithDefaults(input),
    results: {
      retainOnDestroy: input.results?.retainOnDestroy ?? DEFAULTS.results.retainOnDestroy,
      expireAfterDays: input.results?.expireAfterDays ?? DEFAULTS.results.expireAfterDays,
    },
    ttlHours: input.ttlHours === undefined ? DEFAULTS.ttlHours : input.ttlHours,
    tags: input.tags ?? {},
    suites: input.suites ?? (input.scenarios !== undefined ? [LAB_SUITE_NAME] : DEFAULTS.suites),
    scenarios,
    disruptionLoad: labDisruptionLoad(input.disruptionLoad, scenarios),
    budget: input.budget ?? null,
  };
}
