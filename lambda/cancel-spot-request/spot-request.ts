/**
 * The spot runner's request keeper (a CloudFormation custom resource, one per spot runner; see
 * lib/constructs/spot-request-canceller.ts). Why it exists: a runner runs under a *persistent* Spot
 * request, and "if you terminate a running or stopped Spot Instance that was launched by a
 * persistent Spot request, the Spot request returns to the open state so that a new Spot Instance
 * can be launched. To cancel a persistent Spot request and terminate its Spot Instances, you must
 * cancel the Spot request first and then terminate the Spot Instances" (EC2 User Guide, Spot
 * Instance requests → Terminate a Spot Instance). CloudFormation terminates the instance and knows
 * nothing of the request; this resource is deleted before its instance and cancels the request.
 *
 * - Create / Update: DescribeInstances on the runner → `Reservations[].Instances[].SpotInstanceRequestId`
 *   becomes the physical id. A replaced runner (new instance id) gives a new request id, so
 *   CloudFormation treats the update as a replacement and sends Delete for the old request id.
 * - Delete: CancelSpotInstanceRequests (`SpotInstanceRequestIds`, botocore ec2 2016-11-15) on the
 *   physical id. Cancelling does not terminate the instance ("Canceling a Spot Instance request does
 *   not terminate running Spot Instances", API reference), CloudFormation does that next. A request
 *   EC2 no longer knows cannot launch anything: done. A physical id that is not a request id (the
 *   create failed, CloudFormation rolls back) is looked up again from the instance.
 * - Then every instance the request launched other than the runner it was created for is an orphan
 *   (the request was reopened before the cancel): the delete fails and names them, rather than
 *   leave an instance running outside the stack unseen.
 */
import {
  CancelSpotInstanceRequestsCommand,
  DescribeInstancesCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';

/** The custom resource's properties (CloudFormation passes them as strings). */
export interface SpotRequestProperties {
  /** The spot runner's instance id. */
  readonly InstanceId: string;
}

/** The subset of a CloudFormation custom resource request this handler reads. */
export interface SpotRequestEvent {
  readonly RequestType: 'Create' | 'Update' | 'Delete';
  readonly LogicalResourceId: string;
  /** Absent on Create. */
  readonly PhysicalResourceId?: string;
  readonly ResourceProperties: Readonly<Record<string, unknown>>;
}

export interface SpotRequestResult {
  readonly physicalResourceId: string;
  readonly data: Readonly<Record<string, string>>;
}

/** `sir-` followed by the id (EC2 request ids, e.g. `sir-0e54a519c9EXAMPLE` in the User Guide). */
const REQUEST_ID = /^sir-[0-9a-zA-Z]+$/;

/** EC2 error codes meaning "nothing to cancel": the request or the instance is gone. */
const GONE = new Set(['InvalidSpotInstanceRequestID.NotFound', 'InvalidInstanceID.NotFound']);

/** Instance states in which an instance still costs money or can start again. */
const LIVE_STATES = ['pending', 'running', 'stopping', 'stopped'];

/** The physical id reported when a Create fails (CloudFormation then sends Delete with it). */
export function failedCreatePhysicalId(event: SpotRequestEvent): string {
  const instanceId = readProperties(event).InstanceId;
  return `no-spot-request:${instanceId}`;
}

export async function handleSpotRequestEvent(
  event: SpotRequestEvent,
  ec2: EC2Client,
  log: (line: string) => void = () => undefined,
): Promise<SpotRequestResult> {
  const { InstanceId: instanceId } = readProperties(event);
  if (event.RequestType !== 'Delete') {
    const requestId = await spotRequestOf(ec2, instanceId);
    if (requestId === null) {
      throw new Error(
        `instance ${instanceId} has no SpotInstanceRequestId: it is not a Spot Instance (or no longer exists)`,
      );
    }
    log(`${event.RequestType}: instance ${instanceId} runs under Spot request ${requestId}`);
    return { physicalResourceId: requestId, data: { SpotInstanceRequestId: requestId } };
  }

  const physicalId = event.PhysicalResourceId ?? '';
  const requestId = REQUEST_ID.test(physicalId) ? physicalId : await spotRequestOf(ec2, instanceId);
  if (requestId === null) {
    log(`Delete: ${physicalId} names no Spot request and instance ${instanceId} has none: nothing to cancel`);
    return { physicalResourceId: physicalId, data: {} };
  }
  const state = await cancel(ec2, requestId);
  log(`Delete: cancelled Spot request ${requestId} (state ${state ?? 'gone'})`);
  const orphans = await instancesOfRequest(ec2, requestId, instanceId);
  if (orphans.length > 0) {
    throw new Error(
      `Spot request ${requestId} is cancelled, but it had already launched ${orphans.join(', ')} ` +
        `after runner ${instanceId}; terminate ${orphans.length === 1 ? 'it' : 'them'} ` +
        '(aws ec2 terminate-instances) and delete again',
    );
  }
  return { physicalResourceId: physicalId, data: {} };
}

function readProperties(event: SpotRequestEvent): SpotRequestProperties {
  const id = event.ResourceProperties.InstanceId;
  if (typeof id !== 'string' || !/^i-[0-9a-f]+$/.test(id)) {
    throw new Error(`InstanceId must be an EC2 instance id (i-…), got ${JSON.stringify(id)}`);
  }
  return { InstanceId: id };
}

/** The instance's Spot request id, or null when it has none or the instance is gone. */
async function spotRequestOf(ec2: EC2Client, instanceId: string): Promise<string | null> {
  try {
    const out = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
    for (const reservation of out.Reservations ?? []) {
      for (const instance of reservation.Instances ?? []) {
        if (instance.InstanceId === instanceId && instance.SpotInstanceRequestId) {
          return instance.SpotInstanceRequestId;
        }
      }
    }
    return null;
  } catch (err) {
    if (isGone(err)) return null;
    throw err;
  }
}

/** Cancels the request; its state afterwards (`cancelled`…), or null when EC2 no longer knows it. */
async function cancel(ec2: EC2Client, requestId: string): Promise<string | null> {
  try {
    const out = await ec2.send(
      new CancelSpotInstanceRequestsCommand({ SpotInstanceRequestIds: [requestId] }),
    );
    const entry = out.CancelledSpotInstanceRequests?.find((r) => r.SpotInstanceRequestId === requestId);
    return entry?.State ?? null;
  } catch (err) {
    if (isGone(err)) return null;
    throw err;
  }
}

/** Live instances launched by `requestId` other than `runnerId`. */
async function instancesOfRequest(ec2: EC2Client, requestId: string, runnerId: string): Promise<string[]> {
  const found: string[] = [];
  let nextToken: string | undefined;
  do {
    const out = await ec2.send(
      new DescribeInstancesCommand({
        Filters: [
          { Name: 'spot-instance-request-id', Values: [requestId] },
          { Name: 'instance-state-name', Values: LIVE_STATES },
        ],
        NextToken: nextToken,
      }),
    );
    for (const reservation of out.Reservations ?? []) {
      for (const instance of reservation.Instances ?? []) {
        if (instance.InstanceId && instance.InstanceId !== runnerId) found.push(instance.InstanceId);
      }
    }
    nextToken = out.NextToken;
  } while (nextToken);
  return found;
}

function isGone(err: unknown): boolean {
  return err instanceof Error && GONE.has(err.name);
}
