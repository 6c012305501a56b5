/**
 * Runner fleet, pure part: split one step across N runners and merge their measurements back
 * into one. No I/O here; the S3 barrier that makes the runners start together lives in
 * `fleet-coordinator.ts`.
 *
 * Merging rules (documented in docs/aws.md):
 *  - counts add up: tps, transactions processed/expected/failed, clients, threads, aborted clients,
 *    error counts per class;
 *  - latency average is weighted by each runner's transactions; the standard deviation is the
 *    pooled one (E[x²] − E[x]² over all transactions), exact given per-runner mean and stddev;
 *  - latency percentiles cannot be merged from per-runner percentiles. We report the MAXIMUM over
 *    the runners, which is an upper bound of the combined percentile (if every runner has 95 % of
 *    its transactions ≤ m, so has the union); the merged record's `note` says so;
 *  - per-second series are merged by interval start: transactions and skipped add up, average
 *    latency and lag weighted by transactions, max latency is the max;
 *  - `complete` only when every part is complete.
 */
import { mergeErrors } from '../suite/parser';
import type { RunnerPart, SeriesPoint, StepMeasurement, StepRecord, Verdict } from '../suite/types';

// Shares are part of the plan (lib/suite/plan.ts); re-exported for the fleet's callers.
export { divideEvenly, splitStep, type RunnerShare, type SplittableStep } from '../suite/plan';
import type { RunnerShare } from '../suite/plan';

/**
 * Rewrite a pgbench argv for one runner's share: `-c/--client`, `-j/--jobs`, `-R/--rate`.
 * Accepts both `-c 10`, `-c10` and `--client=10` forms. Unknown arguments pass through unchanged.
 */
export function rewriteArgvForShare(argv: readonly string[], share: RunnerShare): string[] {
  const out: string[] = [];
  const replacements: Array<{ short: string; long: string; value: string | null }> = [
    { short: '-c', long: '--client', value: String(share.clients) },
    { short: '-j', long: '--jobs', value: String(share.jobs) },
    { short: '-R', long: '--rate', value: share.rate === null ? null : formatRate(share.rate) },
  ];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const rep = replacements.find(
      (r) =>
        arg === r.short ||
        arg === r.long ||
        arg.startsWith(`${r.long}=`) ||
        (arg.startsWith(r.short) && arg.length > 2 && !arg.startsWith('--')),
    );
    if (!rep || rep.value === null) {
      out.push(arg);
      continue;
    }
    if (arg === rep.short || arg === rep.long) {
      out.push(arg, rep.value);
      i++; // skip the original value
    } else if (arg.startsWith(`${rep.long}=`)) {
      out.push(`${rep.long}=${rep.value}`);
    } else {
      out.push(`${rep.short}${rep.value}`);
    }
  }
  return out;
}

function formatRate(rate: number): string {
  // pgbench takes a double; keep it short and never 0 (0 would mean "no throttling" is not what we want).
  const rounded = Math.round(rate * 1000) / 1000;
  return String(rounded > 0 ? rounded : 0.001);
}

/** Read the client count out of a pgbench argv (null when absent). */
export function argvNumber(argv: readonly string[], short: string, long: string): number | null {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    let raw: string | undefined;
    if (arg === short || arg === long) raw = argv[i + 1];
    else if (arg.startsWith(`${long}=`)) raw = arg.slice(long.length + 1);
    else if (arg.startsWith(short) && !arg.startsWith('--') && arg.length > short.length)
      raw = arg.slice(short.length);
    if (raw !== undefined) {
      const n = Number(raw);
      return Number.isFinite(n) ? n : null;
    }
  }
  return null;
}

export const PERCENTILE_MERGE_NOTE =
  'latency percentiles are the maximum over runners: an upper bound of the combined percentile';

function sumOrNull(values: ReadonlyArray<number | null>): number | null {
  if (values.length === 0 || values.some((v) => v === null)) return null;
  return (values as number[]).reduce((a, b) => a + b, 0);
}

/** Max of the values; null when any is unknown (an upper bound needs every part). */
function maxOrNull(values: ReadonlyArray<number | null>): number | null {
  if (values.length === 0 || values.some((v) => v === null)) return null;
  return Math.max(...(values as number[]));
}

