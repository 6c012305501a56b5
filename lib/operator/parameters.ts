/**
 * Static DB parameters (max_connections, log_connections…) take effect only at the next reboot:
 * after a redeploy that changes them, RDS marks the instance's parameter group `pending-reboot`
 * (DescribeDBInstances → DBParameterGroups[].ParameterApplyStatus) and CloudFormation does not
 * reboot. `proxylab deploy` reboots such instances (RebootDBInstance) and waits until they are
 * `available` and `in-sync`; `proxylab doctor` reports any that are not.
 */
import {
  DescribeDBInstancesCommand,
  RebootDBInstanceCommand,
  type DBInstance,
  type RDSClient,
} from '@aws-sdk/client-rds';
import { InfrastructureError } from '../core/errors';

export interface ParameterState {
  readonly instanceId: string;
  readonly instanceStatus: string;
  /** `in-sync`, `pending-reboot`, `applying`, … per parameter group (usually one). */
  readonly applyStatus: readonly string[];
}

export async function parameterStates(
  rds: RDSClient,
  instanceIds: readonly string[],
): Promise<ParameterState[]> {
  const out: ParameterState[] = [];
  for (const id of instanceIds) {
    const res = await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }));
    const db: DBInstance | undefined = res.DBInstances?.[0];
    out.push({
      instanceId: id,
      instanceStatus: db?.DBInstanceStatus ?? 'unknown',
      applyStatus: (db?.DBParameterGroups ?? []).map((g) => g.ParameterApplyStatus ?? 'unknown'),
    });
  }
  return out;
}

export function needsReboot(state: ParameterState): boolean {
  return state.applyStatus.includes('pending-reboot');
}

export function isSettled(state: ParameterState): boolean {
  return state.instanceStatus === 'available' && state.applyStatus.every((s) => s === 'in-sync');
}

export interface RebootOptions {
  readonly sleep: (ms: number) => Promise<void>;
  readonly now: () => Date;
  readonly print: (line: string) => void;
  /** @default 15 000 */
  readonly pollMs?: number;
  /** @default 30 minutes */
  readonly timeoutMs?: number;
}

/**
 * Reboot every instance whose parameter group waits for one, then wait until each is available
 * and in sync. Returns the instances rebooted ([] when none needed it).
 */
export async function applyPendingReboots(
  rds: RDSClient,
  instanceIds: readonly string[],
  opts: RebootOptions,
): Promise<string[]> {
  const pending = (await parameterStates(rds, instanceIds)).filter(needsReboot).map((s) => s.instanceId);
  if (pending.length === 0) return [];
  for (const id of pending) {
    opts.print(`rebooting ${id}: its parameter group is pending-reboot (static parameters apply at reboot)`);
    await rds.send(new RebootDBInstanceCommand({ DBInstanceIdentifier: id }));
  }
  const deadline = opts.now().getTime() + (opts.timeoutMs ?? 30 * 60_000);
  for (;;) {
    // A reboot is asynchronous: right after the call the instance may still read available/pending.
    await opts.sleep(opts.pollMs ?? 15_000);
    const states = await parameterStates(rds, pending);
    if (states.every(isSettled)) return pending;
    if (opts.now().getTime() > deadline) {
      throw new InfrastructureError(
        `after rebooting ${pending.join(', ')} the parameters are still not applied: ` +
          states.map((s) => `${s.instanceId} ${s.instanceStatus}/${s.applyStatus.join(',')}`).join('; '),
      );
    }
  }
}
