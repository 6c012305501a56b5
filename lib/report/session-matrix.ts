/**
 * The session-state matrix (pure): feature × target from the session-state probe steps of a run —
 * each cell's outcome (works / lost / leaks / errors), what was expected and why, with the sources,
 * whether the verdict held, how the two clients came to share a server connection, and — for a target
 * that pins (RDS Proxy) — whether it pinned, read from the run's CloudWatch metrics over the minute
 * the probe held its state (`pinnedIn`), with the source named. No metric: unknown, never "no pin".
 */
import {
  describeSessionExpectation,
  expectSession,
  judgeSession,
  pinnedIn,
  SESSION_FEATURE_INFO,
  SESSION_FEATURES,
  SESSION_SOURCES,
  type PinObservation,
  type SessionExpectation,
  type SessionFeature,
  type SessionOutcome,
  type SessionFeatureResult,
  type SessionSource,
  type SessionStateResult,
} from '../suite/session-state';
import type { MetricSeries, StepRecord, StepStatus } from '../suite/types';
import { uniqueInOrder } from './cells';
import type { LoadedRun } from './load';
import { placementLabel } from './pooler-matrix';

/** The session-state result a step recorded, or null (a pgbench step, another probe kind, no result). */
export function sessionStateOf(step: StepRecord): SessionStateResult | null {
  const probe = (step as { readonly probe?: unknown }).probe;
  if (typeof probe !== 'object' || probe === null) return null;
  return (probe as { kind?: unknown }).kind === 'session-state' ? (probe as SessionStateResult) : null;
}

/** The features a session-state step measures (its result's, or the planned spec's); null: not such a step. */
function featuresOf(step: StepRecord, run: LoadedRun): readonly SessionFeature[] | null {
  const probe = sessionStateOf(step);
  if (probe) return probe.features.map((f) => f.feature);
  const planned = run.plan?.steps.find((s) => s.stepId === step.stepId) as
    | { readonly probe?: { readonly spec?: { readonly kind?: unknown; readonly features?: unknown } } }
    | undefined;
  const spec = planned?.probe?.spec;
  if (spec?.kind !== 'session-state' || !Array.isArray(spec.features)) return null;
  return (spec.features as unknown[]).filter((f): f is SessionFeature =>
    SESSION_FEATURES.includes(f as SessionFeature),
  );
}

export type SessionCellState = SessionOutcome | 'not-available' | 'not-measured';

export interface SessionCell {
  readonly feature: SessionFeature;
  readonly target: string;
  readonly state: SessionCellState;
  readonly expected: SessionExpectation;
  readonly held: boolean | null;
  readonly observed: string;
  /** How both clients shared a server connection, and whether they did. */
  readonly sharing: string | null;
  readonly shared: boolean | null;
  /** The SQLSTATE of an `errors` cell. */
  readonly sqlstate: string | null;
  /** For a target that pins: what was read, else null. */
  readonly pins: PinObservation | null;
  /** Did the pin match what the sources say (true / false), or is one of them unknown (null)? */
  readonly pinsHeld: boolean | null;
  readonly stepId: string;
  readonly status: StepStatus;
}

export interface SessionColumn {
  readonly target: string;
  /** `PgBouncer · local (transaction)`, with the version when the run recorded one. */
  readonly what: string;
}

export interface SessionMatrix {
  readonly columns: readonly SessionColumn[];
  readonly rows: ReadonlyArray<{
    readonly feature: SessionFeature;
    readonly label: string;
    readonly what: string;
    readonly cells: ReadonlyArray<SessionCell | null>;
  }>;
  /** Every source a cell cites, once, in order of first use. */
  readonly sources: ReadonlyArray<{
    readonly id: SessionSource;
    readonly title: string;
    readonly url: string;
  }>;
  readonly totals: { readonly held: number; readonly broke: number; readonly informational: number };
}

