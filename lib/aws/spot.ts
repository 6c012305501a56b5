/**
 * Spot runners: notice an interruption, record it beside the run, stop the run, and say so in
 * `proxylab status`.
 *
 * A spot runner (lab `runners.spot`) is stopped by EC2 when capacity is reclaimed. Two minutes
 * before, EC2 puts `spot/instance-action` into the instance metadata ("A Spot Instance interruption
 * notice is a warning that is issued two minutes before Amazon EC2 stops or terminates your Spot
 * Instance … We recommend that you check for these interruption notices every 5 seconds"; the item
 * is `{"action": "stop"|"terminate"|"hibernate", "time": "<UTC>"}` and absent (404) until then:
 * EC2 User Guide, spot-instance-termination-notices.html). The runner polls it over IMDSv2 (token
 * PUT, then GET with the token; the runners require IMDSv2), and on the notice it writes the
 * interruption record at once and then stops the run itself: pgbench is stopped, the engine marks
 * the manifest `interrupted`, every finished step is already in S3 (one object per step, written
 * when the step ends) and the step in flight is measured again on resume.
 *
 * It does not wait for the shutdown's SIGTERM: the runner is a child of the SSM agent (started by
 * `proxylab run` through SendCommand), and the agent's systemd unit has `KillMode=process` (as the
 * Systems Manager User Guide's amazon-ssm-agent.service shows), which signals the agent alone; the runner may see nothing until the final SIGKILL, when the
 * network is already down. A SIGTERM or SIGINT that does arrive is still recorded (`signal`).
 * `proxylab run` with the same `--run-id` resumes, on the same runner once EC2 starts it again
 * (persistent request, interruption behaviour `stop`) or on a replacement, and the resumed runner
 * marks the record `resumedAt`.
 *
 * Records live at `runs/<runId>/interruptions/runner-<i>.json` (one per runner slot, the latest
 * interruption); the runner may only PutObject under runs/, so a record is closed, never deleted.
 */
import { z } from 'zod';
import { UsageError } from '../core/errors';
import type { BlobStore } from '../results/blob-store';
import type { Clock } from '../engine/ports';
import { RUN_PATHS } from '../results/run-paths';
import { parseRunFile } from '../results/schemas';

/** How often the notice is polled (the EC2 User Guide recommends every 5 seconds). */
export const SPOT_NOTICE_POLL_MS = 5000;

/** The instance metadata service's default address (IMDSv2). */
export const IMDS_DEFAULT_ENDPOINT = 'http://169.254.169.254';

/** `spot/instance-action`: what EC2 will do and when (UTC), e.g. `{"action":"stop","time":"…Z"}`. */
export interface InstanceAction {
  readonly action: string;
  readonly time: string;
}

export const interruptionRecordSchema = z.object({
  runnerIndex: z.number().int().min(0),
  /** When the runner first knew: the notice, else the signal. */
  interruptedAt: z.string(),
  cause: z.enum(['spot-notice', 'signal']),
  /** The signal that stopped the runner (SIGTERM at shutdown); null while only the notice is known. */
  signal: z.string().nullable(),
  notice: z.object({ action: z.string(), time: z.string() }).nullable(),
  /** The step that was running (it is measured again on resume); null between steps or unknown. */
  stepInFlight: z.string().nullable(),
  /** When a runner resumed the run in this slot; null while the interruption is open. */
  resumedAt: z.string().nullable(),
});

export type InterruptionRecord = z.infer<typeof interruptionRecordSchema>;

/** `interruptions/runner-<i>.json`. */
export function interruptionPath(runnerIndex: number): string {
  return `${RUN_PATHS.interruptionsDir}/runner-${runnerIndex}.json`;
}

/**
 * Every `interruptions/runner-<i>.json`, validated. A record that cannot be read or does not fit its
 * schema is an error naming the file (the runner's resume must not guess) — or, with `skipped`
 * (status: partially bad runs are read, docs/report.md), left out and named there.
 */
