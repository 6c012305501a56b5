/**
 * pgbench output parser (pure): reads what pgbench 14–17 printed and reports it. Never invents:
 * a value the output did not state is `null`.
 *
 * Input is either stdout, stderr and exit code kept apart (what a harness sees) or one combined
 * terminal capture (what published write-ups show, no exit code).
 *
 * Error counting works on *segments*, not lines: two threads can write into the same physical line
 * (`pgbench: error: pgbench: error: ERROR: …`), so each line is cut before every `pgbench:` and
 * each segment is classified on its own. A segment is an error occurrence when it carries an error
 * marker (`error:`, `fatal:`, `ERROR:`, `FATAL:`, `PANIC:`) or a known error text, and is not a
 * libpq continuation line (those start with a tab: `\tThis probably means the server terminated…`).
 * Lines with neither (e.g. the libkrb5 `krb5int_getspecific: Assertion … failed` noise seen when
 * connections are refused) are ignored: they are not pgbench errors and say nothing the exit code
 * and the real error lines do not already say.
 *
 * Bookkeeping lines are not errors in themselves: `Run was aborted; the above results are
 * incomplete.`, `client N aborted while establishing connection`, `could not create connection for
 * client N` (the connection error itself was printed just before). They drive `complete` and the
 * aborted-client counts.
 */
import { SERVER_STOP_MESSAGES, SERVER_STOPPED } from './server-stop';
import type { ErrorClass, ErrorSummary, ParsedRun, ProgressPoint, Protocol } from './types';

export type PgbenchCapture =
  | {
      readonly stdout: string;
      readonly stderr: string;
      readonly exitCode: number | null;
      readonly timedOut?: boolean;
    }
  | { readonly combined: string; readonly exitCode?: number | null; readonly timedOut?: boolean };