/** Weighted mean of the values whose weight and value are known; null if any value is unknown. */
function weightedMean(pairs: ReadonlyArray<{ value: number | null; weight: number | null }>): number | null {
  if (pairs.length === 0 || pairs.some((p) => p.value === null || p.weight === null)) return null;
  const totalWeight = pairs.reduce((a, p) => a + (p.weight as number), 0);
  if (totalWeight <= 0) return null;
  return pairs.reduce((a, p) => a + (p.value as number) * (p.weight as number), 0) / totalWeight;
}

function sameOrNull<T>(values: ReadonlyArray<T | null>): T | null {
  const known = values.filter((v): v is T => v !== null);
  if (known.length === 0) return null;
  return known.every((v) => v === known[0]) ? (known[0] as T) : null;
}

function pooledStddev(parts: readonly StepMeasurement[]): number | null {
  const pairs = parts.map((p) => ({
    n: p.transactionsProcessed,
    mean: p.latencyAvgMs,
    sd: p.latencyStddevMs,
  }));
  if (pairs.some((p) => p.n === null || p.mean === null || p.sd === null)) return null;
  const total = pairs.reduce((a, p) => a + (p.n as number), 0);
  if (total <= 0) return null;
  const mean = pairs.reduce((a, p) => a + (p.n as number) * (p.mean as number), 0) / total;
  const secondMoment =
    pairs.reduce((a, p) => a + (p.n as number) * ((p.sd as number) ** 2 + (p.mean as number) ** 2), 0) /
    total;
  return Math.sqrt(Math.max(0, secondMoment - mean ** 2));
}

export function mergeSeries(lists: ReadonlyArray<readonly SeriesPoint[] | null>): SeriesPoint[] | null {
  const known = lists.filter((l): l is readonly SeriesPoint[] => l !== null);
  if (known.length === 0) return null;
  const byT = new Map<number, SeriesPoint[]>();
  for (const list of known) for (const p of list) byT.set(p.t, [...(byT.get(p.t) ?? []), p]);
  return [...byT.keys()]
    .sort((a, b) => a - b)
    .map((t) => {
      const pts = byT.get(t) as SeriesPoint[];
      return {
        t,
        transactions: pts.reduce((a, p) => a + p.transactions, 0),
        latencyAvgMs: weightedMean(pts.map((p) => ({ value: p.latencyAvgMs, weight: p.transactions }))),
        latencyMaxMs: maxOrNull(pts.map((p) => p.latencyMaxMs)),
        lagAvgMs: weightedMean(pts.map((p) => ({ value: p.lagAvgMs, weight: p.transactions }))),
        skipped: sumOrNull(pts.map((p) => p.skipped)),
      };
    });
}

/**
 * Merge the measurements of the runners that ran a step into one. Parts whose result is null
 * (the runner sat the step out, or pgbench did not run) are ignored; null when none ran.
 */
