import {
  GetScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import { InfrastructureError, UsageError } from '../../lib/core/errors';
import { extendLabExpiry } from '../../lib/operator/extend';

const schedulerMock = mockAws(SchedulerClient, operator('run'));
const NOW = new Date('2026-11-21T12:00:00Z');
const TARGET = {
  Arn: 'arn:aws:scheduler:::aws-sdk:cloudformation:deleteStack',
  RoleArn: 'arn:aws:iam::111122223333:role/proxylab-default-ExpiryDeleteStackRole',
  Input: '{"StackName":"arn:aws:cloudformation:us-east-1:111122223333:stack/proxylab-default/abc"}',
  RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86400 },
};

function deployedSchedule(expression: string, timeZone = 'UTC') {
  return {
    Name: 'proxylab-default-expiry',
    GroupName: 'default',
    ScheduleExpression: expression,
    ScheduleExpressionTimezone: timeZone,
    FlexibleTimeWindow: { Mode: 'OFF' as const },
    State: 'ENABLED' as const,
    Description: 'proxylab: deletes stack proxylab-default at 2026-11-21T18:00:00Z',
    Target: TARGET,
  };
}

afterEach(() => schedulerMock.reset());

describe('extendLabExpiry', () => {
  test('adds the hours to the current deadline and writes the whole definition back', async () => {
    // GIVEN a schedule due at 18:00
    schedulerMock
      .on(GetScheduleCommand, { Name: 'proxylab-default-expiry' })
      .resolves(deployedSchedule('at(2026-11-21T18:00:00)'));
    schedulerMock.on(UpdateScheduleCommand).resolves({
      ScheduleArn: 'arn:aws:scheduler:us-east-1:111122223333:schedule/default/proxylab-default-expiry',
    });
    // WHEN extended by 4 hours
    const r = await extendLabExpiry(new SchedulerClient({ region: 'us-east-1' }), {
      stackName: 'proxylab-default',
      hours: 4,
      now: NOW,
    });
    // THEN
    expect(r.previousExpiresAt.toISOString()).toBe('2026-11-21T18:00:00.000Z');
    expect(r.expiresAt.toISOString()).toBe('2026-11-21T22:00:00.000Z');
    expect(schedulerMock).toHaveReceivedCommandWith(UpdateScheduleCommand, {
      Name: 'proxylab-default-expiry',
      GroupName: 'default',
      ScheduleExpression: 'at(2026-11-21T22:00:00)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: TARGET,
    });
  });

  test('a lab not deployed here (no schedule) is a usage error saying where to look', async () => {
    schedulerMock.on(GetScheduleCommand).rejects(
      new ResourceNotFoundException({
        message: 'Schedule not found',
        $metadata: {},
        Message: 'Schedule not found',
      }),
    );
    const p = extendLabExpiry(new SchedulerClient({ region: 'us-east-1' }), {
      stackName: 'proxylab-default',
      hours: 4,
      now: NOW,
    });
    await expect(p).rejects.toThrow(UsageError);
    await expect(
      extendLabExpiry(new SchedulerClient({ region: 'us-east-1' }), {
        stackName: 'proxylab-default',
        hours: 4,
        now: NOW,
      }),
    ).rejects.toThrow(/no expiry schedule proxylab-default-expiry .*check --profile\/--region/);
    expect(schedulerMock).not.toHaveReceivedCommand(UpdateScheduleCommand);
  });

  test('an already passed deadline is not moved', async () => {
    schedulerMock.on(GetScheduleCommand).resolves(deployedSchedule('at(2026-11-21T11:59:00)'));
    await expect(
      extendLabExpiry(new SchedulerClient({ region: 'us-east-1' }), {
        stackName: 'proxylab-default',
        hours: 4,
        now: NOW,
      }),
    ).rejects.toThrow(/already expired at 2026-11-21T11:59:00Z/);
    expect(schedulerMock).not.toHaveReceivedCommand(UpdateScheduleCommand);
  });

  test('a schedule that is not a UTC at() is refused rather than guessed', async () => {
    schedulerMock.on(GetScheduleCommand).resolves(deployedSchedule('rate(1 hour)'));
    await expect(
      extendLabExpiry(new SchedulerClient({ region: 'us-east-1' }), {
        stackName: 'proxylab-default',
        hours: 4,
        now: NOW,
      }),
    ).rejects.toThrow(InfrastructureError);
    expect(schedulerMock).not.toHaveReceivedCommand(UpdateScheduleCommand);
  });

  test.each([0, -2, 721, Number.NaN])('--hours %s is a usage error before any call', async (hours) => {
    await expect(
      extendLabExpiry(new SchedulerClient({ region: 'us-east-1' }), {
        stackName: 'proxylab-default',
        hours,
        now: NOW,
      }),
    ).rejects.toThrow(/--hours must be a number of hours > 0 and ≤ 720/);
    expect(schedulerMock).not.toHaveReceivedCommand(GetScheduleCommand);
  });

  test('an update failure surfaces as an infrastructure error', async () => {
    schedulerMock.on(GetScheduleCommand).resolves(deployedSchedule('at(2026-11-21T18:00:00)'));
    schedulerMock.on(UpdateScheduleCommand).rejects(new Error('AccessDeniedException: not authorized'));
    await expect(
      extendLabExpiry(new SchedulerClient({ region: 'us-east-1' }), {
        stackName: 'proxylab-default',
        hours: 1,
        now: NOW,
      }),
    ).rejects.toThrow(/updating schedule proxylab-default-expiry failed: AccessDeniedException/);
  });
});
