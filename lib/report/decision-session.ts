/**
 * The decision table's session features (issue 40, item 3): for each session feature a scenario's
 * script uses (lib/suite/script-features.ts; protocol-level prepared statements when the row runs
 * pgbench -M prepared), what that row's target does with it, from the session-state matrix:
 *
 *  - **measured**: a session-state step of THIS run measured the feature on the same target — its
 *    outcome (works / lost / leaks / errors, and pins where CloudWatch showed a pin), on the version
 *    that step's descriptor recorded;
 *  - **expected**: otherwise what the target's product entry predicts for its kind, version and
 *    settings (`expectSession`, lib/suite/session-state.ts, with its sources) — said as "expected,
 *    not measured", pointing to `--suite session`; a cell the sources do not predict stays unknown.
 *
 * Never invented: no script (a run without plan.json) is "not recorded", not "none used".
 * Pure: the loaded run and the row's descriptor in, outcomes out; decision-text.ts words them.
 */
import {
  expectSession,
  SESSION_FEATURE_INFO,
  type SessionFeature,
  type SessionOutcome,
} from '../suite/session-state';
import { scriptSessionFeatures } from '../suite/script-features';
import {
  productVersionLabel,
  sessionHandling,
  targetProduct,
  versionAtLeast,
  type TargetDescriptor,
} from '../suite/targets';
import { productEntry } from '../products';
import type { Cell } from './cells';
import type { LoadedRun } from './load';
import type { SessionMatrix } from './session-matrix';

/** Outcomes that break a script using the feature: its state went away, crossed clients, or failed. */
export const BREAKING_OUTCOMES: readonly SessionOutcome[] = ['lost', 'leaks', 'errors'];

/** The option that measures the matrix (`proxylab local --suite session`, `proxylab run --suite session`). */
export const SESSION_SUITE_HINT = '--suite session';

/** One feature a row's script uses, and what the row's target does with it. */
export interface RowSessionFeature {
  readonly feature: SessionFeature;
  /** In the script's words, with where: `session advisory lock (line 1)`, `-M prepared`. */
  readonly use: string;
  /** measured: a session-state step of this run; expected: the product entry's prediction. */
  readonly source: 'measured' | 'expected';
  /** The measured outcome, or every outcome the sources allow; empty: not predicted (unknown). */
  readonly outcomes: readonly SessionOutcome[];
  /** The target pinned (measured) or is documented to pin (expected); null: does not pin, or unknown. */
  readonly pins: boolean | null;
  /** The product and version the outcome is for: `PgBouncer 1.25.2`, `RDS Proxy (managed, no version)`. */
  readonly version: string;
  /** Why the sources predict it (expected), or what the probe saw (measured), in words. */
  readonly why: string;
  /** The session-state step it was measured in; null for an expectation. */
  readonly stepId: string | null;
  /** What the target is, for the answer: `a transaction pool`, `a session pool`, `a direct connection`. */
  readonly through: string;
  /**
   * What would make it work, from the product entry, when that is a release or a setting rather than
   * another kind of target (`PgBouncer ≥ 1.21 for prepared statements`); null: nothing the entry names.
   */
  readonly remedy: string | null;
}

/** What a row knows of its script's session features: null when the run did not record its script. */
export type RowSessionFeatures = readonly RowSessionFeature[] | null;

/** The features used by the scripts the cells' steps ran (as the plan stored them), in order of first use. */
export function scriptFeatureUses(
  run: LoadedRun,
  cells: ReadonlyArray<Pick<Cell, 'steps' | 'key'>>,
): Array<{ feature: SessionFeature; use: string }> | null {
  if (run.plan === null) return null;
  const protocols = new Set(cells.map((c) => c.key.protocol));
  const ids = new Set(cells.flatMap((c) => c.steps.map((s) => s.stepId)));
  const planned = run.plan.steps.filter((s) => ids.has(s.stepId));
  if (planned.length === 0) return null;
  const files = new Map<string, string>();
  for (const p of planned)
    for (const part of p.script.parts) if ('file' in part) files.set(part.file.name, part.file.sql);
  const named = files.size > 1;
  // feature → its first use's words, and the lines of every use by file
  const found = new Map<SessionFeature, { use: string; at: Map<string, number[]> }>();
  for (const [name, sql] of files)
    for (const u of scriptSessionFeatures(sql)) {
      if (u.sessionFeature === null) continue;
      const seen = found.get(u.sessionFeature) ?? { use: u.label, at: new Map<string, number[]>() };
      found.set(u.sessionFeature, seen);
      const lines = seen.at.get(name) ?? [];
      if (!lines.includes(u.line)) seen.at.set(name, [...lines, u.line]);
    }
  const where = (at: Map<string, number[]>): string =>
    [...at]
      .map(([name, l]) => `${named ? `${name} ` : ''}line${l.length === 1 ? '' : 's'} ${l.join(', ')}`)
      .join('; ');
  const uses = [...found].map(([feature, { use, at }]) => ({ feature, use: `${use} (${where(at)})` }));
  // pgbench -M prepared names its statements on the connection: protocol-level prepared statements
  if (protocols.has('prepared') && !found.has('protocol-prepared'))
    uses.push({ feature: 'protocol-prepared', use: 'protocol-level prepared statements (-M prepared)' });
  return uses;
}

