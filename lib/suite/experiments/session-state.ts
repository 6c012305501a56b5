/**
 * SESSION: which of an application's session features survive each target. Every step runs the
 * sixteen two-client programs of lib/suite/session-state.ts on one target (the probe kind
 * `session-state`, lib/suite/probes.ts) and judges each feature against what its sources say the
 * target should do — PgBouncer's feature map for the pool mode and version, RDS Proxy's pinning
 * page — decided from the target's descriptor (capabilities, version, settings).
 */
import type { Experiment, Scenario } from '../scenario';
import { SESSION_FEATURES } from '../session-state';
import { DIRECT, MANAGED_POOL, SELECT_1, SELF_HOSTED_TRANSACTION_POOL, SESSION_POOL } from './common';

export const SESSION_STATE: Scenario = {
  name: 'session-state',
  experiment: 'SESSION',
  title: 'Session state through each target: works, lost, leaks, errors — and RDS Proxy pinning',
  finding:
    'Transaction pooling breaks session features by design (PgBouncer: SET, LISTEN, WITH HOLD cursors, PREPARE, ' +
    'session advisory locks and temporary tables "Never"; protocol-level prepared statements only with ' +
    'max_prepared_statements, 1.21+), while RDS Proxy pins the client to its server connection instead (AWS, ' +
    '"Avoiding pinning"). Measured here feature by feature: kept, lost, leaked to another client or refused.',
  // The probe's own clients do the work; pgbench runs nothing for these steps.
  script: SELECT_1,
  protocols: ['simple'],
  connects: ['persistent'],
  // A and B
  clients: [2],
  jobs: 1,
  // What a step takes locally (the ETA); on a target that pins, each feature holds its state for a
  // whole CloudWatch minute (≈ 1.5 min per feature).
  durationSec: 5,
  scale: 1,
  initFlags: [],
  repetitions: 1,
  targets: [DIRECT, SELF_HOSTED_TRANSACTION_POOL, SESSION_POOL, MANAGED_POOL],
  expectations: [
    {
      when: {},
      outcome: 'succeeds',
      note: "every feature as its sources expect for the target's capabilities and version (lib/suite/session-state.ts expectSession)",
    },
  ],
  probe: { kind: 'session-state', features: SESSION_FEATURES, pinPeriodSec: 60 },
  note: 'Two node-postgres clients per feature; the pool narrowed to one server connection where the target allows it.',
};

export const SESSION_EXPERIMENT: Experiment = {
  id: 'SESSION',
  suite: {
    name: 'session-state',
    description:
      'The session-state matrix (≈ 15 s locally; ≈ 25 min per RDS Proxy, whose features each hold a CloudWatch minute): 16 session features through every target.',
    scenarios: [SESSION_STATE],
  },
};
