/**
 * Spot request keeper Lambda: wiring only. The function is the custom resource's ServiceToken
 * itself (no provider framework, no second function): it runs lambda/cancel-spot-request/spot-request.ts
 * and PUTs the result to the presigned ResponseURL (CloudFormation User Guide, custom resource
 * response objects: Status, Reason, PhysicalResourceId, StackId, RequestId, LogicalResourceId, Data).
 * Every path answers, also a failure, so CloudFormation never waits for the hour-long timeout.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { failedCreatePhysicalId, handleSpotRequestEvent, type SpotRequestEvent } from './spot-request';

const ec2 = new EC2Client({});

/** The request fields the response needs on top of what the handler reads. */
export interface CustomResourceRequest extends SpotRequestEvent {
  readonly ResponseURL: string;
  readonly StackId: string;
  readonly RequestId: string;
}

export interface CustomResourceResponse {
  readonly Status: 'SUCCESS' | 'FAILED';
  readonly Reason: string;
  readonly PhysicalResourceId: string;
  readonly StackId: string;
  readonly RequestId: string;
  readonly LogicalResourceId: string;
  readonly Data: Readonly<Record<string, string>>;
}

export type Respond = (url: string, body: CustomResourceResponse) => Promise<void>;

export async function handler(event: CustomResourceRequest): Promise<void> {
  await answer(event, ec2, putResponse);
}

/** Runs the event and sends exactly one response; exported for tests (client and transport injected). */
export async function answer(
  event: CustomResourceRequest,
  client: EC2Client,
  respond: Respond,
  log: (line: string) => void = (line) => console.log(line),
): Promise<void> {
  const base = {
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
  };
  let body: CustomResourceResponse;
  try {
    const result = await handleSpotRequestEvent(event, client, log);
    body = {
      ...base,
      Status: 'SUCCESS',
      Reason: 'OK',
      PhysicalResourceId: result.physicalResourceId,
      Data: result.data,
    };
  } catch (err) {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    log(reason);
    body = {
      ...base,
      Status: 'FAILED',
      // CloudFormation shows the reason in the stack events; it must stay under the 4 KiB response limit.
      Reason: reason.slice(0, 1000),
      // A failed update or delete keeps its id (a new one would read as a replacement); a failed
      // create gets one the rollback's Delete recognises as "no request recorded".
      PhysicalResourceId: event.PhysicalResourceId ?? failedCreatePhysicalIdOrLogical(event),
      Data: {},
    };
  }
  await respond(event.ResponseURL, body);
}

function failedCreatePhysicalIdOrLogical(event: CustomResourceRequest): string {
  try {
    return failedCreatePhysicalId(event);
  } catch {
    return `no-spot-request:${event.LogicalResourceId}`;
  }
}

/** PUT with an empty content type, as the presigned S3 URL expects. */
async function putResponse(url: string, body: CustomResourceResponse): Promise<void> {
  const res = await fetch(url, {
    method: 'PUT',
    headers: { 'content-type': '' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`CloudFormation response PUT failed: HTTP ${res.status}`);
}
