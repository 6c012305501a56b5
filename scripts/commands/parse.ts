/**
 * `proxylab parse`: the pgbench parser on saved output. Prints one JSON object (ParsedRun plus
 * latency percentiles, series and consistency warnings). Inputs are read with bounds (regular
 * files only, at most READ_LIMITS.capture each), and input in which nothing is pgbench output is
 * refused (exit 2) rather than printed as an all-unknown result that looks like a parse.
 */
import * as path from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../lib/core/errors';
import { readTextFile } from '../../lib/core/read';
import { detectLogKind, parseAggregateLogs, parseTransactionLogs } from '../../lib/suite/logs';
import { checkConsistency, parsePgbench, type PgbenchCapture } from '../../lib/suite/parser';
import type { ParsedRun, SeriesPoint } from '../../lib/suite/types';

interface ParseFlags {
  readonly stdout?: string;
  readonly stderr?: string;
  readonly exitCode?: string;
  readonly timedOut?: boolean;
  readonly log?: string[];
  readonly samplingRate?: string;
}

function readInput(file: string, what: string): string {
  const resolved = path.resolve(file);
  try {
    return readTextFile(resolved, 'capture');
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`${what}: ${err.message}`, { code: err.code });
    throw err;
  }
}

/**
 * Nothing pgbench prints was found: no version, summary, latency, progress or error line. (The
 * exit code and the timeout flag come from the flags, not from the capture.)
 */
export function recognisedNothing(run: ParsedRun): boolean {
  const valueFields: ReadonlyArray<keyof ParsedRun> = [
    'pgbenchVersion',
    'serverVersion',
    'transactionType',
    'protocol',
    'clients',
    'threads',
    'durationSec',
    'transactionsProcessed',
    'transactionsExpected',
    'failedTransactions',
    'tps',
    'latencyAvgMs',
    'latencyStddevMs',
    'initialConnectionMs',
    'avgConnectionMs',
    'scheduleLagAvgMs',
    'transactionsPerClient',
    'progress',
  ];
  return (
    valueFields.every((k) => run[k] === null || run[k] === undefined) &&
    run.errors.length === 0 &&
    run.abortedClients === 0 &&
    !run.complete
  );
}

function parseExitCode(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^\d+$/.test(value))
    throw new UsageError(`--exit-code must be a non-negative integer, got "${value}"`);
  return Number(value);
}

function buildCapture(file: string | undefined, flags: ParseFlags): PgbenchCapture {
  const exitCode = parseExitCode(flags.exitCode);
  const timedOut = flags.timedOut === true;
  const split = flags.stdout !== undefined || flags.stderr !== undefined;
  if (file !== undefined && split)
    throw new UsageError('give either FILE (a combined capture) or --stdout/--stderr, not both');
  if (file !== undefined) return { combined: readInput(file, 'capture'), exitCode, timedOut };
  if (!split)
    throw new UsageError(
      'nothing to parse: give FILE (a combined capture) or --stdout F --stderr F [--exit-code N]',
    );
  return {
    stdout: flags.stdout !== undefined ? readInput(flags.stdout, '--stdout') : '',
    stderr: flags.stderr !== undefined ? readInput(flags.stderr, '--stderr') : '',
    exitCode,
    timedOut,
  };
}

function summarizeLogs(
  files: readonly string[],
  samplingRate: number | null,
  throttled: boolean,
): {
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  latencyP99Ms: number | null;
  series: SeriesPoint[] | null;
  logKind: string | null;
} {
  if (files.length === 0)
    return { latencyP50Ms: null, latencyP95Ms: null, latencyP99Ms: null, series: null, logKind: null };
  const contents = files.map((f) => readInput(f, '--log'));
  const kinds = new Set(contents.map(detectLogKind));
  if (kinds.has('unknown')) {
    const bad = files.filter((_, i) => detectLogKind(contents[i] ?? '') === 'unknown');
    throw new UsageError(`not a pgbench log (per-transaction or aggregate): ${bad.join(', ')}`);
  }
  if (kinds.size > 1)
    throw new UsageError('--log files mix per-transaction and aggregate logs; give one kind');
  if (kinds.has('aggregate')) return { ...parseAggregateLogs(contents, { throttled }), logKind: 'aggregate' };
  const r = parseTransactionLogs(contents, { samplingRate });
  return {
    latencyP50Ms: r.latencyP50Ms,
    latencyP95Ms: r.latencyP95Ms,
    latencyP99Ms: r.latencyP99Ms,
    series: r.series,
    logKind: 'per-transaction',
  };
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export function register(program: Command): void {
  program
    .command('parse')
    .description(
      'Parse saved pgbench output (pgbench 14–17) and print one JSON object: versions, clients, tps, ' +
        'latency, connection times, schedule lag, aborted clients, complete, errors by class ' +
        '(server-stopped, too-many-connections, prepared-statement-exists, prepared-statement-missing, portal-missing, ' +
        'backend-died, connection-failed, auth-failed, transaction-aborted, timeout, other) with a count and a ' +
        'sample line, and with --log the latency p50/p95/p99 and per-second series. Unknown values are null.\n\n' +
        'Exit codes: 0 parsed, 2 missing or unreadable file (a device, FIFO or file over 512 MiB), input with no ' +
        'pgbench output in it, or bad arguments.',
    )
    .argument('[file]', 'one combined terminal capture (stdout and stderr interleaved, as write-ups show it)')
    .option('--stdout <file>', 'pgbench stdout, kept apart from stderr')
    .option('--stderr <file>', 'pgbench stderr (errors and --progress lines)')
    .option(
      '--exit-code <n>',
      'pgbench exit code (0 ran, 1 failed at start-up, 2 errors during the run); unknown if omitted',
    )
    .option('--timed-out', 'pgbench was killed by a harness timeout (adds a timeout error, never complete)')
    .option(
      '--log <file>',
      'pgbench log file, per-transaction (--log) or aggregate (--aggregate-interval); repeat for each thread file, they are merged',
      collect,
    )
    .option(
      '--sampling-rate <r>',
      'the --sampling-rate the per-transaction logs were written with (series counts scale by 1/r)',
    )
    .action((file: string | undefined, flags: ParseFlags) => {
      let samplingRate: number | null = null;
      if (flags.samplingRate !== undefined) {
        samplingRate = Number(flags.samplingRate);
        if (!(samplingRate > 0 && samplingRate <= 1))
          throw new UsageError(`--sampling-rate must be in (0, 1], got "${flags.samplingRate}"`);
      }
      const run = parsePgbench(buildCapture(file, flags));
      if (recognisedNothing(run)) {
        const inputs = file !== undefined ? file : [flags.stdout, flags.stderr].filter(Boolean).join(' and ');
        throw new UsageError(
          `nothing in ${inputs} is pgbench output (no version, summary, latency, progress or error line); ` +
            'give the saved stdout/stderr of a pgbench run',
          { code: 'not-pgbench-output' },
        );
      }
      // pgbench prints `rate limit schedule lag` exactly when --rate was used; pg15+ aggregate logs
      // carry zero lag fields otherwise, which must not read as "no lag".
      const logs = summarizeLogs(flags.log ?? [], samplingRate, run.scheduleLagAvgMs !== null);
      const out = { ...run, ...logs, warnings: checkConsistency(run) };
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    });
}
