/**
 * What a person sees while a suite runs and after: progress (step k of n, current step, elapsed,
 * ETA) redrawn in place on a TTY and as plain lines otherwise (CI), then a table per scenario.
 * Formatting is pure (tested); only ProgressPrinter writes to a stream.
 */
import { downtimeRows, formatSpreadSec } from '../suite/disruption-summary';
import type { Suite } from '../suite/catalog';
import type { ErrorSummary, RunManifest, ScenarioVerdict, StepRecord, Verdict } from '../suite/types';
import type { ProgressEvent } from '../engine/run-suite';
import { fallbackDescriptor } from '../suite/targets';
import { formatDuration } from '../core/format';
import { forTerminal, forTerminalLine } from '../core/terminal-text';

export function verdictMark(held: boolean | null): string {
  return held === true ? '✓' : held === false ? '✗' : '·';
}

export function formatErrors(errors: readonly ErrorSummary[] | undefined, abortedClients = 0): string {
  const parts = (errors ?? []).filter((e) => e.count > 0).map((e) => `${e.class} ×${e.count}`);
  if (abortedClients > 0) parts.push(`${abortedClients} aborted`);
  return parts.length > 0 ? parts.join(', ') : '-';
}

function fmtNum(v: number | null | undefined, digits: number): string {
  return v === null || v === undefined ? '?' : v.toFixed(digits);
}

/** One line per finished step (used by both progress modes). */
export function formatStepLine(index: number, total: number, r: StepRecord): string {
  const m = r.result;
  const tps = m?.tps ?? null;
  const what =
    r.status === 'timeout'
      ? 'TIMEOUT'
      : r.status === 'hung'
        ? `HUNG (${r.note ?? 'stopped by the harness'})`
        : r.status === 'completed'
          ? `${fmtNum(tps, 1)} tps`
          : r.status;
  const sat =
    (r.loadGeneratorSaturated ? ' (load generator saturated)' : '') +
    (r.poolerSaturated === true ? ' (pooler CPU-bound)' : '');
  if (r.status === 'not-available')
    return `${verdictMark(r.verdict.held)} [${index}/${total}] ${r.stepId}  ${r.note ?? 'not available on this target'}`;
  // Never a finding: the infrastructure failed, so nothing was measured (no ✓/✗).
  if (r.status === 'infrastructure-error')
    return `! [${index}/${total}] ${r.stepId}  NOT MEASURED, infrastructure failure: ${r.note ?? 'cause unknown'}`;
  // A probe step (no pgbench): what its kind's judge observed.
  if (r.probe) return `${verdictMark(r.verdict.held)} [${index}/${total}] ${r.stepId}  ${r.verdict.observed}`;
  return `${verdictMark(r.verdict.held)} [${index}/${total}] ${r.stepId}  ${what}, p95 ${fmtNum(m?.latencyP95Ms, 2)} ms, errors ${formatErrors(m?.errors, m?.abortedClients)}${sat}`;
}

function pad(s: string, n: number): string {
  // Count code points so ✓/✗ and × line up.
  const len = [...s].length;
  return len >= n ? s : s + ' '.repeat(n - len);
}

function padLeft(s: string, n: number): string {
  const len = [...s].length;
  return len >= n ? s : ' '.repeat(n - len) + s;
}