/** Substrings per class, tried in this order; the first class that matches a segment wins. */
export const ERROR_PATTERNS: ReadonlyArray<{
  readonly class: ErrorClass;
  readonly patterns: readonly RegExp[];
}> = [
  // First: a shutdown seen at connect time reads `connection to server … failed: FATAL:  the database
  // system is shutting down`, which is not a connection-failed measurement.
  { class: SERVER_STOPPED, patterns: SERVER_STOP_MESSAGES.map((m) => m.pattern) },
  {
    class: 'too-many-connections',
    patterns: [
      /remaining connection slots are reserved/i,
      /sorry, too many clients already/i,
      /too many connections/i,
      /no more connections allowed/i, // PgBouncer max_client_conn
    ],
  },
  {
    class: 'auth-failed',
    patterns: [
      /password authentication failed/i,
      /no pg_hba\.conf entry/i,
      /SASL authentication failed/i,
      /fe_sendauth: no password supplied/i,
    ],
  },
  { class: 'portal-missing', patterns: [/portal "[^"]*" does not exist/i] },
  { class: 'prepared-statement-exists', patterns: [/prepared statement "[^"]*" already exists/i] },
  { class: 'prepared-statement-missing', patterns: [/prepared statement "[^"]*" does not exist/i] },
  {
    class: 'backend-died',
    patterns: [
      /server closed the connection unexpectedly/i,
      /perhaps the backend died/i,
      /terminated abnormally/i,
      /lost synchronization with server/i,
      /server conn crashed/i,
      /connection to server was lost/i,
      /could not receive data from server/i,
      /SSL SYSCALL error: EOF detected/i,
    ],
  },
  { class: 'transaction-aborted', patterns: [/current transaction is aborted/i] },
  // SQLSTATE 25006 read_only_sql_transaction: `cannot execute INSERT in a read-only transaction`.
  { class: 'read-only', patterns: [/in a read-only transaction/i] },
  {
    class: 'connection-failed',
    patterns: [
      /connection to server .* failed/i,
      /could not connect/i,
      /could not translate host name/i,
      /Connection refused/i,
      /Connection timed out/i,
      /timeout expired/i,
    ],
  },
];

/** The classes no substring decides, in words (docs/suite.md's class table is generated from these and ERROR_PATTERNS). */
export const CLASSES_WITHOUT_PATTERNS: Readonly<Record<'timeout' | 'other', string>> = {
  timeout: 'the harness killed pgbench (`timedOut: true` in the input)',
  other:
    'any other line with an error marker (`error:`, `fatal:`, `ERROR:`, `FATAL:`, `PANIC:`) or a client abort; lines with neither (libkrb5 assertions…) are ignored',
};

/** Classes that mean "this client never got (or lost) its connection at connect time". */
const CONNECT_CLASSES: ReadonlySet<ErrorClass> = new Set<ErrorClass>([
  'too-many-connections',
  'auth-failed',
  'connection-failed',
]);

/** A connection attempt that failed (whatever the class of the reason the server gave). */
const CONNECT_ATTEMPT_FAILED = /connection to server .* failed/i;
const ERROR_MARKER = /(?:^|\s|:)(?:error|fatal):|\b(?:ERROR|FATAL|PANIC):/;
const RUN_ABORTED = /Run was aborted; the above results are incomplete/;
const ABORTED_CONNECTING = /client (\d+) aborted while establishing connection/;
const COULD_NOT_CREATE = /could not create connection for client (\d+)/;
/** `client N aborted in command…` (pg14), `client N script S aborted in command…` (pg15+), `client N aborted: end of script…`. */
const ABORTED_ANY = /client (\d+) (?:script \d+ )?aborted/;
const PROGRESS = /^progress: ([\d.]+) s, (\S+) tps, lat (\S+) ms stddev (\S+)(.*)$/;

function num(s: string | undefined): number | null {
  if (s === undefined) return null;
  const v = Number(s);
  return Number.isFinite(v) ? v : null;
}

function firstMatch(lines: readonly string[], re: RegExp): RegExpMatchArray | null {
  for (const line of lines) {
    const m = line.match(re);
    if (m) return m;
  }
  return null;
}

/** Cut a physical line before every `pgbench:` so jumbled output from two threads is seen twice. */
function splitSegments(line: string): string[] {
  const parts = line.split(/(?=pgbench:)/).map((s) => s.replace(/\r$/, ''));
  return parts.filter((p) => p.trim() !== '' && p.trim() !== 'pgbench:');
}

/** The error class of one segment, or null when the segment is not an error occurrence. */
export function classifySegment(segment: string): ErrorClass | null {
  if (/^\s*progress: /.test(segment) || /^pgbench: progress: /.test(segment)) return null;
  if (RUN_ABORTED.test(segment) || COULD_NOT_CREATE.test(segment) || ABORTED_CONNECTING.test(segment))
    return null;
  if (/^\t/.test(segment)) return null; // libpq continuation line of the previous message
  // `pgbench: error: ` with nothing after it: another thread interrupted it and the message went
  // on in a later line, where it is counted.
  if (/^pgbench:\s*(?:(?:error|fatal|warning|log|detail|hint):\s*)*$/i.test(segment.trim())) return null;
  for (const { class: cls, patterns } of ERROR_PATTERNS) {
    if (patterns.some((p) => p.test(segment))) return cls;
  }
  if (ERROR_MARKER.test(segment) || ABORTED_ANY.test(segment)) return 'other';
  return null;
}

function parseProgress(line: string): ProgressPoint | null {
  const m = line.match(PROGRESS);
  if (!m) return null;
  const rest = m[5] ?? '';
  const lag = rest.match(/lag (\S+) ms/);
  const failed = rest.match(/(\d+) failed/);
  const skipped = rest.match(/(\d+) skipped/);
  return {
    elapsedSec: Number(m[1]),
    tps: num(m[2]),
    latencyAvgMs: num(m[3]),
    latencyStddevMs: num(m[4]?.replace(/,$/, '')),
    lagAvgMs: lag ? num(lag[1]) : null,
    failed: failed ? num(failed[1]) : null,
    skipped: skipped ? num(skipped[1]) : null,
  };
}

/** The figures of the summary pgbench prints at the end (stdout), in ParsedRun's order. */
type SummaryFields = Pick<
  ParsedRun,
  | 'pgbenchVersion'
  | 'serverVersion'
  | 'transactionType'
  | 'protocol'
  | 'clients'
  | 'threads'
  | 'durationSec'
  | 'transactionsProcessed'
  | 'transactionsExpected'
  | 'failedTransactions'
  | 'tps'
  | 'tpsMode'
  | 'latencyAvgMs'
  | 'latencyStddevMs'
  | 'initialConnectionMs'
  | 'avgConnectionMs'
  | 'scheduleLagAvgMs'
>;

/**
 * tps: pg14+ prints one line; pg13 and older print `including` and `excluding connections
 * establishing` — then the `excluding` figure is kept (it matches pg14+'s default mode).
 */
function readTps(lines: readonly string[]): Pick<ParsedRun, 'tps' | 'tpsMode'> {
  let tps: number | null = null;
  let tpsMode: ParsedRun['tpsMode'] = null;
  for (const line of lines) {
    const m = line.match(/^tps = ([\d.]+) \((.+)\)\s*$/);
    if (!m) continue;
    const wording = m[2] ?? '';
    const modeOfLine: ParsedRun['tpsMode'] =
      /without initial connection time|excluding connections establishing/.test(wording)
        ? 'excluding-connections'
        : /including reconnection times|including connections establishing/.test(wording)
          ? 'including-connections'
          : null;
    if (tps === null || modeOfLine === 'excluding-connections') {
      tps = num(m[1]);
      tpsMode = modeOfLine;
    }
  }
  return { tps, tpsMode };
}

/** Header and summary (stdout; anchored at line start so per-script blocks don't match). */
function readSummary(lines: readonly string[]): {
  summary: SummaryFields;
  transactionsPerClient: number | null;
} {
  const version = firstMatch(
    lines,
    /^pgbench \((\d+(?:\.\d+)?)(?:[^,]*?)(?:, server (\d+(?:\.\d+)?)[^)]*)?\)\s*$/,
  );
  const txType = firstMatch(lines, /^transaction type: (.+)$/);
  const mode = firstMatch(lines, /^query mode: (simple|extended|prepared)\s*$/);
  const clients = firstMatch(lines, /^number of clients: (\d+)/);
  const threads = firstMatch(lines, /^number of threads: (\d+)/);
  const duration = firstMatch(lines, /^duration: (\d+) s/);
  const perClient = firstMatch(lines, /^number of transactions per client: (\d+)/);
  const processed = firstMatch(lines, /^number of transactions actually processed: (\d+)(?:\/(\d+))?/);
  const failed = firstMatch(lines, /^number of failed transactions: (\d+)/);
  const latAvg = firstMatch(lines, /^latency average = ([\d.]+) ms/);
  const latStd = firstMatch(lines, /^latency stddev = ([\d.]+) ms/);
  const initConn = firstMatch(lines, /^initial connection time = ([\d.]+) ms/);
  const avgConn = firstMatch(lines, /^average connection time = ([\d.]+) ms/);
  const lag = firstMatch(lines, /^rate limit schedule lag: avg ([\d.]+)/);
  const { tps, tpsMode } = readTps(lines);

  const clientsN = clients ? Number(clients[1]) : null;
  const perClientN = perClient ? Number(perClient[1]) : null;
  let transactionsExpected: number | null = null;
  if (processed?.[2] !== undefined) transactionsExpected = Number(processed[2]);
  else if (perClientN !== null && clientsN !== null) transactionsExpected = perClientN * clientsN;

  const summary: SummaryFields = {
    pgbenchVersion: version?.[1] ?? null,
    // pgbench prints `, server X` whenever the server's version number differs from its own, so a
    // header without it means the server runs the same version.
    serverVersion: version?.[2] ?? version?.[1] ?? null,
    transactionType: txType?.[1]?.trim() ?? null,
    protocol: (mode?.[1] as Protocol | undefined) ?? null,
    clients: clientsN,
    threads: threads ? Number(threads[1]) : null,
    durationSec: duration ? Number(duration[1]) : null,
    transactionsProcessed: processed ? Number(processed[1]) : null,
    transactionsExpected,
    failedTransactions: failed ? Number(failed[1]) : null,
    tps,
    tpsMode,
    latencyAvgMs: latAvg ? num(latAvg[1]) : null,
    latencyStddevMs: latStd ? num(latStd[1]) : null,
    initialConnectionMs: initConn ? num(initConn[1]) : null,
    avgConnectionMs: avgConn ? num(avgConn[1]) : null,
    scheduleLagAvgMs: lag ? num(lag[1]) : null,
  };
  return { summary, transactionsPerClient: perClientN };
}

/** What the error, abort and progress lines (any stream) say. */
interface ErrorLines {
  readonly errors: ErrorSummary[];
  readonly abortedClients: number;
  readonly abortedWhileConnecting: number;
  readonly runAborted: boolean;
  readonly progress: ProgressPoint[];
}

/** Errors, aborted clients, progress (any stream), segment by segment. */
function readErrorLines(lines: readonly string[], timedOut: boolean): ErrorLines {
  const counts = new Map<ErrorClass, { count: number; sample: string }>();
  const note = (cls: ErrorClass, sample: string): void => {
    const cur = counts.get(cls);
    if (!cur) counts.set(cls, { count: 1, sample: sample.trim() });
    else {
      cur.count += 1;
      // prefer a whole `pgbench: …` line over a fragment of a jumbled one as the sample
      if (!cur.sample.startsWith('pgbench:') && sample.trim().startsWith('pgbench:'))
        cur.sample = sample.trim();
    }
  };
  const abortedInCommand = new Set<string>();
  const abortedConnecting = new Set<string>();
  let connectErrors = 0;
  let runAborted = false;
  const progress: ProgressPoint[] = [];

  for (const line of lines) {
    for (const seg of splitSegments(line)) {
      // a progress line may stand alone, or be glued before/after another thread's error text
      const at = seg.search(/progress: [\d.]+ s, /);
      let errorPart = seg;
      if (at >= 0) {
        const gp = parseProgress(seg.slice(at));
        if (gp) {
          progress.push(gp);
          errorPart = seg.slice(0, at);
          if (errorPart.trim() === '') continue;
        }
      }
      if (RUN_ABORTED.test(errorPart)) runAborted = true;
      const conn = errorPart.match(ABORTED_CONNECTING) ?? errorPart.match(COULD_NOT_CREATE);
      if (conn?.[1] !== undefined) abortedConnecting.add(conn[1]);
      const cmd = errorPart.match(ABORTED_ANY);
      if (cmd?.[1] !== undefined) abortedInCommand.add(cmd[1]);
      const cls = classifySegment(errorPart);
      if (cls === null) continue;
      note(cls, errorPart);
      if (CONNECT_CLASSES.has(cls) || (cls === SERVER_STOPPED && CONNECT_ATTEMPT_FAILED.test(errorPart)))
        connectErrors += 1;
    }
  }
  if (timedOut) note('timeout', 'pgbench was killed by the harness after its time limit');

  // pgbench 14 aborts a whole thread on a failed initial connection without naming a client:
  // each connection error not followed by a `client N …` line still cost at least one client.
  const abortedWhileConnecting = Math.max(abortedConnecting.size, connectErrors);
  const abortedClients =
    abortedWhileConnecting + [...abortedInCommand].filter((id) => !abortedConnecting.has(id)).length;

  const order: readonly ErrorClass[] = [...ERROR_PATTERNS.map((e) => e.class), 'timeout', 'other'];
  const errors: ErrorSummary[] = order.flatMap((cls) => {
    const c = counts.get(cls);
    return c ? [{ class: cls, count: c.count, sample: c.sample }] : [];
  });
  return { errors, abortedClients, abortedWhileConnecting, runAborted, progress };
}

export function parsePgbench(input: PgbenchCapture): ParsedRun {
  const text = 'combined' in input ? input.combined : `${input.stdout}\n${input.stderr}`;
  const exitCode = input.exitCode ?? null;
  const timedOut = input.timedOut === true;
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));

  const { summary, transactionsPerClient } = readSummary(lines);
  const { errors, abortedClients, abortedWhileConnecting, runAborted, progress } = readErrorLines(
    lines,
    timedOut,
  );

  const hasSummary = summary.tps !== null;
  const complete = hasSummary && !runAborted && !timedOut && (exitCode === null || exitCode === 0);

  return {
    ...summary,
    abortedClients,
    abortedWhileConnecting,
    complete,
    exitCode,
    errors,
    transactionsPerClient,
    progress: progress.length > 0 ? progress : null,
  };
}