export async function readInterruptions(blobs: BlobStore, skipped?: string[]): Promise<InterruptionRecord[]> {
  const keys = (await blobs.list(`${RUN_PATHS.interruptionsDir}/`)).filter((k) => k.endsWith('.json'));
  const out: InterruptionRecord[] = [];
  for (const key of keys) {
    try {
      const text = await blobs.read(key);
      if (text !== null) out.push(parseRunFile(interruptionRecordSchema, blobs.where(key), text));
    } catch (err) {
      if (skipped === undefined || !(err instanceof UsageError)) throw err;
      skipped.push(err.message);
    }
  }
  return out.sort((a, b) => a.runnerIndex - b.runnerIndex);
}

/** Interruptions no runner has resumed from yet. */
export function openInterruptions(records: readonly InterruptionRecord[]): InterruptionRecord[] {
  return records.filter((r) => r.resumedAt === null);
}

/** `runner 0 interrupted at … (spot notice: stop at …; step … in flight)`. */
export function describeInterruption(r: InterruptionRecord): string {
  const why =
    r.notice !== null
      ? `spot interruption notice: ${r.notice.action} at ${r.notice.time}${r.signal ? `, then ${r.signal}` : ''}`
      : `${r.signal ?? 'signal'}, no spot notice seen`;
  const step = r.stepInFlight ? `; step ${r.stepInFlight} was running and will be measured again` : '';
  return `runner ${r.runnerIndex} interrupted at ${r.interruptedAt} (${why}${step})`;
}

/**
 * One runner slot's interruption record: written when the notice arrives and when the signal
 * comes, closed (`resumedAt`) when a runner starts the run again in this slot.
 */
export class InterruptionRecorder {
  private current: InterruptionRecord | null = null;
  private stepInFlight: string | null = null;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly blobs: BlobStore,
    private readonly runnerIndex: number,
    private readonly clock: Clock,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** The step now running (null between steps). */
  setStepInFlight(stepId: string | null): void {
    this.stepInFlight = stepId;
  }

  notice(action: InstanceAction): Promise<void> {
    if (this.current?.notice) return this.writes;
    this.current = {
      runnerIndex: this.runnerIndex,
      interruptedAt: this.current?.interruptedAt ?? this.clock.now().toISOString(),
      cause: 'spot-notice',
      signal: this.current?.signal ?? null,
      notice: { action: action.action, time: action.time },
      stepInFlight: this.stepInFlight,
      resumedAt: null,
    };
    return this.save();
  }

  signal(sig: string): Promise<void> {
    this.current = {
      runnerIndex: this.runnerIndex,
      interruptedAt: this.current?.interruptedAt ?? this.clock.now().toISOString(),
      cause: this.current?.cause ?? 'signal',
      signal: sig,
      notice: this.current?.notice ?? null,
      // the step running when the signal came is the one lost (the notice may have come a step earlier)
      stepInFlight: this.stepInFlight,
      resumedAt: null,
    };
    return this.save();
  }

  /**
   * A runner started the run in this slot (again): close an open record of an earlier attempt.
   * Queued behind this attempt's own writes, and a no-op once this attempt has a record of its own.
   */
  resumed(): Promise<void> {
    const key = interruptionPath(this.runnerIndex);
    this.writes = this.writes
      .then(async () => {
        if (this.current !== null) return;
        const text = await this.blobs.read(key);
        if (text === null) return;
        const prev = parseRunFile(interruptionRecordSchema, this.blobs.where(key), text);
        if (prev.resumedAt !== null) return;
        const closed: InterruptionRecord = { ...prev, resumedAt: this.clock.now().toISOString() };
        await this.blobs.write(key, JSON.stringify(closed, null, 2) + '\n', 'application/json');
        this.log(`closed the interruption record of an earlier attempt: ${describeInterruption(prev)}`);
      })
      .catch((err: unknown) =>
        this.log(
          `could not close the interruption record ${this.blobs.where(key)}: ${err instanceof Error ? err.message : String(err)}`,
        ),
      );
    return this.writes;
  }

