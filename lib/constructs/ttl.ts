/**
 * Expiry: a lab that deletes itself. When the lab sets `ttlHours`, an EventBridge Scheduler
 * one-time schedule calls CloudFormation `DeleteStack` on exactly this stack at
 * synth time + ttlHours, through the Scheduler universal target (no Lambda to maintain).
 *
 * Who may delete what:
 *  - The schedule's role (IAM path `/<stack>/expiry/`, which the operator's iam:PassRole names) may
 *    call `cloudformation:DeleteStack` on this stack's id (`AWS::StackId`, the ARN with its unique
 *    suffix: not another stack, not a later stack with the same name) and `iam:PassRole` on the CDK
 *    bootstrap CloudFormation execution role, only towards cloudformation.amazonaws.com. It may do
 *    nothing else.
 *  - CloudFormation then deletes the resources with that execution role's credentials, the same
 *    role `cdk deploy` created them with (DeleteStack is called with `RoleARN` set to it). A role
 *    that can only call DeleteStack could not delete an Aurora cluster itself; CloudFormation
 *    uses the caller's credentials only when no service role is given.
 *  - A retained results bucket stays (its removal policy is RETAIN); everything else goes.
 *
 * `applyLabTags` tags every taggable resource with `proxylab:lab`, `proxylab:owner` and
 * `proxylab:expires-at`. The expiry time is fixed at synth (now + ttlHours, rounded up to the
 * minute; `-c proxylab:now=ISO` pins "now" for reproducible templates), shown in the `ExpiresAt`
 * output and the tag. `proxylab extend` moves the schedule later; a new deploy restarts the clock.
 */
import {
  Annotations,
  Aspects,
  CfnOutput,
  CfnResource,
  DefaultStackSynthesizer,
  Duration,
  Fn,
  RemovalPolicy,
  Stack,
  TagManager,
  Tags,
  Validations,
} from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IAspect } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { CfnSchedule } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import type { IConstruct } from 'constructs';
import {
  EXPIRES_NEVER,
  OWNER_UNSPECIFIED,
  TAG_EXPIRES_AT,
  TAG_LAB,
  TAG_OWNER,
  expiryScheduleName,
  expiryTime,
  formatAtExpression,
  formatExpiresAt,
} from '../config/expiry';
import { expiryRolePath } from '../config/lab-resource-names';

/** Context key that pins "now" for the expiry computation (ISO-8601), e.g. in tests. */
export const NOW_CONTEXT_KEY = 'proxylab:now';

export interface LabExpiryProps {
  /** Hours from synthesis until the stack deletes itself; > 0. */
  readonly ttlHours: number;
  /**
   * The moment the clock starts.
   * @default - the `proxylab:now` context value when set, otherwise the time of synthesis
   */
  readonly now?: Date;
}

/** The one-time schedule that deletes this stack, and the role it runs as. */
export class LabExpiry extends Construct {
  /** When the stack deletes itself. */
  public readonly expiresAt: Date;
  /** The schedule's name (`<stackName>-expiry`, see `expiryScheduleName`). */
  public readonly scheduleName: string;
  public readonly schedule: CfnSchedule;
  public readonly role: iam.Role;
  /** Where Scheduler puts the DeleteStack call when every retry failed. */
  public readonly deadLetterQueue: sqs.Queue;
  /** In ALARM when the expiry could not call DeleteStack (a message in the dead-letter queue). */
  public readonly failureAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: LabExpiryProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.expiresAt = expiryTime(resolveNow(this, props.now), props.ttlHours);
    this.scheduleName = expiryScheduleName(stack.stackName);