function sameDimensions(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/** The pin of one probe, from the run's CloudWatch file. */
export function pinObservation(
  run: LoadedRun,
  probe: Pick<SessionFeatureResult, 'pinWatch'>,
): PinObservation | null {
  const watch = probe.pinWatch;
  if (watch === null) return null;
  const dims = Object.entries(watch.dimensions)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  const source = `CloudWatch AWS/RDS ${watch.metric} (Sum, ${dims})`;
  const file = run.metrics.find((m) => m.name === 'cloudwatch');
  if (!file)
    return {
      pinned: null,
      source,
      detail: 'metrics/cloudwatch.json was not collected (proxylab collect --lab FILE --run-id ID)',
    };
  const series: MetricSeries | undefined = file.file.series.find(
    (s) =>
      s.source === 'cloudwatch' && s.name === watch.metric && sameDimensions(s.dimensions, watch.dimensions),
  );
  if (!series) return { pinned: null, source, detail: `${watch.metric} is not in metrics/cloudwatch.json` };
  if (series.status !== 'ok')
    return { pinned: null, source, detail: `${series.status}${series.reason ? `: ${series.reason}` : ''}` };
  return { source, ...pinnedIn(series.points, watch, watch.periodSec) };
}

function cellOf(run: LoadedRun, step: StepRecord, feature: SessionFeature): SessionCell {
  const probe = sessionStateOf(step);
  const result = probe?.features.find((f) => f.feature === feature) ?? null;
  const expected = result?.expected ?? expectSession(feature, run.descriptorOf(step));
  const pins = result ? pinObservation(run, result) : null;
  const state: SessionCellState = result
    ? result.outcome
    : step.status === 'not-available'
      ? 'not-available'
      : 'not-measured';
  const verdict = result ? judgeSession(expected, result) : null;
  return {
    feature,
    target: step.target.name,
    state,
    expected,
    held: verdict?.held ?? null,
    observed: verdict?.observed ?? step.verdict.observed,
    sharing: probe ? `${probe.sharing} (${probe.order})` : null,
    shared: result?.shared ?? null,
    sqlstate: result?.error?.sqlstate ?? null,
    pins,
    pinsHeld:
      pins === null || pins.pinned === null || expected.pins === null ? null : pins.pinned === expected.pins,
    stepId: step.stepId,
    status: step.status,
  };
}

/** The matrix of a run, or null when it has no session-state steps. */
export function sessionMatrix(run: LoadedRun): SessionMatrix | null {
  const steps = [...run.steps, ...run.unmeasured]
    .map((s) => ({ step: s, features: featuresOf(s, run) }))
    .filter((x): x is { step: StepRecord; features: readonly SessionFeature[] } => x.features !== null);
  if (steps.length === 0) return null;
  const targets = uniqueInOrder(steps.map((x) => x.step.target.name));
  const columns = targets.map((name) => {
    const step = steps.find((x) => x.step.target.name === name)?.step;
    const d = step ? run.descriptorOf(step) : null;
    return {
      target: name,
      what: d
        ? `${placementLabel(d)}${d.poolMode ? ` (${d.poolMode})` : ''}${d.version !== null && d.capabilities.pooled ? ` ${d.version}` : ''}`
        : name,
    };
  });
  const features = SESSION_FEATURES.filter((f) => steps.some((x) => x.features.includes(f)));
  const rows = features.map((feature) => ({
    feature,
    label: SESSION_FEATURE_INFO[feature].label,
    what: SESSION_FEATURE_INFO[feature].what,
    cells: targets.map((t) => {
      // The last repetition that measured the feature, else the last record.
      const mine = steps
        .filter((x) => x.features.includes(feature) && x.step.target.name === t)
        .map((x) => x.step);
      const pick =
        [...mine].reverse().find((s) => sessionStateOf(s)?.features.some((f) => f.feature === feature)) ??
        mine.at(-1);
      return pick ? cellOf(run, pick, feature) : null;
    }),
  }));
  const cells = rows.flatMap((r) => r.cells).filter((c): c is SessionCell => c !== null);
  const sourceIds = uniqueInOrder(cells.flatMap((c) => c.expected.sources));
  return {
    columns,
    rows,
    sources: sourceIds.map((id) => ({ id, ...SESSION_SOURCES[id] })),
    totals: {
      held: cells.filter((c) => c.held === true).length,
      broke: cells.filter((c) => c.held === false).length,
      informational: cells.filter((c) => c.held === null).length,
    },
  };
}

/** `leaks`, `works · pins`, `errors 42P05`, `not available`. */
export function sessionCellText(c: SessionCell): string {
  const base =
    c.state === 'not-available'
      ? 'not available'
      : c.state === 'not-measured'
        ? 'not measured'
        : c.state === 'errors' && c.sqlstate !== null
          ? `errors ${c.sqlstate}`
          : c.state;
  const pin =
    c.pins === null
      ? ''
      : c.pins.pinned === true
        ? ' · pins'
        : c.pins.pinned === false
          ? ' · no pin'
          : ' · pin ?';
  return `${base}${pin}`;
}

/** The hover text of a cell: expectation, why, sources, what happened, sharing, pins. */
export function sessionCellHover(c: SessionCell): string {
  return [
    `expected: ${describeSessionExpectation(c.expected)}${c.expected.pins === null ? '' : c.expected.pins ? ', pins' : ', no pin'}`,
    `why: ${c.expected.why}`,
    `sources: ${c.expected.sources.map((s) => `${SESSION_SOURCES[s].title} <${SESSION_SOURCES[s].url}>`).join('; ') || 'none'}`,
    `observed: ${c.observed}`,
    c.sharing !== null ? `sharing: ${c.sharing}` : '',
    c.pins !== null
      ? `pins: ${c.pins.pinned === null ? 'unknown' : c.pins.pinned ? 'yes' : 'no'} — ${c.pins.detail} (${c.pins.source})`
      : '',
    `step: ${c.stepId}`,
  ]
    .filter((l) => l !== '')
    .join('\n');
}