  /** Every record write so far has settled. */
  flushed(): Promise<void> {
    return this.writes;
  }

  private save(): Promise<void> {
    const record = this.current;
    if (record === null) return this.writes;
    const key = interruptionPath(this.runnerIndex);
    this.writes = this.writes
      .then(() => this.blobs.write(key, JSON.stringify(record, null, 2) + '\n', 'application/json'))
      .catch((err: unknown) =>
        this.log(
          `could not record the interruption in ${this.blobs.where(key)}: ${err instanceof Error ? err.message : String(err)}`,
        ),
      );
    return this.writes;
  }
}

/** What the watcher needs from the instance metadata service. */
export interface InstanceMetadata {
  /** `instance-life-cycle`: `spot`, `on-demand`, … ; null when there is no metadata service. */
  lifeCycle(): Promise<string | null>;
  /** `spot/instance-action`; null while no interruption is scheduled (404). */
  instanceAction(): Promise<InstanceAction | null>;
}

type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; signal: AbortSignal },
) => Promise<{ status: number; text(): Promise<string> }>;

/**
 * IMDSv2 over HTTP: a session token (PUT /latest/api/token), then GETs with it. `endpoint` is
 * `AWS_EC2_METADATA_SERVICE_ENDPOINT` when set (the variable the AWS SDKs read), else 169.254.169.254.
 */
export function imdsV2(
  endpoint: string,
  fetchImpl: FetchLike = fetch,
  timeoutMs = 1000,
): InstanceMetadata & InstanceZone {
  const base = endpoint.replace(/\/+$/, '');
  let token: string | null = null;
  const call = async (method: string, path: string, headers: Record<string, string>) =>
    fetchImpl(`${base}${path}`, { method, headers, signal: AbortSignal.timeout(timeoutMs) });
  const get = async (path: string): Promise<string | null> => {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (token === null) {
        const res = await call('PUT', '/latest/api/token', {
          'X-aws-ec2-metadata-token-ttl-seconds': '21600',
        });
        if (res.status !== 200) throw new Error(`IMDSv2 token: HTTP ${res.status}`);
        token = (await res.text()).trim();
      }
      const res = await call('GET', path, { 'X-aws-ec2-metadata-token': token });
      if (res.status === 401) {
        token = null; // expired token: fetch a new one once
        continue;
      }
      if (res.status === 404) return null;
      if (res.status !== 200) throw new Error(`IMDS ${path}: HTTP ${res.status}`);
      return await res.text();
    }
    throw new Error(`IMDS ${path}: token refused twice`);
  };
  return {
    lifeCycle: async () => (await get('/latest/meta-data/instance-life-cycle'))?.trim() ?? null,
    instanceAction: async () => {
      const text = await get('/latest/meta-data/spot/instance-action');
      return text === null ? null : parseInstanceAction(text);
    },
    availabilityZone: async () => {
      // EC2 User Guide, "Instance metadata categories": placement/availability-zone.
      const zone = (await get('/latest/meta-data/placement/availability-zone'))?.trim() ?? null;
      return zone !== null && /^[a-z]{2}(-[a-z]+)+-\d[a-z]$/.test(zone) ? zone : null;
    },
  };
}

/** This instance's Availability Zone (the runner records its own in the run's environment). */
export interface InstanceZone {
  /** `us-east-1a`; null when the service does not say. Throws when it cannot be reached. */
  availabilityZone(): Promise<string | null>;
}

/**
 * The runner's own zone through IMDSv2, or null — off EC2, with AWS_EC2_METADATA_DISABLED=true, or
 * when the service does not answer: a zone is recorded, never required.
 */
export async function ownAvailabilityZone(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const endpoint = imdsEndpointFrom(env);
  if (endpoint === null) return null;
  try {
    return await imdsV2(endpoint).availabilityZone();
  } catch {
    return null;
  }
}

