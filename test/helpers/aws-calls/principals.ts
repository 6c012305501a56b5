/**
 * Who makes an AWS call in the tests: one of the lab's roles (as synthesized from the stack) or the
 * operator running the CLI (with the policy `proxylab iam-policy` prints for a role). `lab` names
 * the shipped lab (labs/NAME.json) whose synthesized policy is the yardstick; each kind has a
 * default lab that has the resource the role works with (poolers, spot requests).
 */
import type { OperatorRole } from '../../../lib/operator/iam-policy';

export type LabRoleKind = 'runner' | 'pooler-host' | 'collector' | 'expiry-schedule' | 'spot-canceller';

export type Principal =
  | { readonly kind: LabRoleKind; readonly lab?: string }
  | {
      readonly kind: 'operator';
      readonly role: OperatorRole;
      readonly lab?: string;
      /** The lab file the CLI was given, when it is not labs/<lab>.json: its policy is printed from it. */
      readonly labFile?: string;
    };

/** The lab whose policy judges a principal when it names none. */
export const DEFAULT_LAB: Readonly<Record<Principal['kind'], string>> = {
  runner: 'e5-big-server', // proxies and poolers: every runner statement there is
  'pooler-host': 'e5-big-server',
  collector: 'default',
  'expiry-schedule': 'default',
  'spot-canceller': 'pocket', // the spot lab
  operator: 'default',
};

export const RUNNER: Principal = { kind: 'runner' };
export const POOLER_HOST: Principal = { kind: 'pooler-host' };
export const COLLECTOR: Principal = { kind: 'collector' };
export const EXPIRY_SCHEDULE: Principal = { kind: 'expiry-schedule' };
export const SPOT_CANCELLER: Principal = { kind: 'spot-canceller' };
export function operator(role: OperatorRole, lab?: string): Principal {
  return lab === undefined ? { kind: 'operator', role } : { kind: 'operator', role, lab };
}

export function labOf(p: Principal): string {
  return p.lab ?? DEFAULT_LAB[p.kind];
}

export function describePrincipal(p: Principal): string {
  const who = p.kind === 'operator' ? `operator (${p.role} policy of proxylab iam-policy)` : `${p.kind} role`;
  return `${who}, lab ${labOf(p)}`;
}
