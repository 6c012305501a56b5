/**
 * RDS's own events of a disruption group, read after the window (lib/runner/disruptions.ts):
 * DescribeEvents of each source (the cluster, each instance, each proxy) from the group's start, on
 * the run's clock (RDS stamps each event's `Date`).
 *
 * RDS publishes events late, by an amount AWS does not state (EventBridge's RDS events are "Delivery
 * type: Best effort", EventBridge events reference, Amazon RDS): a single read right after the
 * database is `available` again can miss the last ones. So the sources are read again after a delay
 * until two reads in a row agree, at most `reads` times; when they never agree, or a source cannot be
 * read, the group's timeline carries a note saying it may be incomplete. Every event seen in any
 * read is kept (a later read never takes one back).
 *
 * botocore's model (rds 2014-10-31, DescribeEventsMessage): "If SourceIdentifier is supplied,
 * SourceType must also be provided"; StartTime/EndTime bound the interval; MaxRecords 20–100.
 */
import { paginateDescribeEvents, type Event, type RDSClient, type SourceType } from '@aws-sdk/client-rds';
import type { EventSink } from '../exec/disruption-probe';

/** Reads of a group's events at most (the first, then until two in a row agree). */
export const RDS_EVENT_READS = 4;
/** Between two reads: RDS's events are late by seconds to tens of seconds. */
export const RDS_EVENT_READ_DELAY_MS = 30_000;

/** One event source: its DescribeEvents SourceType and identifier. */
export type RdsEventSource = readonly [SourceType, string];

export interface RdsEventReading {
  readonly rds: RDSClient;
  /** The run's wall clock, and its sleep (tests pass a fake one). */
  readonly now: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  /** At most this many reads; at least 2 (one read cannot agree with anything). @default RDS_EVENT_READS */
  readonly reads?: number;
  /** Between two reads. @default RDS_EVENT_READ_DELAY_MS */
  readonly delayMs?: number;
}

type SourceRead = { readonly events: readonly Event[] } | { readonly error: string };

/**
 * Reads the events of `sources` since `since` until two reads in a row agree (or `reads` are done),
 * then says each event once, source by source, in the order first seen. Returns why the timeline may
 * be incomplete, or null when the last two reads agreed and every source could be read.
 */
export async function readRdsEventsUntilStable(
  o: RdsEventReading,
  sources: readonly RdsEventSource[],
  since: Date,
  event: EventSink,
): Promise<string | null> {
  if (sources.length === 0) return null;
  const reads = Math.max(2, Math.floor(o.reads ?? RDS_EVENT_READS));
  const delayMs = o.delayMs ?? RDS_EVENT_READ_DELAY_MS;
  const seen = sources.map(() => new Map<string, Event>());
  let last: SourceRead[] = [];
  let previous: string | null = null;
  let agreed = false;
  let done = 0;
  while (done < reads && !agreed) {
    if (done > 0) await o.sleep(delayMs);
    const end = o.now();
    last = [];
    for (const source of sources) last.push(await readSource(o.rds, source, since, end));
    done++;
    last.forEach((r, i) => {
      if ('events' in r) for (const e of r.events) seen[i]?.set(eventKey(e), e);
    });
    const fingerprint = fingerprintOf(last);
    agreed = fingerprint === previous;
    previous = fingerprint;
  }
  sources.forEach(([type, id], i) => {
    for (const e of seen[i]?.values() ?? [])
      event(
        e.Message ?? '(no message)',
        'rds-events',
        `${type} ${id}${e.EventCategories?.length ? ` [${e.EventCategories.join(', ')}]` : ''}`,
        e.Date,
      );
    const r = last[i];
    if (r !== undefined && 'error' in r)
      event('events-unreadable', 'rds-events', `${type} ${id}: ${r.error}`);
  });
  const unreadable = sources.filter((_s, i) => {
    const r = last[i];
    return r !== undefined && 'error' in r;
  });
  const why = [
    ...(agreed
      ? []
      : [
          `RDS events still arriving after ${done} reads ${Math.round(delayMs / 1000)} s apart (the last two differ)`,
        ]),
    ...(unreadable.length > 0
      ? [`RDS events unreadable for ${unreadable.map(([t, id]) => `${t} ${id}`).join(', ')}`]
      : []),
  ];
  return why.length > 0 ? `timeline may be incomplete: ${why.join('; ')}` : null;
}

async function readSource(
  rds: RDSClient,
  [type, id]: RdsEventSource,
  since: Date,
  end: Date,
): Promise<SourceRead> {
  try {
    const events: Event[] = [];
    for await (const page of paginateDescribeEvents(
      { client: rds, pageSize: 100 },
      { SourceType: type, SourceIdentifier: id, StartTime: since, EndTime: end },
    ))
      for (const e of page.Events ?? [])
        // (the window again on this side: a server that ignores StartTime adds nothing older)
        if (e.Date && e.Date.getTime() >= since.getTime()) events.push(e);
    return { events };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** An event within its source: when and what (RDS gives events no id). */
function eventKey(e: Event): string {
  return `${e.Date?.toISOString() ?? '?'}\u0000${e.Message ?? ''}`;
}

/** What a read saw, order aside: two reads agree when their fingerprints are equal. */
function fingerprintOf(read: readonly SourceRead[]): string {
  return JSON.stringify(
    read.map((r) => ('events' in r ? r.events.map(eventKey).sort() : { error: r.error })),
  );
}