/** Tables per scenario: target, clients, protocol, connect, tps, p95, errors, verdict; then comparisons. */
export function formatResultTables(
  suite: Suite,
  records: readonly StepRecord[],
  scenarioVerdicts: readonly ScenarioVerdict[],
): string {
  const out: string[] = [];
  const scenarios = [...new Set(records.map((r) => r.scenario))];
  for (const name of scenarios) {
    const scenario = suite.scenarios.find((s) => s.name === name);
    out.push(`${name}${scenario ? ` — ${scenario.title}` : ''}`);
    if (records.some((r) => r.scenario === name && r.probe?.kind === 'disruption')) {
      out.push(...downtimeTable(records.filter((r) => r.scenario === name)), '');
      continue;
    }
    const header = [
      'target',
      'clients',
      'protocol',
      'connect',
      'pool%',
      'tps',
      'p95 ms',
      'errors',
      'verdict',
    ];
    const own = records.filter((r) => r.scenario === name);
    // Probe steps (no pgbench) have no tps or p95: their row says what the probe observed instead.
    const probeOnly = own.length > 0 && own.every((r) => r.probe != null);
    if (probeOnly) header[7] = 'observed';
    const rows = own.map((r) => [
      r.target.name +
        (r.params.preparedStatements == null
          ? ''
          : ` (max_prepared_statements ${r.params.preparedStatements === 'on' ? 'on' : '0'})`),
      String(r.params.clients),
      r.params.protocol,
      r.params.connect === 'per-transaction' ? '-C' : 'persistent',
      r.params.poolPercent === null ? '-' : String(r.params.poolPercent),
      r.status === 'timeout' || r.status === 'hung'
        ? r.status
        : r.status === 'infrastructure-error'
          ? 'not measured'
          : fmtNum(r.result?.tps, 1),
      fmtNum(r.result?.latencyP95Ms, 2),
      r.status === 'not-available' || r.status === 'infrastructure-error' || r.status === 'hung'
        ? (r.note ?? r.status)
        : r.probe
          ? r.verdict.observed
          : formatErrors(r.result?.errors, r.result?.abortedClients),
      `${verdictMark(r.verdict.held)} ${r.verdict.expected}`,
    ]);
    const showPool = rows.some((row) => row[4] !== '-');
    const cols = header
      .map((_, i) => i)
      .filter((i) => (showPool || i !== 4) && !(probeOnly && (i === 5 || i === 6)));
    const widths = cols.map((i) =>
      Math.max([...(header[i] ?? '')].length, ...rows.map((row) => [...(row[i] ?? '')].length)),
    );
    const numeric = new Set([1, 5, 6]);
    const line = (cells: string[]): string =>
      '  ' +
      cols
        .map((i, k) =>
          k === cols.length - 1
            ? (cells[i] ?? '')
            : numeric.has(i)
              ? padLeft(cells[i] ?? '', widths[k] ?? 0)
              : pad(cells[i] ?? '', widths[k] ?? 0),
        )
        .join('  ');
    out.push(line(header));
    for (const row of rows) out.push(line(row));
    for (const v of scenarioVerdicts.filter((x) => x.scenario === name))
      out.push(`  ${verdictMark(v.held)} ${v.expected} — ${v.observed}`);
    out.push('');
  }
  return out.join('\n');
}

/**
 * A disruption scenario's downtime table: per target × mode over the repetitions, the error and stall
 * windows (median, and the range when they differ), writes lost, unknown outcomes, the verdicts;
 * steps not measured are listed under it with their reason.
 */