/** `{"action": "stop", "time": "2017-09-18T08:22:00Z"}`; anything else → null (not a notice we understand). */
export function parseInstanceAction(text: string): InstanceAction | null {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null) return null;
    const { action, time } = v as Record<string, unknown>;
    return typeof action === 'string' && typeof time === 'string' ? { action, time } : null;
  } catch {
    return null;
  }
}

/** The metadata endpoint from the environment; null when `AWS_EC2_METADATA_DISABLED=true`. */
export function imdsEndpointFrom(env: NodeJS.ProcessEnv): string | null {
  if ((env.AWS_EC2_METADATA_DISABLED ?? '').toLowerCase() === 'true') return null;
  return env.AWS_EC2_METADATA_SERVICE_ENDPOINT || IMDS_DEFAULT_ENDPOINT;
}

export interface SpotNoticeWatcherOptions {
  readonly imds: InstanceMetadata;
  /** Called once, with the notice; the watcher waits for it before it is done. */
  readonly onNotice: (a: InstanceAction) => void | Promise<void>;
  readonly log: (line: string) => void;
  /** The wait between polls (`sleep`); a fake clock drives the watcher in tests. */
  readonly clock: Clock;
  /** @default SPOT_NOTICE_POLL_MS */
  readonly intervalMs?: number;
}

/**
 * Polls `spot/instance-action` every `intervalMs` on a spot instance and calls `onNotice` once.
 * Off EC2 (no metadata service) or on an on-demand instance it stops after the first look.
 */
export class SpotNoticeWatcher {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  private wake: () => void = () => undefined;
  private readonly intervalMs: number;

  constructor(private readonly opts: SpotNoticeWatcherOptions) {
    this.intervalMs = opts.intervalMs ?? SPOT_NOTICE_POLL_MS;
  }

  /** True when this is a spot instance and polling started. */
  async start(): Promise<boolean> {
    let lifeCycle: string | null;
    try {
      lifeCycle = await this.opts.imds.lifeCycle();
    } catch {
      return false; // not on EC2: nothing to watch
    }
    if (lifeCycle !== 'spot') return false;
    this.opts.log(`spot instance: watching for an interruption notice every ${this.intervalMs / 1000} s`);
    this.loop = this.run();
    return true;
  }

  /** No poll after this one (a wait between polls ends at once); a notice being handled is finished (see done()). */
  stop(): void {
    this.stopped = true;
    this.wake();
  }

  /** Resolves when polling has ended: after the notice was handled, or after stop(). */
  done(): Promise<void> {
    return this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let action: InstanceAction | null = null;
      try {
        action = await this.opts.imds.instanceAction();
      } catch {
        // a failed poll is retried at the next interval
      }
      if (action !== null && !this.stopped) {
        this.opts.log(
          `spot interruption notice: EC2 will ${action.action} this runner at ${action.time}; recording it and stopping the run (finished steps are in S3)`,
        );
        await this.opts.onNotice(action);
        return; // one notice is enough
      }
      if (this.stopped) return;
      await Promise.race([
        this.opts.clock.sleep(this.intervalMs),
        new Promise<void>((resolve) => (this.wake = resolve)),
      ]);
    }
  }
}

/**
 * What a spot runner does on the notice: write the interruption record (awaited: it must reach S3
 * while the network is up), then stop the run (`stop`: the runner's abort, as a signal would).
 * The log says how long is left before EC2 acts, by `clock`.
 */
export function onSpotNotice(opts: {
  readonly recorder: InterruptionRecorder;
  readonly stop: () => void;
  readonly clock: Clock;
  readonly log: (line: string) => void;
}): (action: InstanceAction) => Promise<void> {
  return async (action) => {
    await opts.recorder.notice(action);
    const leftMs = Date.parse(action.time) - opts.clock.now().getTime();
    const when = !Number.isFinite(leftMs)
      ? ''
      : leftMs >= 0
        ? ` ${Math.round(leftMs / 1000)} s before EC2 acts`
        : ` (EC2's time ${action.time} has passed)`;
    opts.log(`interruption recorded; stopping the run${when}`);
    opts.stop();
  };
}
