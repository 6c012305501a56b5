/**
 * The change-board downtime table (issue 42 item 5): `downtime.md` and `downtime.csv` beside
 * summary.md, one row per disruption scenario × target × client mode of a run — which target was
 * disrupted, by which action, what a client lived through (error window, stall window, max latency,
 * acknowledged writes lost), with the settings of the target that bear on its recovery (the
 * catalogue's failure and timeout settings, from plan.json's descriptors) and the versions, and the
 * background load if the scenario had one. A standalone artefact a team can hand over: every figure
 * says its unit, an unknown one is `?` (Markdown) or empty (CSV), never 0. docs/report.md describes it.
 */
import { productEntry } from '../products';
import { KINDS } from '../products/kinds';
import { formatSetting, settingSpec } from '../products/settings';
import { disruptionAction } from '../suite/disruption-actions';
import type { DisruptionResult } from '../suite/disruption';
import {
  downtimeRows,
  formatSpreadSec,
  type DowntimeRow,
  type FigureSpread,
} from '../suite/disruption-summary';
import { fallbackDescriptor, type TargetDescriptor } from '../suite/targets';
import type { StepRecord } from '../suite/types';
import type { LoadedRun } from './load';
import { mdTable, mdText } from './md';

/** The settings areas that bear on how a target recovers from a disruption. */
const RECOVERY_AREAS = ['failure', 'timeouts'] as const;

/** One row of the artefact: a DowntimeRow with what was disrupted and how the target was set. */
export interface ChangeBoardRow {
  readonly row: DowntimeRow;
  /** `postgres-restart (fast)`. */
  readonly disruption: string;
  /** `PgBouncer 1.24.1`, `PostgreSQL 17.2`; `?` when not recorded. */
  readonly version: string;
  /** `server_login_retry 2 s (lab); query_wait_timeout 120 s; …`: the target's recovery settings. */
  readonly settings: string;
  /** The probe: `warm-up 1.5 s, window 5 s, a write every 100 ms, 2 client(s)`; `?` without a plan. */
  readonly probe: string;
}

function disruptionText(r: DisruptionResult): string {
  return `${r.disruption.action}${r.disruption.shutdown !== null ? ` (${r.disruption.shutdown})` : ''}`;
}

/**
 * The target's failure and timeout settings as plan.json recorded them; `not recorded` without;
 * `no pooler` for a direct target (its clients meet the server's own behaviour, nothing between).
 */
export function recoverySettings(d: TargetDescriptor | undefined): string {
  if (d !== undefined && !d.capabilities.pooled) return 'no pooler';
  const eff = d?.settings.effective;
  if (d === undefined || eff === undefined) return 'not recorded';
  const cat = productEntry(KINDS[d.kind].product).settings;
  if (cat === null) return 'none catalogued';
  const parts = Object.entries(eff).flatMap(([name, e]) => {
    const spec = settingSpec(cat, name);
    if (spec === undefined || !(RECOVERY_AREAS as readonly string[]).includes(spec.area)) return [];
    const source = e.source === 'default' ? '' : ` (${e.source})`;
    return [`${name} ${formatSetting(spec, e.value)}${source}`];
  });
  return parts.length > 0 ? parts.join('; ') : 'none catalogued';
}

/**
 * `PgBouncer 1.24.1`: the target's product and version — from plan.json's descriptor, else (a run
 * without a plan) the run's environment: the server's version for a direct target, the pooler's for
 * a pooler (RDS Proxy reports none: `?`).
 */
function versionOf(
  row: DowntimeRow,
  d: TargetDescriptor | undefined,
  run: Pick<LoadedRun, 'manifest'>,
): string {
  const desc = d ?? fallbackDescriptor(row.target);
  const env = run.manifest.environment;
  const caps = desc.capabilities;
  const fromEnv = !caps.pooled ? env.serverVersion : desc.placement === 'managed' ? null : env.poolerVersion;
  return `${productEntry(KINDS[desc.kind].product).label} ${desc.version ?? fromEnv ?? '?'}`;
}