function downtimeTable(records: readonly StepRecord[]): string[] {
  const header = [
    'target',
    'connect',
    'reps',
    'errors',
    'error window',
    'stall',
    'max ms',
    'lost',
    'unknown',
    'verdicts',
  ];
  const rows = downtimeRows(records).map((r) => [
    r.target.name,
    r.mode === 'per-transaction' ? 'per write' : 'persistent',
    String(r.repetitions),
    `${r.withErrors}/${r.repetitions}`,
    formatSpreadSec(r.errorWindowMs, r.withErrors > 0 ? 'open' : '–'),
    r.stallWindowMs === null ? '?' : r.stallWindowMs.max === 0 ? 'none' : formatSpreadSec(r.stallWindowMs),
    fmtNum(r.maxLatencyMs?.max, 0),
    r.lost === null ? '?' : String(r.lost),
    r.unknown === 0 ? '0' : `${r.unknown} (${r.unknownCommitted} committed)`,
    `${r.held > 0 ? `✓${r.held} ` : ''}${r.broke > 0 ? `✗${r.broke} ` : ''}${r.informational > 0 ? `·${r.informational}` : ''}`.trim(),
  ]);
  const widths = header.map((h, i) =>
    Math.max([...h].length, ...rows.map((row) => [...(row[i] ?? '')].length)),
  );
  const line = (cells: readonly string[]): string =>
    '  ' +
    cells
      .map((c, i) => pad(c, widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const notMeasured = records
    .filter((r) => r.status !== 'completed')
    .map(
      (r) =>
        `  ${r.status === 'infrastructure-error' ? '!' : verdictMark(r.verdict.held)} ${r.stepId}: ${r.note ?? r.status}`,
    );
  const broken = records
    .filter((r) => r.verdict.held === false)
    .map((r) => `  ✗ ${r.stepId}: expected ${r.verdict.expected} — ${r.verdict.observed}`);
  return [line(header), ...rows.map(line), ...broken, ...notMeasured];
}

/**
 * The closing line's verdict: "All verdicts held" only when some verdict held, none broke and no step
 * hung; a run whose verdicts are all informational (a disruption window not over, a measured cell)
 * says so instead of reading as a success.
 */
function headline(status: string, n: { held: number; broke: number; hung: number }): string {
  if (status !== 'completed') return `Run ${status}`;
  if (n.broke > 0) return `${n.broke} verdict(s) did not hold`;
  if (n.hung > 0) return `${n.hung} step(s) hung`;
  return n.held > 0 ? 'All verdicts held' : 'No verdict to hold (all informational)';
}

/** The closing lines: counts of held / broken / informational verdicts and where the results are. */
export function formatSummary(
  manifest: RunManifest,
  records: readonly StepRecord[],
  runDir: string,
  wallSec: number,
): string {
  // An infrastructure-error step is no verdict at all (not even informational).
  const measured = records.filter((r) => r.status !== 'infrastructure-error');
  const all: Verdict[] = [...measured.map((r) => r.verdict), ...(manifest.scenarioVerdicts ?? [])];
  const held = all.filter((v) => v.held === true).length;
  const broke = all.filter((v) => v.held === false).length;
  const info = all.filter((v) => v.held === null).length;
  const hung = measured.filter((r) => r.status === 'hung').length;
  const lines = [
    `${headline(manifest.status, { held, broke, hung })}: ` +
      `${held} held, ${broke} broke, ${info} informational${hung > 0 ? `, ${hung} step(s) hung` : ''}; ${manifest.stepsCompleted}/${manifest.stepIds.length} steps in ${formatDuration(wallSec)}.`,
  ];
  if (manifest.error) lines.push(`Error: ${manifest.error}`);
  if (manifest.mode === 'local' && records.some((r) => fallbackDescriptor(r.target).capabilities.pooled))
    lines.push(
      'One machine, loopback: pooled and direct share these CPUs, so pooled tps below direct is the cost of the hop here, ' +
        'not a pooler on its own host; refusals, error classes, queueing and -C ratios carry over (the report says more).',
    );
  lines.push(`Run directory: ${runDir}`);
  return lines.join('\n');
}

export interface ProgressPrinterOptions {
  readonly stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Redraw one status line in place. @default stream.isTTY */
  readonly tty?: boolean;
  /** Redraw period on a TTY. @default 1000 */
  readonly tickMs?: number;
  /** Without a TTY, a "still running" line this often during a long step (CI kills silent jobs). @default 60000 */
  readonly heartbeatMs?: number;
  /** Time and the repeating timer (tests pass a fake one instead of sleeping). @default the real clock */
  readonly clock?: ProgressClock;
}

export interface ProgressClock {
  now(): number;
  /** Call `fn` every `ms` until the returned function is called. */
  every(ms: number, fn: () => void): () => void;
}

const REAL_CLOCK: ProgressClock = {
  now: () => Date.now(),
  every: (ms, fn) => {
    const timer = setInterval(fn, ms);
    return () => clearInterval(timer);
  },
};

/** Prints ProgressEvents; call close() when the run ends (stops the redraw timer). */
export class ProgressPrinter {
  private readonly tty: boolean;
  private readonly clock: ProgressClock;
  private stopTimer: (() => void) | undefined;
  private status: {
    index: number;
    total: number;
    stepId: string;
    startedMs: number;
    runStartMs: number;
    etaSec: number | null;
  } | null = null;
  private runStartMs: number;
  private drawn = false;

  constructor(private readonly opts: ProgressPrinterOptions) {
    this.tty = opts.tty ?? opts.stream.isTTY === true;
    this.clock = opts.clock ?? REAL_CLOCK;
    this.runStartMs = this.clock.now();
  }

  readonly handle = (ev: ProgressEvent): void => {
    switch (ev.type) {
      case 'run-start':
        this.runStartMs = this.clock.now();
        this.println(
          ev.resumed
            ? `Resuming run ${ev.runId}: ${ev.alreadyDone} of ${ev.total} steps already done.`
            : `Run ${ev.runId}: ${ev.total} steps.`,
        );
        break;
      case 'init-data':
        this.println(`  loading pgbench data, scale ${ev.scale} (pgbench -i on ${ev.target})`);
        break;
      case 'step-skip':
        if (!this.tty) this.println(`= [${ev.index}/${ev.total}] ${ev.step.stepId} (done earlier, skipped)`);
        break;
      case 'step-start':
        this.status = {
          index: ev.index,
          total: ev.total,
          stepId: ev.step.stepId,
          startedMs: this.clock.now(),
          runStartMs: this.runStartMs,
          etaSec: ev.etaSec,
        };
        if (this.tty) {
          this.draw();
          this.stopTimer ??= this.clock.every(this.opts.tickMs ?? 1000, () => this.draw());
        } else {
          this.println(
            `> [${ev.index}/${ev.total}] ${ev.step.stepId}  (elapsed ${formatDuration(ev.elapsedSec)}, ETA ${formatDuration(ev.etaSec)})${ev.note ? `  — ${ev.note}` : ''}`,
          );
          this.stopTimer ??= this.clock.every(this.opts.heartbeatMs ?? 60_000, () => this.heartbeat());
        }
        break;
      case 'step-end':
        this.status = null;
        this.println(formatStepLine(ev.index, ev.total, ev.record));
        break;
      case 'probe-log':
        this.println(`  ${ev.line}`);
        break;
      case 'scenario-end':
        for (const v of ev.verdicts)
          this.println(`${verdictMark(v.held)} ${ev.scenario}: ${v.expected} — ${v.observed}`);
        break;
      case 'run-end':
        this.close();
        break;
    }
  };

  close(): void {
    this.stopTimer?.();
    this.stopTimer = undefined;
    this.clearLine();
  }

  private statusText(): string {
    const s = this.status;
    if (!s) return '';
    const now = this.clock.now();
    const stepSec = (now - s.startedMs) / 1000;
    const eta = s.etaSec === null ? null : Math.max(0, s.etaSec - stepSec);
    // Counters first: a narrow terminal cuts the end of the step id, not the ETA.
    const text = `[${s.index}/${s.total}] ${formatDuration(stepSec)} · elapsed ${formatDuration((now - s.runStartMs) / 1000)} · ETA ${formatDuration(eta)} · ${forTerminalLine(s.stepId)}`;
    const cols = this.opts.stream.columns ?? 120;
    return text.length > cols - 1 ? text.slice(0, cols - 2) + '…' : text;
  }

  private heartbeat(): void {
    if (this.status) this.println(`  … ${this.statusText()}`);
  }

  private draw(): void {
    if (!this.status) return;
    this.opts.stream.write(`\r\x1b[2K${this.statusText()}`);
    this.drawn = true;
  }

  private clearLine(): void {
    if (this.tty && this.drawn) {
      this.opts.stream.write('\r\x1b[2K');
      this.drawn = false;
    }
  }

  private println(line: string): void {
    this.clearLine();
    // Step ids, error classes and verdict texts can come from a resumed run's files.
    this.opts.stream.write(forTerminal(line) + '\n');
    if (this.tty && this.status) this.draw();
  }
}
