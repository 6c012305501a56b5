/**
 * The collector's input: one run window and the lab resources to read metrics for. Shared by the
 * Lambda handler (event) and `proxylab collect` (--event FILE or flags). Validated with zod; every
 * problem names the field path.
 */
import { z } from 'zod';
import { UsageError } from '../cli/errors';

/** A run id must be one safe path segment: it becomes `runs/<runId>/` in S3 and on disk. */
const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** ISO-8601 with a zone (`Z` or an offset), normalised to UTC `…Z`. */
const isoTime = z.iso
  .datetime({ offset: true, error: 'must be an ISO-8601 timestamp with a zone, e.g. 2026-11-21T10:00:00Z' })
  .transform((s) => new Date(s).toISOString());

export const collectEventSchema = z
  .object({
    runId: z
      .string()
      .regex(RUN_ID_PATTERN, {
        message: 'must be a safe path segment: letters, digits, ".", "_", "-", no "/" and not starting with "."',
      })
      .refine((s) => !s.includes('..'), { message: 'must not contain ".."' }),
    window: z.object({ start: isoTime, end: isoTime }),
    cluster: z.object({
      clusterId: z.string().min(1),
      instanceIds: z.array(z.string().min(1)),
      /** Performance Insights resource ids (DbiResourceId, `db-…`); empty when PI is off. */
      piResourceIds: z.array(z.string().min(1)).default([]),
      /**
       * Instance classes by instance id (`db.t4g.medium`); CPUCreditBalance is read only for
       * burstable (db.t*) classes. Optional: when absent no instance is treated as burstable.
       */
      instanceClasses: z.record(z.string(), z.string()).optional(),
    }),
    proxies: z.array(z.string().min(1)).default([]),
    bucket: z.string().min(3).optional(),
    /** Skip Performance Insights even when resource ids are given. */
    skipPi: z.boolean().optional(),
  })
  .superRefine((ev, ctx) => {
    const start = Date.parse(ev.window.start);
    const end = Date.parse(ev.window.end);
    if (!Number.isNaN(start) && !Number.isNaN(end) && end <= start) {
      ctx.addIssue({ code: 'custom', path: ['window', 'end'], message: `must be after window.start (${ev.window.start})` });
    }
  });

export type CollectEvent = z.output<typeof collectEventSchema>;

/** Performance Insights is read unless the event says skipPi or names no PI resource ids. */
export function wantsPi(event: CollectEvent): boolean {
  return event.skipPi !== true && event.cluster.piResourceIds.length > 0;
}

/** Parse and validate an event; throws UsageError listing every invalid field. */
export function parseCollectEvent(input: unknown): CollectEvent {
  const result = collectEventSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(event)';
    return `${path}: ${issue.message}`;
  });
  throw new UsageError(`invalid collect event: ${problems.join('; ')}`);
}

/** `proxylab collect` flags that describe the event (when no --event file is given). */
export interface CollectEventFlags {
  readonly runId?: string;
  readonly start?: string;
  readonly end?: string;
  readonly clusterId?: string;
  readonly instanceId?: readonly string[];
  readonly piResourceId?: readonly string[];
  readonly instanceClass?: readonly string[];
  readonly proxy?: readonly string[];
}

/**
 * Build the raw event from flags (validated afterwards by parseCollectEvent, so errors name the
 * event field and the flag). `--instance-class ID=CLASS` pairs become `cluster.instanceClasses`.
 */
export function eventFromFlags(flags: CollectEventFlags): Record<string, unknown> {
  const missing = (
    [
      ['--run-id', flags.runId],
      ['--start', flags.start],
      ['--end', flags.end],
      ['--cluster-id', flags.clusterId],
    ] as const
  )
    .filter(([, v]) => v === undefined)
    .map(([flag]) => flag);
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')} (or give --event FILE)`);
  const instanceClasses: Record<string, string> = {};
  for (const pair of flags.instanceClass ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || eq === pair.length - 1) throw new UsageError(`--instance-class must be ID=CLASS (db.t4g.medium), got "${pair}"`);
    instanceClasses[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return {
    runId: flags.runId,
    window: { start: flags.start, end: flags.end },
    cluster: {
      clusterId: flags.clusterId,
      instanceIds: [...(flags.instanceId ?? [])],
      piResourceIds: [...(flags.piResourceId ?? [])],
      ...(Object.keys(instanceClasses).length > 0 ? { instanceClasses } : {}),
    },
    proxies: [...(flags.proxy ?? [])],
  };
}