export function mergeParts(parts: readonly RunnerPart[]): StepMeasurement | null {
  const ran = parts.filter((p) => p.result !== null && p.clients > 0).map((p) => p.result as StepMeasurement);
  if (ran.length === 0) return null;
  if (ran.length === 1) return ran[0] as StepMeasurement;
  const tx = ran.map((r) => r.transactionsProcessed);
  return {
    pgbenchVersion: sameOrNull(ran.map((r) => r.pgbenchVersion)),
    serverVersion: sameOrNull(ran.map((r) => r.serverVersion)),
    transactionType: sameOrNull(ran.map((r) => r.transactionType)),
    protocol: sameOrNull(ran.map((r) => r.protocol)),
    clients: sumOrNull(ran.map((r) => r.clients)),
    threads: sumOrNull(ran.map((r) => r.threads)),
    durationSec: maxOrNull(ran.map((r) => r.durationSec)),
    transactionsProcessed: sumOrNull(tx),
    transactionsExpected: sumOrNull(ran.map((r) => r.transactionsExpected)),
    failedTransactions: sumOrNull(ran.map((r) => r.failedTransactions)),
    tps: sumOrNull(ran.map((r) => r.tps)),
    tpsMode: sameOrNull(ran.map((r) => r.tpsMode)),
    latencyAvgMs: weightedMean(ran.map((r) => ({ value: r.latencyAvgMs, weight: r.transactionsProcessed }))),
    latencyStddevMs: pooledStddev(ran),
    initialConnectionMs: weightedMean(ran.map((r) => ({ value: r.initialConnectionMs, weight: r.clients }))),
    avgConnectionMs: weightedMean(
      ran.map((r) => ({ value: r.avgConnectionMs, weight: r.transactionsProcessed })),
    ),
    scheduleLagAvgMs: weightedMean(
      ran.map((r) => ({ value: r.scheduleLagAvgMs, weight: r.transactionsProcessed })),
    ),
    abortedClients: ran.reduce((a, r) => a + r.abortedClients, 0),
    abortedWhileConnecting: ran.reduce((a, r) => a + r.abortedWhileConnecting, 0),
    complete: ran.every((r) => r.complete),
    exitCode: ran.some((r) => r.exitCode === null) ? null : Math.max(...ran.map((r) => r.exitCode as number)),
    errors: mergeErrors(ran.map((r) => r.errors)),
    latencyP50Ms: maxOrNull(ran.map((r) => r.latencyP50Ms)),
    latencyP95Ms: maxOrNull(ran.map((r) => r.latencyP95Ms)),
    latencyP99Ms: maxOrNull(ran.map((r) => r.latencyP99Ms)),
    series: mergeSeries(ran.map((r) => r.series)),
  };
}

/**
 * The verdict a runner's part of a step carries: none. A share (30 of 60 clients) is a measurement
 * of part of the step, not the step; only the merged record is judged, once, by runner 0.
 */
export const PART_NOT_JUDGED: Verdict = {
  expected: "not judged: one runner's share of the step (the merged record is judged)",
  observed: 'not judged',
  held: null,
};

/**
 * What a runner submits as its part: its engine's record of the share, with the share's clients,
 * jobs and rate, the agreed start, and no verdict (PART_NOT_JUDGED) whatever its engine concluded.
 */
export function partRecord(record: StepRecord, share: RunnerShare, startAt: Date | null): StepRecord {
  return {
    ...record,
    ...(startAt ? { startedAt: startAt.toISOString() } : {}),
    params: { ...record.params, clients: share.clients, jobs: share.jobs, rate: share.rate },
    verdict: PART_NOT_JUDGED,
  };
}

/** One runner's record of a step (what its engine wrote), with the CPU it measured. */
export interface RunnerStepRecord {
  readonly runnerIndex: number;
  readonly record: StepRecord;
  readonly cpuMaxPercent: number | null;
  /** Raw files of this runner's share. */
  readonly raw: { readonly stdout: string; readonly stderr: string; readonly log: string | null };
}

export function runnerId(index: number): string {
  return `runner-${index}`;
}

/**
 * Merge the runners' records of one step into the step's record: `result` from mergeParts,
 * params with the full clients/jobs, `parts` kept, `loadGeneratorSaturated` when any runner was
 * (by its own judgement or its CPU), the earliest start and latest end. The verdict is the one
 * `judge` gives for the merged measurement — the only judgement of the step (parts carry none).
 */
