/**
 * `pooler-restart` on a lab: the rolling restart of the self-hosted poolers a disruption group probes,
 * through each pooler host's agent (its control channel, lib/poolers/control.ts): at T0, for each
 * pooler of the group's targets, process 0, 1, … in turn, the agent starts the replacement and
 * retires the old process as the product documents (lib/pooler-host/roll.ts) and says each step with
 * its own time; the runner says when it asked and what the agent answered. Events go on the run's
 * clock: the runner's own as they happen, the agent's at the agent's time (`at`; the hosts keep time
 * with chrony and Amazon Time Sync, as the runner does).
 *
 * No AWS call: nothing to grant, nothing to wait for after the window (the database is not touched;
 * the restarted processes keep serving). The request is authenticated by the control key, derived
 * from the pooler admin secret the runner already reads for the admin consoles; the key is never
 * logged or stored.
 */
import { InfrastructureError } from '../core/errors';
import type { Target } from '../engine/ports';
import { rollPoolerProcess } from '../aws/pooler-agent-client';
import { targetProbeEndpoint, type DisruptionSession, type EventSink } from '../exec/disruption-probe';
import { poolerTargets } from '../config/targets';
import type { RollEvent } from '../poolers/control';
import type { PoolerEndpoint } from '../poolers/endpoint';
import { poolerDriver } from '../poolers/registry';
import type { PlannedStep } from '../suite/expand';

export interface PoolerRollDeps {
  /** The lab's self-hosted poolers (the run request's). */
  readonly poolers: readonly PoolerEndpoint[];
  /** The control key of a pooler (controlKey of the admin secret's password and its name). */
  readonly key: (pooler: PoolerEndpoint) => Promise<string>;
  /** @default rollPoolerProcess (lib/aws/pooler-agent-client.ts) */
  readonly roll?: typeof rollPoolerProcess;
}

export interface PoolerRollSessionOptions {
  readonly roll: PoolerRollDeps;
  readonly ledger: Target;
  readonly pgbenchFloor?: (target: Target) => Promise<number | null>;
}

/** The lab's poolers whose targets `steps` probe, in the lab's order. */
export function poolersOfSteps(
  poolers: readonly PoolerEndpoint[],
  steps: readonly PlannedStep[],
): PoolerEndpoint[] {
  const names = new Set(steps.map((s) => s.target.name));
  return poolers.filter((p) => poolerTargets(p).some((t) => names.has(t.ref.name)));
}

const NAMES: Readonly<Record<RollEvent['event'], string>> = {
  'stopped-leftover': 'leftover-process-stopped',
  'started-new': 'new-process-up',
  'signalled-old': 'old-process-signalled',
  'old-exited': 'old-process-exited',
  'old-still-draining': 'old-process-draining',
};

/**
 * Rolls every process of each pooler in turn; each agent event on the run's clock at the agent's
 * time. A refusal or a failed roll ends the group as an infrastructure failure, naming the process.
 */
export async function rollPoolers(
  deps: PoolerRollDeps,
  poolers: readonly PoolerEndpoint[],
  event: EventSink,
  signal: AbortSignal,
): Promise<void> {
  const roll = deps.roll ?? rollPoolerProcess;
  for (const p of poolers) {
    if (p.controlPort === undefined)
      throw new InfrastructureError(`pooler ${p.name}: its host has no control channel (deployed before it)`);
    const key = await deps.key(p);
    const product = poolerDriver(p.product).displayName;
    for (let i = 0; i < p.processes; i++) {
      if (signal.aborted) return;
      const who = `${product} ${p.name} process ${i + 1}/${p.processes}`;
      event('roll-requested', 'pooler-agent', `${who}: ${p.host}:${p.controlPort}`);
      const result = await roll(p.host, p.controlPort, key, i, (e) =>
        event(
          NAMES[e.event],
          'pooler-agent',
          `${who}: pid ${e.pid}${e.signal ? ` ${e.signal}` : ''}: ${e.detail}`,
          new Date(e.at),
        ),
      );
      if (result.result !== 'ok')
        throw new InfrastructureError(`${who}: the agent ${result.result} the roll: ${result.error}`);
      event(
        'roll-done',
        'pooler-agent',
        `${who}: pid ${result.oldPid} → ${result.newPid}${result.oldExited ? '' : ` (pid ${result.oldPid} still draining)`}`,
        new Date(result.at),
      );
    }
  }
}

/** The disruption session of a `pooler-restart` group on a lab. */
export function poolerRollSession(
  o: PoolerRollSessionOptions,
  steps: readonly PlannedStep[],
): DisruptionSession {
  const poolers = poolersOfSteps(o.roll.poolers, steps);
  return {
    endpoint: (_step, target) => targetProbeEndpoint(target),
    ledgerEndpoint: () => targetProbeEndpoint(o.ledger),
    inject: (event, signal) => rollPoolers(o.roll, poolers, event, signal),
    // the database is untouched and the new processes serve: nothing to put back
    restore: () => Promise.resolve(),
    ...(o.pgbenchFloor ? { pgbenchFloor: o.pgbenchFloor } : {}),
  };
}