function probeText(run: Pick<LoadedRun, 'plan'>, steps: readonly StepRecord[], row: DowntimeRow): string {
  const first = steps.find(
    (s) => s.scenario === row.scenario && s.target.name === row.target.name && s.params.connect === row.mode,
  );
  const spec = run.plan?.steps.find((s) => s.stepId === first?.stepId)?.probe?.spec;
  const p = first?.probe?.kind === 'disruption' ? first.probe : null;
  if (spec?.kind !== 'disruption' || p === null)
    return p === null ? '?' : `a write every ${p.intervalMs} ms, ${p.clients} client(s)`;
  return `warm-up ${spec.warmupSec} s, window ${spec.recoverySec} s after T0, a write every ${spec.intervalMs} ms, ${p.clients} client(s)`;
}

/** The artefact's rows (empty: the run has no disruption step). */
export function changeBoardRows(run: Pick<LoadedRun, 'plan' | 'manifest' | 'steps'>): ChangeBoardRow[] {
  const descriptors = new Map((run.plan?.targets ?? []).map((d) => [d.name, d]));
  return downtimeRows(run.steps).map((row) => {
    const d = descriptors.get(row.target.name);
    const first = run.steps.find(
      (s): s is StepRecord & { probe: DisruptionResult } =>
        s.scenario === row.scenario && s.probe?.kind === 'disruption',
    );
    return {
      row,
      disruption: first ? disruptionText(first.probe) : row.action,
      version: versionOf(row, d, run),
      settings: recoverySettings(d),
      probe: probeText(run, run.steps, row),
    };
  });
}

const mode = (m: string): string => (m === 'per-transaction' ? 'a connection per write' : 'persistent');
const maxOf = (s: FigureSpread | null): number | null => (s === null ? null : s.max);
const round = (v: number | null): string => (v === null ? '?' : String(Math.round(v)));

function errorWindow(r: DowntimeRow): string {
  return r.withErrors === 0
    ? 'none'
    : `${formatSpreadSec(r.errorWindowMs, 'not over in the window')} (in ${r.withErrors} of ${r.repetitions})`;
}

function stallWindow(r: DowntimeRow): string {
  return r.stallWindowMs === null
    ? '?'
    : r.stallWindowMs.max === 0
      ? 'none'
      : formatSpreadSec(r.stallWindowMs);
}

function loadText(r: DowntimeRow): string {
  const l = r.load;
  if (l === null) return 'none';
  if (l.ran === 0) return `${l.label}: not run`;
  return `${l.label}: ${round(l.tpsBefore)} → ${round(l.tpsDuring)} → ${round(l.tpsAfter)} tps; gap ${formatSpreadSec(l.gapMs, '?')}; ${l.abortedClients ?? '?'} aborted`;
}

const MD_HEADER = [
  'scenario',
  'disruption',
  'target',
  'version',
  'client',
  'reps',
  'error window',
  'stall window',
  'max latency ms',
  'acknowledged writes lost',
  'recovery settings',
  'background load (before → during → after)',
];

