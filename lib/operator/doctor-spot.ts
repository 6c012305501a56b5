/** Doctor's check of spot runners: each runner's Spot request, as the stack's canceller will see it. */
import {
  DescribeSpotInstanceRequestsCommand,
  type EC2Client,
  type Filter,
  type SpotInstanceRequest,
} from '@aws-sdk/client-ec2';
import { SPOT_REQUEST_TAG } from '../config/stack-outputs';
import { bad, message, ok, type Check } from './doctor-check';

/** All Spot requests matching the filters, across pages. */
async function describeSpotRequests(ec2: EC2Client, filters: Filter[]): Promise<SpotInstanceRequest[]> {
  const out: SpotInstanceRequest[] = [];
  let token: string | undefined;
  do {
    const res = await ec2.send(
      new DescribeSpotInstanceRequestsCommand({ Filters: filters, NextToken: token }),
    );
    out.push(...(res.SpotInstanceRequests ?? []));
    token = res.NextToken || undefined;
  } while (token);
  return out;
}

/**
 * Spot runners: each runner's Spot request carries the stack's tag (so the stack's canceller may
 * cancel it when the runner is deleted), is `active`, and is the request of that runner's instance.
 * Filters (EC2 API DescribeSpotInstanceRequests): `tag:<key>` = tag value, `instance-id` = the
 * instance that fulfilled the request. DescribeSpotInstanceRequests has no resource-level
 * permissions (Service Authorization Reference, Amazon EC2): the CLI needs it on `*`.
 */
export async function spotChecks(
  ec2: EC2Client,
  stackId: string | null,
  runnerIds: readonly string[],
  labFile: string,
): Promise<Check[]> {
  if (stackId === null)
    return [
      bad(
        'spot requests',
        'the stack id is unknown (DescribeStacks failed)',
        'fix the stack check above, then run doctor again',
      ),
    ];
  const listTagged = `aws ec2 describe-spot-instance-requests --filters Name=tag:${SPOT_REQUEST_TAG},Values=${stackId}`;
  let tagged: SpotInstanceRequest[];
  let untagged: SpotInstanceRequest[];
  try {
    tagged = await describeSpotRequests(ec2, [{ Name: `tag:${SPOT_REQUEST_TAG}`, Values: [stackId] }]);
    const notFound = runnerIds.filter((id) => !tagged.some((r) => r.InstanceId === id));
    untagged =
      notFound.length > 0 ? await describeSpotRequests(ec2, [{ Name: 'instance-id', Values: notFound }]) : [];
  } catch (err) {
    return [
      bad(
        'spot requests',
        message(err),
        'the CLI needs ec2:DescribeSpotInstanceRequests (no resource-level permissions: Resource "*")',
      ),
    ];
  }
  return runnerIds.map((id) => {
    const title = `runner ${id}: Spot request`;
    const mine = tagged.find((r) => r.InstanceId === id);
    if (mine) {
      const state = mine.State ?? 'unknown';
      return state === 'active'
        ? ok(title, `${mine.SpotInstanceRequestId ?? '?'} active, tagged ${SPOT_REQUEST_TAG}`)
        : bad(
            title,
            `${mine.SpotInstanceRequestId ?? '?'} ${state}${mine.Status?.Code ? ` (${mine.Status.Code}: ${mine.Status.Message ?? ''})` : ''}`,
            `the runner is not running on its request (interrupted or stopped?): see ${listTagged}; \`proxylab status\` says whether a run was interrupted`,
          );
    }
    const bare = untagged.find((r) => r.InstanceId === id);
    if (bare)
      return bad(
        title,
        `${bare.SpotInstanceRequestId ?? '?'} (${bare.State ?? '?'}) carries no ${SPOT_REQUEST_TAG} tag: the stack's canceller may not cancel it, and a destroy would leave it to reopen`,
        `the runner was not launched from the stack's spot launch template: npx proxylab destroy --lab ${labFile}, then aws ec2 cancel-spot-instance-requests --spot-instance-request-ids ${bare.SpotInstanceRequestId ?? '<id>'}, and deploy again`,
      );
    const others = tagged.map(
      (r) => `${r.SpotInstanceRequestId ?? '?'} → ${r.InstanceId ?? 'no instance'} (${r.State ?? '?'})`,
    );
    return bad(
      title,
      `no Spot request for this instance${others.length > 0 ? `; the stack's requests: ${others.join(', ')}` : ''}`,
      `the runner is on-demand or its request now serves another instance: see ${listTagged}; a redeploy (npx proxylab deploy --lab ${labFile}) replaces the runners`,
    );
  });
}
