/**
 * The collector's input: one run window and the lab resources to read metrics for. Shared by the
 * Lambda handler (event) and `proxylab collect` (--event FILE or flags). Validated with zod; every
 * problem names the field path.
 */
// zod/mini: the same validation at an eighth of the bundled size (the Lambda bundles it; see
// docs/collector.md). Namespace import so esbuild can tree-shake it.
import * as z from 'zod/mini';
import { UsageError } from '../core/errors';
import { DATABASE_ENGINES } from '../suite/engines';

/** A run id must be one safe path segment: it becomes `runs/<runId>/` in S3 and on disk. */
const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** ISO-8601 with a zone (`Z` or an offset), normalised to UTC `…Z`. */
const isoTime = z.pipe(
  z.iso.datetime({
    offset: true,
    error: 'must be an ISO-8601 timestamp with a zone, e.g. 2026-11-21T10:00:00Z',
  }),
  z.transform((s: string) => new Date(s).toISOString()),
);

const name = z.string().check(z.minLength(1, 'must not be empty'));

const collectEventSchema = z
  .object({
    runId: z.string().check(
      z.regex(
        RUN_ID_PATTERN,
        'must be a safe path segment: letters, digits, ".", "_", "-", no "/" and not starting with "."',
      ),
      z.refine((s: string) => !s.includes('..'), 'must not contain ".."'),
    ),
    window: z.object({ start: isoTime, end: isoTime }),
    cluster: z.object({
      clusterId: name,
      instanceIds: z.array(name),
      /** Performance Insights resource ids (DbiResourceId, `db-…`); empty when PI is off. */
      piResourceIds: z._default(z.array(name), []),
      /**
       * Instance classes by instance id (`db.t4g.medium`); CPUCreditBalance is read only for
       * burstable (db.t*) classes. Optional: when absent no instance is treated as burstable.
       */
      instanceClasses: z.optional(z.record(z.string(), z.string())),
      /**
       * The engine (stack output DatabaseEngine): `postgres` (RDS for PostgreSQL) reads the RDS
       * instance metrics and Performance Insights counters, `aurora-postgresql` Aurora's. Events from older CLIs carry none: Aurora,
       * the only engine there was.
       */
      engine: z.optional(z.enum(DATABASE_ENGINES)),
    }),
    proxies: z._default(z.array(name), []),
    bucket: z.optional(z.string().check(z.minLength(3, 'must be a bucket name'))),
    /** Skip Performance Insights even when resource ids are given. */
    skipPi: z.optional(z.boolean()),
  })
  .check(
    z.superRefine((ev, ctx) => {
      // Only when both timestamps passed (the transform's output form); otherwise they are reported already.
      const normalised = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
      if (!normalised.test(ev.window.start) || !normalised.test(ev.window.end)) return;
      const start = Date.parse(ev.window.start);
      const end = Date.parse(ev.window.end);
      if (!Number.isNaN(start) && !Number.isNaN(end) && end <= start) {
        ctx.addIssue({
          code: 'custom',
          path: ['window', 'end'],
          message: `must be after window.start (${ev.window.start})`,
          input: ev.window.end,
        });
      }
    }),
  );

/** The validated event (defaults applied, timestamps normalised to UTC `…Z`). */
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
    // zod/mini ships no message locale: say what was expected and what came.
    const message =
      issue.code === 'invalid_type'
        ? `expected ${issue.expected}, got ${describeValue(valueAt(input, issue.path))}`
        : issue.message;
    return `${path}: ${message}`;
  });
  throw new UsageError(`invalid collect event: ${problems.join('; ')}`);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  return `a ${typeof value}`;
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
  /** `aurora-postgresql` (default) or `postgres`. */
  readonly engine?: string;
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
    if (eq <= 0 || eq === pair.length - 1)
      throw new UsageError(`--instance-class must be ID=CLASS (db.t4g.medium), got "${pair}"`);
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
      ...(flags.engine !== undefined ? { engine: flags.engine } : {}),
    },
    proxies: [...(flags.proxy ?? [])],
  };
}