/** downtime.md: the table with its legend and the run it comes from. */
export function downtimeMarkdown(run: Pick<LoadedRun, 'plan' | 'manifest' | 'steps'>): string | null {
  const rows = changeBoardRows(run);
  if (rows.length === 0) return null;
  const env = run.manifest.environment;
  const probes = [...new Set(rows.map((r) => `${r.row.scenario}: ${r.probe}`))];
  return [
    `# Downtime: ${mdText(run.manifest.runId)}`,
    '',
    mdText(
      `What a client lived through when each target was disrupted, per target × client mode (median of the repetitions; range when they differ). Run ${run.manifest.runId} (${run.manifest.mode}, suite ${run.manifest.suite}), started ${run.manifest.startedAt}; server ${env.serverVersion ?? '?'}, pgbench ${env.pgbenchVersion ?? '?'}.`,
    ),
    '',
    mdTable(
      MD_HEADER,
      rows.map(({ row: r, disruption, version, settings }) => [
        r.scenario,
        `${disruption}: ${disruptionAction(r.action).phrase}`,
        r.target.name,
        version,
        mode(r.mode),
        String(r.repetitions),
        errorWindow(r),
        stallWindow(r),
        round(maxOf(r.maxLatencyMs)),
        r.lost === null ? 'not checked' : `${r.lost} of ${r.acknowledged}`,
        settings,
        loadText(r),
      ]),
    ),
    '',
    'Probes:',
    '',
    ...probes.map((p) => `- ${mdText(p)}`),
    '',
    mdText(
      "error window: first error (the server's or the pooler's) → first success after the last one; stall window: successful writes slower than 10 × the warm-up p99; max latency: the slowest successful write after T0 (worst repetition); acknowledged writes lost: acknowledged writes missing from the ledger afterwards (must be 0); recovery settings: the target's failure and timeout settings (lab: the lab's value, proxylab: the kit's, otherwise the product's default); background load: pgbench's mean tps before T0, in the first and second half of the window, its longest gap without a transaction and its aborted clients. ? = not measured. docs/disruptions.md explains each figure.",
    ),
    '',
  ].join('\n');
}

const CSV_HEADER = [
  'scenario',
  'action',
  'shutdown',
  'target',
  'version',
  'client_mode',
  'repetitions',
  'repetitions_with_errors',
  'error_window_ms_median',
  'error_window_ms_max',
  'stall_window_ms_median',
  'stall_window_ms_max',
  'max_latency_ms',
  'acknowledged_writes',
  'acknowledged_writes_lost',
  'recovery_settings',
  'load',
  'load_tps_before',
  'load_tps_during',
  'load_tps_after',
  'load_gap_ms_max',
  'load_aborted_clients',
];

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvField(v: string | number | null): string {
  if (v === null) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** downtime.csv: the same rows, one figure per column in ms; an unknown figure is an empty field. */
export function downtimeCsv(run: Pick<LoadedRun, 'plan' | 'manifest' | 'steps'>): string | null {
  const rows = changeBoardRows(run);
  if (rows.length === 0) return null;
  const first = (scenario: string): DisruptionResult | null => {
    const s = run.steps.find((x) => x.scenario === scenario && x.probe?.kind === 'disruption');
    return s?.probe?.kind === 'disruption' ? s.probe : null;
  };
  const lines = rows.map(({ row: r, version, settings }) => {
    const errorsSeen = r.withErrors > 0;
    const l = r.load;
    return [
      r.scenario,
      r.action,
      first(r.scenario)?.disruption.shutdown ?? null,
      r.target.name,
      version,
      r.mode,
      r.repetitions,
      r.withErrors,
      // no error: a 0 ms window (measured); errors not over in the window: unknown
      errorsSeen ? (r.errorWindowMs?.median ?? null) : 0,
      errorsSeen ? (r.errorWindowMs?.max ?? null) : 0,
      r.stallWindowMs?.median ?? null,
      r.stallWindowMs?.max ?? null,
      maxOf(r.maxLatencyMs),
      r.acknowledged,
      r.lost,
      settings,
      l?.label ?? null,
      l?.tpsBefore ?? null,
      l?.tpsDuring ?? null,
      l?.tpsAfter ?? null,
      maxOf(l?.gapMs ?? null),
      l?.abortedClients ?? null,
    ]
      .map(csvField)
      .join(',');
  });
  // LF line ends: the report writes its text files through forTerminal, which shows a CR as \x0d
  return `${[CSV_HEADER.join(','), ...lines].join('\n')}\n`;
}

/** The artefact's files (name, text) for a run; none when it disrupted nothing. */
export function downtimeFiles(
  run: Pick<LoadedRun, 'plan' | 'manifest' | 'steps'>,
): Array<readonly [string, string]> {
  const md = downtimeMarkdown(run);
  const csv = downtimeCsv(run);
  return [
    ...(md !== null ? [['downtime.md', md] as const] : []),
    ...(csv !== null ? [['downtime.csv', csv] as const] : []),
  ];
}
