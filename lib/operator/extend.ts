/**
 * `proxylab extend`: move a deployed lab's expiry later by N hours. Finds the schedule by its
 * deterministic name (`expiryScheduleName(stackName)`), reads it, and writes it back with the new
 * `at(...)` time (UpdateSchedule replaces the whole definition, so every field is carried over).
 *
 * The `proxylab:expires-at` tags keep the deploy-time deadline: rewriting a tag on every resource
 * means a stack update (minutes, through every resource's tagging API) or per-service tagging
 * rights, for a label. The schedule is what deletes the stack and is the authority; its
 * description carries the new time, and `extend` prints it. A later `proxylab deploy` restarts the
 * clock at deploy time + ttlHours (and rewrites the tags).
 */
import {
  GetScheduleCommand,
  type GetScheduleCommandOutput,
  ResourceNotFoundException,
  type SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { InfrastructureError, UsageError } from '../core/errors';
import { LIMITS } from '../config/schema';
import {
  expiryScheduleName,
  expiryTime,
  formatAtExpression,
  formatExpiresAt,
  parseAtExpression,
} from '../config/expiry';

export interface ExtendRequest {
  /** The lab's CloudFormation stack name (`stackNameFor(lab.name)`). */
  readonly stackName: string;
  /** Hours to add to the current deadline; > 0. */
  readonly hours: number;
  /** @default new Date() */
  readonly now?: Date;
}

export interface ExtendResult {
  readonly stackName: string;
  readonly scheduleName: string;
  readonly previousExpiresAt: Date;
  readonly expiresAt: Date;
}

/** Largest single extension, matching the lab file's ttlHours limit (30 days). */
export const EXTEND_HOURS_MAX = LIMITS.ttlHoursMax;

export function validateExtendHours(hours: number): void {
  if (!Number.isFinite(hours) || hours <= 0 || hours > EXTEND_HOURS_MAX) {
    throw new UsageError(`--hours must be a number of hours > 0 and ≤ ${EXTEND_HOURS_MAX}, got ${hours}`);
  }
}

export async function extendLabExpiry(scheduler: SchedulerClient, req: ExtendRequest): Promise<ExtendResult> {
  validateExtendHours(req.hours);
  const now = req.now ?? new Date();
  const name = expiryScheduleName(req.stackName);

  const current = await readSchedule(scheduler, name);
  if (current === null) {
    throw new UsageError(
      `no expiry schedule ${name} for stack ${req.stackName} in this account and region: the lab is not deployed ` +
        'here (check --profile/--region), was deployed without ttlHours, or has already expired',
    );
  }

  const expression = current.ScheduleExpression ?? '';
  const previous = parseAtExpression(expression, current.ScheduleExpressionTimezone);
  if (previous === null) {
    throw new InfrastructureError(
      `schedule ${name} has expression "${expression}" (time zone ${current.ScheduleExpressionTimezone ?? 'UTC'}); ` +
        'expected a one-time at(...) in UTC as proxylab deploys it',
    );
  }
  if (previous.getTime() <= now.getTime()) {
    throw new UsageError(
      `lab stack ${req.stackName} already expired at ${formatExpiresAt(previous)}: its deletion has started or is done; deploy it again`,
    );
  }

  const expiresAt = new Date(previous.getTime() + req.hours * 3_600_000);
  try {
    await moveSchedule(
      scheduler,
      name,
      current,
      expiresAt,
      `proxylab: deletes stack ${req.stackName} at ${formatExpiresAt(expiresAt)} (extended by proxylab extend)`,
    );
  } catch (err) {
    throw new InfrastructureError(
      `updating schedule ${name} failed: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  return { stackName: req.stackName, scheduleName: name, previousExpiresAt: previous, expiresAt };
}

/**
 * Restart the expiry clock: move the schedule to `now + ttlHours` (deploy calls this when the
 * deploy completes, so a 20–30 minute deploy does not eat into the lab's time). Returns the new
 * time, or null when the lab has no expiry schedule.
 */
export async function restartLabExpiry(
  scheduler: SchedulerClient,
  req: { readonly stackName: string; readonly ttlHours: number; readonly now?: Date },
): Promise<Date | null> {
  const name = expiryScheduleName(req.stackName);
  const current = await readSchedule(scheduler, name);
  if (current === null) return null;
  const expiresAt = expiryTime(req.now ?? new Date(), req.ttlHours);
  await moveSchedule(
    scheduler,
    name,
    current,
    expiresAt,
    `proxylab: deletes stack ${req.stackName} at ${formatExpiresAt(expiresAt)} (ttlHours from the end of the deploy)`,
  );
  return expiresAt;
}

/** When the lab's expiry schedule fires, or null when it has none (no ttlHours, or not deployed). */
export async function readLabExpiry(scheduler: SchedulerClient, stackName: string): Promise<Date | null> {
  try {
    const current = await scheduler.send(new GetScheduleCommand({ Name: expiryScheduleName(stackName) }));
    return parseAtExpression(current.ScheduleExpression ?? '', current.ScheduleExpressionTimezone);
  } catch (err) {
    if (err instanceof ResourceNotFoundException) return null;
    throw err;
  }
}

/** The schedule, or null when it does not exist; any other failure is an InfrastructureError. */
async function readSchedule(
  scheduler: SchedulerClient,
  name: string,
): Promise<GetScheduleCommandOutput | null> {
  try {
    return await scheduler.send(new GetScheduleCommand({ Name: name }));
  } catch (err) {
    if (err instanceof ResourceNotFoundException) return null;
    throw new InfrastructureError(
      `reading schedule ${name} failed: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

/**
 * UpdateSchedule replaces the whole schedule (unset fields reset to their defaults), so every field
 * read back is sent again with only the time and description changed.
 */
async function moveSchedule(
  scheduler: SchedulerClient,
  name: string,
  current: GetScheduleCommandOutput,
  expiresAt: Date,
  description: string,
): Promise<void> {
  if (!current.Target || !current.FlexibleTimeWindow) {
    throw new InfrastructureError(
      `schedule ${name} came back without its target or time window; not changing it`,
    );
  }
  await scheduler.send(
    new UpdateScheduleCommand({
      Name: name,
      GroupName: current.GroupName,
      ScheduleExpression: formatAtExpression(expiresAt),
      ScheduleExpressionTimezone: 'UTC',
      Description: description,
      FlexibleTimeWindow: current.FlexibleTimeWindow,
      Target: current.Target,
      State: current.State,
      ActionAfterCompletion: current.ActionAfterCompletion,
      KmsKeyArn: current.KmsKeyArn,
      StartDate: current.StartDate,
      EndDate: current.EndDate,
    }),
  );
}
