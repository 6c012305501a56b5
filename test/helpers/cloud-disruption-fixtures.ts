/**
 * What the cloud runner's disruption tests share (test/unit/cloud-disruptions.test.ts,
 * cloud-minor-upgrade.test.ts): the two labs' runner principals, their databases by identifier, the
 * ledger target, and a wall clock that moves only when the code under test sleeps.
 */
import type { DatabaseResources } from '../../lib/aws/runner-args';
import type { Target } from '../../lib/engine/ports';
import { directTarget } from '../../lib/suite/targets';

export const AURORA_RUNNER = { kind: 'runner', lab: 'failover-aurora' } as const;
export const RDS_RUNNER = { kind: 'runner', lab: 'failover-rds' } as const;

export const AURORA: DatabaseResources = {
  engine: 'aurora-postgresql',
  clusterId: 'lab-cluster',
  instanceIds: ['lab-writer', 'lab-reader1'],
};
export const RDS: DatabaseResources = { engine: 'postgres', clusterId: null, instanceIds: ['lab-db'] };

/** The direct target the ledger is written through, with `env` for its connection. */
export function ledgerTarget(env: Readonly<Record<string, string>> = {}): Target {
  return {
    ref: directTarget(),
    connection: () => ({
      host: 'writer.example',
      port: 5432,
      user: 'bench',
      dbname: 'bench',
      sslmode: 'require',
      env: { ...env },
    }),
    maxConnections: () => Promise.resolve(100),
    poolSize: () => Promise.resolve(null),
  };
}

/** A wall clock that moves only when the code under test sleeps. */
export function fakeTime(start: number) {
  let t = start;
  return {
    now: () => new Date(t),
    sleep: (ms: number) => {
      t += ms;
      return Promise.resolve();
    },
    at: (offsetMs: number) => new Date(start + offsetMs),
    ms: () => t - start,
  };
}