    this.role = new iam.Role(this, 'DeleteStackRole', {
      // `proxylab extend` passes this role back to Scheduler: the operator's policy names it by
      // this path, whatever name CloudFormation generates (lib/config/lab-resource-names.ts).
      path: expiryRolePath(stack.stackName),
      description: `EventBridge Scheduler: deletes stack ${stack.stackName} when the lab expires`,
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'DeleteThisStackOnly',
        actions: ['cloudformation:DeleteStack'],
        resources: [stack.stackId],
      }),
    );

    const executionRoleArn = cloudFormationExecutionRoleArn(stack);
    if (executionRoleArn !== null) {
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          sid: 'PassExecutionRoleToCloudFormation',
          actions: ['iam:PassRole'],
          resources: [executionRoleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'cloudformation.amazonaws.com' } },
        }),
      );
    } else {
      Annotations.of(this).addWarningV2(
        'proxylab:ttl-no-execution-role',
        'The stack synthesizer has no CloudFormation execution role: the expiry schedule will call DeleteStack ' +
          "with only its own rights, which cannot delete the lab's resources. Use the DefaultStackSynthesizer " +
          '(cdk bootstrap) or delete the lab with `proxylab destroy`.',
      );
    }

    const input: Record<string, string> = { StackName: stack.stackId };
    if (executionRoleArn !== null) input.RoleARN = executionRoleArn;

    // A failed expiry must be visible: after the last retry, Scheduler delivers the failed call
    // (with the error DeleteStack returned) to a standard SQS queue; its execution role needs
    // sqs:SendMessage on it (EventBridge Scheduler User Guide, "Configuring a schedule's
    // dead-letter queue"). The alarm turns a message there into a state `proxylab doctor` and the
    // console show.
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself the dead-letter queue of the expiry schedule.',
    });
    // Only SendMessage (grantSendMessages would add GetQueueAttributes/GetQueueUrl, not needed).
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'DeadLetterFailedExpiry',
        actions: ['sqs:SendMessage'],
        resources: [this.deadLetterQueue.queueArn],
      }),
    );
    this.failureAlarm = new cloudwatch.Alarm(this, 'FailedAlarm', {
      alarmDescription: `proxylab: the expiry of stack ${stack.stackName} could not call DeleteStack; see the message in its dead-letter queue, then run proxylab destroy`,
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    const expiresAtText = formatExpiresAt(this.expiresAt);
    this.schedule = new CfnSchedule(this, 'Schedule', {
      name: this.scheduleName,
      description: `proxylab: deletes stack ${stack.stackName} at ${expiresAtText}`,
      scheduleExpression: formatAtExpression(this.expiresAt),
      scheduleExpressionTimezone: 'UTC',
      flexibleTimeWindow: { mode: 'OFF' },
      state: 'ENABLED',
      target: {
        arn: `arn:${stack.partition}:scheduler:::aws-sdk:cloudformation:deleteStack`,
        roleArn: this.role.roleArn,
        input: stack.toJsonString(input),
        // DeleteStack fails while the stack is mid-update; keep retrying for a day.
        retryPolicy: { maximumRetryAttempts: 185, maximumEventAgeInSeconds: 86_400 },
        deadLetterConfig: { arn: this.deadLetterQueue.queueArn },
      },
    });
    // The permissions must exist before the schedule can fire (the role itself is already a GetAtt dependency).
    const policy = this.role.node.tryFindChild('DefaultPolicy');
    if (policy) this.schedule.node.addDependency(policy);

    new CfnOutput(stack, 'ExpiresAt', {
      description: 'When the expiry schedule deletes this stack (UTC); `proxylab extend` moves it',
      value: expiresAtText,
    });
    new CfnOutput(stack, 'ExpiryScheduleName', {
      description: 'EventBridge Scheduler schedule that deletes this stack',
      value: this.scheduleName,
    });
    new CfnOutput(stack, 'ExpiryFailedAlarmName', {
      description: 'CloudWatch alarm that fires when the expiry could not call DeleteStack',
      value: this.failureAlarm.alarmName,
    });
  }
}

export interface LabTagsProps {
  readonly labName: string;
  /** @default 'unspecified' */
  readonly owner?: string;
  /** @default 'never' (no expiry) */
  readonly expiresAt?: Date;
}