/** The session-state matrix's cell for a feature on a target, when this run measured it there. */
function measuredCell(matrix: SessionMatrix | null, feature: SessionFeature, target: string) {
  if (matrix === null) return null;
  const column = matrix.columns.findIndex((c) => c.target === target);
  const cell = column < 0 ? null : (matrix.rows.find((r) => r.feature === feature)?.cells[column] ?? null);
  if (cell === null || cell.state === 'not-available' || cell.state === 'not-measured') return null;
  return { ...cell, outcome: cell.state };
}

/** The target in words, as the answer says what a feature does through it. */
function throughWords(d: TargetDescriptor): string {
  const c = d.capabilities;
  if (!c.pooled) return 'a direct connection';
  // a plan stored before capabilities.session: sessionHandling reads it from the kind and version
  if (c.multiplexes) return sessionHandling(d).pinsSessions ? 'a pinning proxy' : 'a transaction pool';
  return 'a session pool';
}

/**
 * Protocol-level prepared statements a transaction pool does not carry: the product's first release
 * that can (its entry's `prepared.since`) when this one is older or unknown, else the support turned
 * on; null for a product whose entry names no such release (RDS Proxy: measured, not switchable).
 */
function preparedRemedy(d: TargetDescriptor): string | null {
  const product = targetProduct(d);
  const since = productEntry(product.id).prepared?.since ?? null;
  if (since === null || !d.capabilities.multiplexes) return null;
  if (!versionAtLeast(d.version, since))
    return `${product.label} ≥ ${since} for prepared statements${d.version === null ? ' (this version unknown)' : ` (ran ${d.version})`}`;
  return `${product.label}'s prepared-statement support turned on (this target ran with it off)`;
}

/** What the row's target does with each feature its script uses: measured in this run, else expected. */
export function rowSessionFeatures(
  run: LoadedRun,
  matrix: SessionMatrix | null,
  d: TargetDescriptor,
  uses: ReadonlyArray<{ feature: SessionFeature; use: string }> | null,
): RowSessionFeatures {
  if (uses === null) return null;
  return uses.map(({ feature, use }): RowSessionFeature => {
    const cell = measuredCell(matrix, feature, d.name);
    if (cell !== null) {
      const step = [...run.steps, ...run.unmeasured].find((s) => s.stepId === cell.stepId);
      return {
        feature,
        use,
        source: 'measured',
        outcomes: [cell.outcome],
        pins: cell.pins?.pinned ?? null,
        version: productVersionLabel(step ? run.descriptorOf(step) : d),
        why: cell.observed,
        stepId: cell.stepId,
        through: throughWords(d),
        remedy: feature === 'protocol-prepared' ? preparedRemedy(d) : null,
      };
    }
    const e = expectSession(feature, d);
    return {
      feature,
      use,
      source: 'expected',
      outcomes: e.outcomes,
      pins: e.pins,
      version: productVersionLabel(d),
      why: e.why,
      stepId: null,
      through: throughWords(d),
      remedy: feature === 'protocol-prepared' ? preparedRemedy(d) : null,
    };
  });
}

/**
 * A feature the row's script breaks on: measured lost / leaks / errors, or an expectation whose every
 * allowed outcome is one of those (an expectation that also allows `works` is not a breakage).
 */
export function breaks(f: RowSessionFeature): boolean {
  return f.outcomes.length > 0 && f.outcomes.every((o) => BREAKING_OUTCOMES.includes(o));
}

/** `leaks`, `lost or leaks`, `works · pins`, `unknown`. */
export function outcomeWords(f: RowSessionFeature): string {
  const base = f.outcomes.length === 0 ? 'not predicted' : f.outcomes.join(' or ');
  return f.pins === true ? `${base} · pins` : base;
}

/** The matrix's short label of a feature (`advisory lock (session)`). */
export function featureLabel(feature: SessionFeature): string {
  return SESSION_FEATURE_INFO[feature].label;
}
