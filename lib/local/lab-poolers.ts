/**
 * `proxylab local --lab FILE`: the lab's targets on the local stand-in. The writer is the local
 * PostgreSQL; each lab pooler becomes ONE local pooler of its own — its name (so its targets keep
 * the lab's names: `bouncer-fast-retry-transaction`), its product, its processes, its settings and
 * the version it pins when this machine has it (lib/local/adapters.ts says what ran instead) —, so
 * two variants of one product (`bouncer-default`, `bouncer-fast-retry`) run side by side, each with
 * its own rows. An RDS Proxy has no local counterpart (nothing local behaves like it).
 *
 * The recovery window of a disruption is sized from the targets' settings: at least the longest
 * `recoveryBoundMs` of their products' entries (PgBouncer: `server_login_retry`, 15 s by default)
 * plus RECOVERY_MARGIN_SEC, so a default wait is seen to end.
 */
import { labTargets, poolerProduct } from '../config/targets';
import type { LabConfig } from '../config/types';
import { KINDS } from '../products/kinds';
import { productEntry } from '../products';
import { poolerDriver } from '../poolers/registry';
import type { Suite } from '../suite/catalog';
import { defaultClientTimeouts } from '../suite/disruption';
import { directTarget, poolerTarget, type TargetDescriptor } from '../suite/targets';
import type { TargetRef } from '../suite/types';
import type { LocalPoolerSpec } from './pooler';
import type { LabRecord } from '../results/lab-record';

/** A lab target and what stands in for it on the local stack (null: nothing). */
export interface LocalCounterpart {
  readonly lab: TargetRef;
  /** What the lab target is, in a few words (`RDS Proxy`, `PgBouncer 1.25.2 transaction pool`). */
  readonly what: string;
  readonly local: TargetRef | null;
}

/** `--lab FILE`: the lab the run stands in for, and how its targets map onto the local stack. */
export interface LocalLab {
  /** The lab file as given (for the resume command). */
  readonly file: string;
  readonly name: string;
  readonly counterparts: readonly LocalCounterpart[];
  /** Its text as read and validated: the run's lab.json (lib/local/lab-record.ts). */
  readonly record: LabRecord;
}

/**
 * The local stack's counterpart of each of the lab's targets: the database itself for `direct`, the
 * pool of the same mode of the lab pooler's own local pooler (same name, same product), nothing for
 * an RDS Proxy.
 */
export function localCounterparts(lab: LabConfig): LocalCounterpart[] {
  return labTargets(lab).map((t): LocalCounterpart => {
    switch (t.role) {
      case 'writer':
        return { lab: t.ref, what: 'the database itself', local: directTarget() };
      case 'proxy':
        return { lab: t.ref, what: 'RDS Proxy', local: null };
      case 'pooler': {
        const product = poolerProduct(t.pooler);
        const label = poolerDriver(product).displayName;
        return {
          lab: t.ref,
          what: `${label} ${t.pooler.version} ${t.mode} pool`,
          local: poolerTarget(product, t.pooler.name, t.mode),
        };
      }
    }
  });
}

/** One local pooler per lab pooler: its name, product, processes, settings and pinned version. */
export function labPoolerSpecs(lab: LabConfig): LocalPoolerSpec[] {
  return lab.poolers.map((p) => ({
    product: poolerProduct(p),
    processes: p.processes,
    instance: p.name,
    settings: p.settings,
    version: p.version,
  }));
}

/** The lines `proxylab local --lab` prints before it starts: what stands in for what, and what has no stand-in. */
export function describeCounterparts(lab: LocalLab): string[] {
  const mapped = lab.counterparts.filter((c) => c.local !== null);
  const none = lab.counterparts.filter((c) => c.local === null);
  return [
    `Lab ${lab.name} on the local stack: ${mapped.map((c) => `${c.lab.name} → ${c.local?.name ?? ''}`).join(', ') || 'nothing maps'}` +
      ' (one machine, loopback: see the report for what that means for pooled vs direct figures)',
    ...(none.length > 0
      ? [
          `  no local counterpart, not measured here: ${none.map((c) => `${c.lab.name} (${c.what})`).join(', ')}`,
        ]
      : []),
  ];
}

/** Seconds past the longest recovery bound a window runs: the restart itself, then the first writes through. */
export const RECOVERY_MARGIN_SEC = 3;

/**
 * The longest recovery bound (ms) of these targets, from their products' entries and their effective
 * settings (`ProductEntry.recoveryBoundMs`); 0 when none has one.
 */
export function recoveryBoundMs(descriptors: readonly TargetDescriptor[]): number {
  let bound = 0;
  for (const d of descriptors) {
    const entry = productEntry(KINDS[d.kind].product);
    const ms =
      d.settings.effective !== undefined ? (entry.recoveryBoundMs?.(d.settings.effective) ?? null) : null;
    if (ms !== null && ms > bound) bound = ms;
  }
  return bound;
}

/**
 * The suite with each disruption's recovery window long enough to see the targets' recovery bound
 * end (`recoveryBoundMs` + RECOVERY_MARGIN_SEC; never shorter than the scenario's own), and its
 * duration with it. The same suite when no window needs to grow.
 */
export function sizeRecoveryWindows(suite: Suite, descriptors: readonly TargetDescriptor[]): Suite {
  const needSec = Math.ceil(recoveryBoundMs(descriptors) / 1000) + RECOVERY_MARGIN_SEC;
  let grown = false;
  const scenarios = suite.scenarios.map((s) => {
    const p = s.probe;
    if (p?.kind !== 'disruption' || recoveryBoundMs(descriptors) === 0 || p.recoverySec >= needSec) return s;
    grown = true;
    // client timeouts left at their default (the window) follow the window: a client gives up no
    // sooner than the recovery it is there to see; timeouts a scenario chose stay its question
    const old = defaultClientTimeouts(p.recoverySec);
    const followsWindow =
      p.clientTimeouts.connectTimeoutMs === old.connectTimeoutMs &&
      p.clientTimeouts.statementTimeoutMs === old.statementTimeoutMs;
    const clientTimeouts = followsWindow ? defaultClientTimeouts(needSec) : p.clientTimeouts;
    return {
      ...s,
      durationSec: p.warmupSec + needSec,
      probe: { ...p, recoverySec: needSec, clientTimeouts },
    };
  });
  return grown ? { ...suite, scenarios } : suite;
}
