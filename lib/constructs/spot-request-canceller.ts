/**
 * Cancels each spot runner's persistent Spot request before CloudFormation terminates the runner,
 * on every deletion path: `proxylab destroy`, the expiry schedule's DeleteStack (lib/constructs/ttl.ts),
 * and a redeploy that replaces a runner. Without it EC2 reopens the request of a terminated runner
 * and launches a new instance outside the stack ("If you terminate a running or stopped Spot
 * Instance that was launched by a persistent Spot request, the Spot request returns to the open
 * state so that a new Spot Instance can be launched", EC2 User Guide, Terminate a Spot Instance).
 *
 * One custom resource per spot runner (`Custom::SpotRequest`, properties `InstanceId`), served by
 * one small function (lambda/cancel-spot-request): its physical id is the runner's
 * SpotInstanceRequestId, its Delete cancels that request. Deletion order comes from the template:
 * the resource Refs its instance, so CloudFormation deletes it first; its function, role, policy and
 * log group are Ref'd by it in turn, so they go after it. Its logical id follows the instance's
 * (the runners' logical ids carry a user-data hash, userDataCausesReplacement): new runner software
 * means a new instance *and* a new keeper, and the old pair is removed together, keeper first.
 *
 * IAM (Service Authorization Reference, Amazon EC2): `ec2:CancelSpotInstanceRequests` takes the
 * resource type `spot-instances-request` and the condition keys `aws:ResourceTag/${TagKey}`,
 * `ec2:ResourceTag/${TagKey}`, `ec2:Region`. The request id is not known at synth time, so the
 * statement names `spot-instances-request/*` in this account and region, and only requests tagged
 * with this stack's id (the launch template tags the request at launch, see SPOT_REQUEST_TAG).
 * `ec2:DescribeInstances` supports no resource-level permissions (Resource `*`).
 */
import * as path from 'node:path';
import { CfnResource, CustomResource, Duration, Lazy, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { SPOT_REQUEST_TAG } from '../config/stack-outputs';
import { addLabFunction } from './lab-function';
import { REPO_ROOT } from '../core/repo-root';

/** lambda/cancel-spot-request/index.ts, resolved from this file (not the working directory). */
const ENTRY = path.join(REPO_ROOT, 'lambda', 'cancel-spot-request', 'index.ts');

/** CloudFormation type of the per-runner custom resource. */
export const SPOT_REQUEST_RESOURCE_TYPE = 'Custom::SpotRequest';

/**
 * Tag the launch template puts on each runner's Spot request (value: the stack id, `AWS::StackId`);
 * the cancel permission is conditioned on it, so the function can cancel this stack's requests only
 * (not another lab's, not a later stack's with the same name). Defined beside the stack outputs: the
 * CLI (`proxylab doctor`) filters on it too.
 */
export { SPOT_REQUEST_TAG };

export interface SpotRequestCancellerProps {
  /**
   * Log retention of the function's log group (deleted with the stack).
   * @default logs.RetentionDays.ONE_WEEK
   */
  readonly logRetention?: logs.RetentionDays;
}

/** The function and its permissions; `track(instance)` adds one custom resource per spot runner. */
export class SpotRequestCanceller extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  /** One per tracked runner, in `track` order. */
  readonly resources: CustomResource[] = [];

  constructor(scope: Construct, id: string, props: SpotRequestCancellerProps = {}) {
    super(scope, id);
    const stack = Stack.of(this);
    const made = addLabFunction(this, {
      entry: ENTRY,
      description: "proxylab: cancel a spot runner's persistent Spot request before the runner is deleted",
      roleDescription: "proxylab: cancel this lab's spot runners' Spot requests when the runners are deleted",
      logRetention: props.logRetention ?? logs.RetentionDays.ONE_WEEK,
      memorySize: 256,
      // Two EC2 calls; well under CloudFormation's one-hour wait if something hangs.
      timeout: Duration.minutes(2),
      statements: [
        new iam.PolicyStatement({ actions: ['ec2:DescribeInstances'], resources: ['*'] }),
        new iam.PolicyStatement({
          actions: ['ec2:CancelSpotInstanceRequests'],
          resources: [
            stack.formatArn({ service: 'ec2', resource: 'spot-instances-request', resourceName: '*' }),
          ],
          conditions: { StringEquals: { [`aws:ResourceTag/${SPOT_REQUEST_TAG}`]: stack.stackId } },
        }),
      ],
      roleAcknowledgements: [
        {
          id: 'AwsSolutions-IAM5[Resource::*]',
          reason:
            'ec2:DescribeInstances supports no resource-level permissions (Service Authorization Reference, Amazon EC2); it is the only action granted on *.',
        },
        {
          // As cdk-nag prints the ARN: pseudo parameters, or the literal region and account of a
          // stack bound to them (a lab in an existing VPC).
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${nagText(stack.region, '<AWS::Region>')}:${nagText(stack.account, '<AWS::AccountId>')}:spot-instances-request/*]`,
          reason:
            "Spot request ids exist only after launch; the statement is limited to requests tagged with this stack's id (aws:ResourceTag condition).",
        },
      ],
    });
    this.function = made.function;
    this.role = made.role;
    this.logGroup = made.logGroup;
  }

  /** The custom resource that cancels `runner`'s Spot request when the runner is deleted. */
  track(runner: ec2.Instance): CustomResource {
    const resource = new CustomResource(this, `${runner.node.id}SpotRequest`, {
      serviceToken: this.function.functionArn,
      resourceType: SPOT_REQUEST_RESOURCE_TYPE,
      properties: { InstanceId: runner.instanceId },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Same logical id as the runner plus a suffix: a runner replaced under a new logical id takes
    // a new keeper with it, and the old keeper (which Refs the old runner) is removed before it.
    const cfn = resource.node.defaultChild;
    if (!(cfn instanceof CfnResource))
      throw new Error(`${resource.node.path} has no CloudFormation resource`);
    const stack = Stack.of(this);
    cfn.overrideLogicalId(
      Lazy.uncachedString({
        produce: () => `${stack.resolve(runner.instance.logicalId) as string}SpotRequest`,
      }),
    );
    this.resources.push(resource);
    return resource;
  }
}

/** A stack's region or account as cdk-nag writes it in a finding: the literal, or the pseudo parameter. */
function nagText(value: string, pseudo: string): string {
  return Token.isUnresolved(value) ? pseudo : value;
}