/**
 * Consistency checks on what was read (the parser itself reports figures as printed).
 * Returns human-readable warnings; empty when nothing looks off.
 */
export function checkConsistency(run: ParsedRun): string[] {
  const warnings: string[] = [];
  const perClient = run.transactionsPerClient ?? null;
  if (perClient !== null && run.clients !== null) {
    const implied = perClient * run.clients;
    if (run.transactionsExpected !== null && run.transactionsExpected !== implied) {
      warnings.push(
        `clients × transactions per client = ${run.clients} × ${perClient} = ${implied}, but pgbench printed ${run.transactionsExpected} expected transactions`,
      );
    }
    if (run.complete && run.transactionsProcessed !== null && run.transactionsProcessed !== implied) {
      warnings.push(
        `clients × transactions per client = ${implied}, but ${run.transactionsProcessed} transactions were processed`,
      );
    }
  }
  if (run.complete && run.abortedClients > 0)
    warnings.push(`${run.abortedClients} clients aborted although the run looks complete`);
  return warnings;
}

/** Error summaries of several runs (repetitions, fleet parts) as one: counts add, first sample kept, most frequent first. */
export function mergeErrors(lists: ReadonlyArray<readonly ErrorSummary[]>): ErrorSummary[] {
  const byClass = new Map<ErrorClass, { count: number; sample: string }>();
  for (const list of lists) {
    for (const e of list) {
      const seen = byClass.get(e.class);
      if (seen) seen.count += e.count;
      else byClass.set(e.class, { count: e.count, sample: e.sample });
    }
  }
  return [...byClass.entries()]
    .map(([cls, v]) => ({ class: cls, count: v.count, sample: v.sample }))
    .sort((a, b) => b.count - a.count || a.class.localeCompare(b.class));
}