/**
 * Tags every taggable resource in `stack` (and the stack itself) with the lab's lifecycle tags:
 * `Tags.of(stack)` for everything CDK knows to be taggable, plus `RAW_TAGGABLE_TYPES` created as
 * plain CfnResources (custom-resource provider roles and functions) or without tag support in
 * the L1 (the IMDSv2 launch template), which CloudFormation can tag but `Tags.of` does not reach.
 */
function applyLabTags(stack: Stack, props: LabTagsProps): void {
  const tags: Record<string, string> = {
    [TAG_LAB]: props.labName,
    [TAG_OWNER]: props.owner ?? OWNER_UNSPECIFIED,
    [TAG_EXPIRES_AT]: props.expiresAt ? formatExpiresAt(props.expiresAt) : EXPIRES_NEVER,
  };
  for (const [key, value] of Object.entries(tags)) Tags.of(stack).add(key, value);
  Aspects.of(stack).add(new RawResourceTags(tags));
}

/** CloudFormation types that take tags but can appear here without a CDK TagManager. */
export const RAW_TAGGABLE_TYPES: Readonly<Record<string, 'Tags' | 'TagSpecifications'>> = {
  'AWS::IAM::Role': 'Tags',
  'AWS::Lambda::Function': 'Tags',
  'AWS::EC2::LaunchTemplate': 'TagSpecifications',
};

class RawResourceTags implements IAspect {
  constructor(private readonly tags: Readonly<Record<string, string>>) {}

  visit(node: IConstruct): void {
    if (!(node instanceof CfnResource)) return;
    const how = RAW_TAGGABLE_TYPES[node.cfnResourceType];
    if (how === undefined || TagManager.isTaggable(node) || TagManager.isTaggableV2(node)) return;
    const list = Object.entries(this.tags).map(([Key, Value]) => ({ Key, Value }));
    if (how === 'Tags') node.addPropertyOverride('Tags', list);
    else node.addPropertyOverride('TagSpecifications', [{ ResourceType: 'launch-template', Tags: list }]);
  }
}

/** What lib/lab-stack.ts needs of a lab for expiry and tags (a subset of LabConfig). */
export interface LabLifecycleInput {
  readonly name: string;
  /** null/absent: tagged `unspecified`. */
  readonly owner?: string | null;
  /** null/absent: no expiry schedule, tagged `never`. */
  readonly ttlHours?: number | null;
}

/**
 * The one call the lab stack makes: the expiry schedule when `ttlHours` is set, and the tags
 * always. Returns the expiry construct, or null when the lab does not expire.
 */
export function applyLabLifecycle(stack: Stack, lab: LabLifecycleInput, now?: Date): LabExpiry | null {
  const ttlHours = lab.ttlHours ?? null;
  const expiry = ttlHours !== null ? new LabExpiry(stack, 'Expiry', { ttlHours, now }) : null;
  applyLabTags(stack, { labName: lab.name, owner: lab.owner ?? undefined, expiresAt: expiry?.expiresAt });
  return expiry;
}

function resolveNow(scope: Construct, now: Date | undefined): Date {
  if (now) return now;
  const pinned: unknown = scope.node.tryGetContext(NOW_CONTEXT_KEY);
  if (typeof pinned === 'string') {
    const d = new Date(pinned);
    if (Number.isNaN(d.getTime())) {
      throw new Error(
        `${scope.node.path}: context ${NOW_CONTEXT_KEY} must be an ISO-8601 time, got "${pinned}"`,
      );
    }
    return d;
  }
  return new Date();
}

/** The bootstrap's CloudFormation execution role as an environment-agnostic `Fn::Sub`, or null. */
function cloudFormationExecutionRoleArn(stack: Stack): string | null {
  const synth = stack.synthesizer;
  if (!(synth instanceof DefaultStackSynthesizer)) return null;
  // `${AWS::Partition}`/`${AWS::AccountId}`/`${AWS::Region}` placeholders: resolve through Fn::Sub.
  return Fn.sub(synth.cloudFormationExecutionRoleArn);
}