export function mergeStepRecords(
  records: readonly RunnerStepRecord[],
  options: {
    readonly judge: (record: StepRecord) => StepRecord['verdict'];
    /** Flag a runner whose cpuMaxPercent reached this (the engine uses 90). @default only the parts' own flags */
    readonly cpuSaturationPercent?: number;
  },
): StepRecord {
  if (records.length === 0) throw new RangeError('mergeStepRecords needs at least one record');
  const sorted = [...records].sort((a, b) => a.runnerIndex - b.runnerIndex);
  const first = (sorted[0] as RunnerStepRecord).record;
  const threshold = options.cpuSaturationPercent ?? null;
  const parts: RunnerPart[] = sorted.map((r) => ({
    runnerId: runnerId(r.runnerIndex),
    clients: r.record.params.clients,
    jobs: r.record.params.jobs,
    result: r.record.result,
    cpuMaxPercent: r.cpuMaxPercent,
  }));
  const result = mergeParts(parts);
  const saturatedReasons: string[] = [];
  for (const r of sorted) {
    if (r.record.loadGeneratorSaturated) {
      saturatedReasons.push(`${runnerId(r.runnerIndex)}: ${r.record.saturationReason ?? 'saturated'}`);
    } else if (threshold !== null && r.cpuMaxPercent !== null && r.cpuMaxPercent >= threshold) {
      saturatedReasons.push(
        `${runnerId(r.runnerIndex)}: CPU ${r.cpuMaxPercent.toFixed(0)} % ≥ ${threshold} %`,
      );
    }
  }
  const statuses = sorted.map((r) => r.record.status);
  // One runner's infrastructure failure makes the merged step unmeasured (a resume measures it again).
  const status = statuses.includes('infrastructure-error')
    ? 'infrastructure-error'
    : statuses.includes('hung')
      ? 'hung'
      : statuses.includes('timeout')
        ? 'timeout'
        : statuses.every((s) => s === 'not-available')
          ? 'not-available'
          : 'completed';
  const startedAt = sorted.map((r) => r.record.startedAt).sort()[0] as string;
  const endedAt = sorted
    .map((r) => r.record.endedAt)
    .sort()
    .at(-1) as string;
  // An unmeasured step says why first: each failing runner's cause (runner 0's own note may say nothing of it).
  const causes =
    status === 'infrastructure-error' && sorted.length > 1
      ? sorted
          .filter(
            (r) => r.record.status === 'infrastructure-error' && r.runnerIndex !== sorted[0]?.runnerIndex,
          )
          .map(
            (r) => `${runnerId(r.runnerIndex)}: ${r.record.note ?? 'infrastructure failure, cause unknown'}`,
          )
      : [];
  const noteParts = [...causes, first.note, sorted.length > 1 ? PERCENTILE_MERGE_NOTE : undefined].filter(
    (n): n is string => typeof n === 'string' && n.length > 0,
  );
  const merged: StepRecord = {
    ...first,
    params: {
      ...first.params,
      clients: sorted.reduce((a, r) => a + r.record.params.clients, 0),
      jobs: sorted.reduce((a, r) => a + r.record.params.jobs, 0),
      rate: first.params.rate === null ? null : sumOrNull(sorted.map((r) => r.record.params.rate)),
    },
    startedAt,
    endedAt,
    status,
    result,
    loadGeneratorSaturated: saturatedReasons.length > 0,
    saturationReason: saturatedReasons.length > 0 ? saturatedReasons.join('; ') : null,
    // A dedicated pooler is judged by runner 0 alone; co-located ones by each runner for its own.
    poolerSaturated: mergePoolerSaturated(sorted.map((r) => r.record.poolerSaturated ?? null)),
    parts,
    ...(noteParts.length > 0 ? { note: noteParts.join('; ') } : {}),
  };
  return { ...merged, verdict: options.judge(merged) };
}

/** Any runner's pooler saturated → true; none measured → null; else false. */
function mergePoolerSaturated(flags: ReadonlyArray<boolean | null>): boolean | null {
  if (flags.includes(true)) return true;
  return flags.includes(false) ? false : null;
}

/** Concatenate the runners' raw files, each under a header naming the runner. */
export function mergeRawFiles(records: readonly RunnerStepRecord[]): {
  stdout: string;
  stderr: string;
  log: string | null;
} {
  const sorted = [...records].sort((a, b) => a.runnerIndex - b.runnerIndex);
  const join = (pick: (r: RunnerStepRecord) => string | null): string =>
    sorted
      .map((r) => ({ id: runnerId(r.runnerIndex), text: pick(r) }))
      .filter((x) => x.text !== null)
      .map((x) => `### ${x.id}\n${x.text as string}`)
      .join('\n');
  const hasLog = sorted.some((r) => r.raw.log !== null);
  return {
    stdout: join((r) => r.raw.stdout),
    stderr: join((r) => r.raw.stderr),
    log: hasLog ? join((r) => r.raw.log) : null,
  };
}
