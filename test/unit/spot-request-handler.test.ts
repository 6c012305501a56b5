/**
 * The spot request keeper (lambda/cancel-spot-request): Create/Update record the runner's
 * SpotInstanceRequestId as the physical id, Delete cancels it; a failed create's rollback still
 * cancels (looked up from the instance), a request or instance EC2 no longer knows is done, an
 * instance the reopened request already launched fails the delete by name, and every path sends
 * exactly one CloudFormation response.
 */
import {
  CancelSpotInstanceRequestsCommand,
  DescribeInstancesCommand,
  EC2Client,
  EC2ServiceException,
} from '@aws-sdk/client-ec2';
import { mockAws } from '../helpers/aws-calls/recorder';
import { SPOT_CANCELLER } from '../helpers/aws-calls/principals';
import 'aws-sdk-client-mock-jest';
import {
  answer,
  type CustomResourceRequest,
  type CustomResourceResponse,
} from '../../lambda/cancel-spot-request';
import { handleSpotRequestEvent, type SpotRequestEvent } from '../../lambda/cancel-spot-request/spot-request';

const ec2Mock = mockAws(EC2Client, SPOT_CANCELLER);
const ec2 = new EC2Client({ region: 'eu-west-1' });

const RUNNER = 'i-0abc1234def567890';
const REQUEST = 'sir-0e54a519c9';

function ec2Error(name: string): EC2ServiceException {
  return new EC2ServiceException({ name, $fault: 'client', $metadata: {}, message: name });
}

function event(over: Partial<SpotRequestEvent> = {}): SpotRequestEvent {
  return {
    RequestType: 'Create',
    LogicalResourceId: 'RunnersRunner1ABCSpotRequest',
    ResourceProperties: { ServiceToken: 'arn:aws:lambda:eu-west-1:1:function:f', InstanceId: RUNNER },
    ...over,
  };
}

/** DescribeInstances by id answers the runner under REQUEST; by filter, `launched` (default: the runner). */
function answerDescribe(launched: string[] = [RUNNER]): void {
  ec2Mock
    .on(DescribeInstancesCommand, { InstanceIds: [RUNNER] })
    .resolves({ Reservations: [{ Instances: [{ InstanceId: RUNNER, SpotInstanceRequestId: REQUEST }] }] });
  ec2Mock
    .on(DescribeInstancesCommand, {
      Filters: [
        { Name: 'spot-instance-request-id', Values: [REQUEST] },
        { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] },
      ],
    })
    .resolves({ Reservations: [{ Instances: launched.map((InstanceId) => ({ InstanceId })) }] });
}

afterEach(() => ec2Mock.reset());

describe('create and update', () => {
  test('Create: the physical id is the runner’s Spot request id', async () => {
    // GIVEN
    answerDescribe();
    // WHEN
    const result = await handleSpotRequestEvent(event(), ec2);
    // THEN
    expect(result).toEqual({ physicalResourceId: REQUEST, data: { SpotInstanceRequestId: REQUEST } });
    expect(ec2Mock).toHaveReceivedCommandWith(DescribeInstancesCommand, { InstanceIds: [RUNNER] });
    expect(ec2Mock).not.toHaveReceivedCommand(CancelSpotInstanceRequestsCommand);
  });

  test('Update to a replaced runner: the new request id (CloudFormation then deletes the old one)', async () => {
    // GIVEN the runner was replaced: a new instance under a new request
    const newRunner = 'i-0fff0000aaaa11112';
    ec2Mock.on(DescribeInstancesCommand, { InstanceIds: [newRunner] }).resolves({
      Reservations: [{ Instances: [{ InstanceId: newRunner, SpotInstanceRequestId: 'sir-new1' }] }],
    });
    // WHEN
    const result = await handleSpotRequestEvent(
      event({
        RequestType: 'Update',
        PhysicalResourceId: REQUEST,
        ResourceProperties: { InstanceId: newRunner },
      }),
      ec2,
    );
    // THEN
    expect(result.physicalResourceId).toBe('sir-new1');
    expect(ec2Mock).not.toHaveReceivedCommand(CancelSpotInstanceRequestsCommand);
  });

  test('Create on an on-demand instance fails: there is no request to keep', async () => {
    ec2Mock
      .on(DescribeInstancesCommand)
      .resolves({ Reservations: [{ Instances: [{ InstanceId: RUNNER }] }] });
    await expect(handleSpotRequestEvent(event(), ec2)).rejects.toThrow(/has no SpotInstanceRequestId/);
  });

  test('a property that is not an instance id is refused before any call', async () => {
    await expect(
      handleSpotRequestEvent(event({ ResourceProperties: { InstanceId: 'Runner1' } }), ec2),
    ).rejects.toThrow(/InstanceId must be an EC2 instance id/);
    expect(ec2Mock).not.toHaveReceivedAnyCommand();
  });
});

describe('delete', () => {
  test('cancels the request named by the physical id (SpotInstanceRequestIds)', async () => {
    // GIVEN
    answerDescribe();
    ec2Mock
      .on(CancelSpotInstanceRequestsCommand)
      .resolves({ CancelledSpotInstanceRequests: [{ SpotInstanceRequestId: REQUEST, State: 'cancelled' }] });
    const lines: string[] = [];
    // WHEN
    const result = await handleSpotRequestEvent(
      event({ RequestType: 'Delete', PhysicalResourceId: REQUEST }),
      ec2,
      (l) => lines.push(l),
    );
    // THEN
    expect(ec2Mock).toHaveReceivedCommandTimes(CancelSpotInstanceRequestsCommand, 1);
    expect(ec2Mock).toHaveReceivedCommandWith(CancelSpotInstanceRequestsCommand, {
      SpotInstanceRequestIds: [REQUEST],
    });
    // the id is known: no lookup by instance id
    expect(ec2Mock).not.toHaveReceivedCommandWith(DescribeInstancesCommand, { InstanceIds: [RUNNER] });
    expect(result.physicalResourceId).toBe(REQUEST);
    expect(lines.join('\n')).toMatch(/cancelled Spot request sir-0e54a519c9 \(state cancelled\)/);
  });

  test('a request EC2 no longer knows is done (it cannot launch anything)', async () => {
    answerDescribe([]);
    ec2Mock.on(CancelSpotInstanceRequestsCommand).rejects(ec2Error('InvalidSpotInstanceRequestID.NotFound'));
    const result = await handleSpotRequestEvent(
      event({ RequestType: 'Delete', PhysicalResourceId: REQUEST }),
      ec2,
    );
    expect(result.physicalResourceId).toBe(REQUEST);
  });

  test('any other cancel error fails the delete (visible, retried by the next delete)', async () => {
    answerDescribe();
    ec2Mock.on(CancelSpotInstanceRequestsCommand).rejects(ec2Error('UnauthorizedOperation'));
    await expect(
      handleSpotRequestEvent(event({ RequestType: 'Delete', PhysicalResourceId: REQUEST }), ec2),
    ).rejects.toThrow('UnauthorizedOperation');
  });

  test('rollback of a failed create: the request is looked up from the instance and cancelled', async () => {
    answerDescribe();
    ec2Mock.on(CancelSpotInstanceRequestsCommand).resolves({
      CancelledSpotInstanceRequests: [{ SpotInstanceRequestId: REQUEST, State: 'cancelled' }],
    });
    await handleSpotRequestEvent(
      event({ RequestType: 'Delete', PhysicalResourceId: `no-spot-request:${RUNNER}` }),
      ec2,
    );
    expect(ec2Mock).toHaveReceivedCommandWith(DescribeInstancesCommand, { InstanceIds: [RUNNER] });
    expect(ec2Mock).toHaveReceivedCommandWith(CancelSpotInstanceRequestsCommand, {
      SpotInstanceRequestIds: [REQUEST],
    });
  });

  test('rollback when the instance is already gone: nothing to cancel, success', async () => {
    ec2Mock.on(DescribeInstancesCommand).rejects(ec2Error('InvalidInstanceID.NotFound'));
    const result = await handleSpotRequestEvent(
      event({ RequestType: 'Delete', PhysicalResourceId: 'no-spot-request:x' }),
      ec2,
    );
    expect(result.physicalResourceId).toBe('no-spot-request:x');
    expect(ec2Mock).not.toHaveReceivedCommand(CancelSpotInstanceRequestsCommand);
  });

  test('an instance the reopened request already launched fails the delete by name', async () => {
    // GIVEN the runner was terminated before the cancel, and EC2 fulfilled the reopened request
    answerDescribe(['i-0deadbeef0000001']);
    ec2Mock.on(CancelSpotInstanceRequestsCommand).resolves({
      CancelledSpotInstanceRequests: [{ SpotInstanceRequestId: REQUEST, State: 'cancelled' }],
    });
    // WHEN / THEN
    await expect(
      handleSpotRequestEvent(event({ RequestType: 'Delete', PhysicalResourceId: REQUEST }), ec2),
    ).rejects.toThrow(/already launched i-0deadbeef0000001 after runner i-0abc1234def567890; terminate it/);
  });
});

describe('the CloudFormation response', () => {
  const request = (over: Partial<CustomResourceRequest> = {}): CustomResourceRequest => ({
    ...event(),
    ResponseURL: 'https://cloudformation-custom-resource-response.example/presigned',
    StackId: 'arn:aws:cloudformation:eu-west-1:1:stack/proxylab-spotty/abc',
    RequestId: 'req-1',
    ...over,
  });

  async function responseTo(
    req: CustomResourceRequest,
  ): Promise<{ url: string; body: CustomResourceResponse }> {
    const sent: Array<{ url: string; body: CustomResourceResponse }> = [];
    const logged: string[] = [];
    await answer(
      req,
      ec2,
      (url, body) => {
        sent.push({ url, body });
        return Promise.resolve();
      },
      (line) => logged.push(line),
    );
    expect(sent).toHaveLength(1);
    const [first] = sent;
    if (!first) throw new Error('no response sent');
    // a failure is logged with its reason (the function's log group), a success with what it did
    expect(logged.join('\n')).toMatch(first.body.Status === 'FAILED' ? first.body.Reason : /Spot request/);
    return first;
  }

  test('success carries the request id as physical id and echoes the request ids', async () => {
    answerDescribe();
    const { url, body } = await responseTo(request());
    expect(url).toBe('https://cloudformation-custom-resource-response.example/presigned');
    expect(body).toEqual({
      Status: 'SUCCESS',
      Reason: 'OK',
      PhysicalResourceId: REQUEST,
      StackId: 'arn:aws:cloudformation:eu-west-1:1:stack/proxylab-spotty/abc',
      RequestId: 'req-1',
      LogicalResourceId: 'RunnersRunner1ABCSpotRequest',
      Data: { SpotInstanceRequestId: REQUEST },
    });
  });

  test('a failed create answers FAILED with an id its rollback Delete recognises', async () => {
    ec2Mock.on(DescribeInstancesCommand).rejects(ec2Error('RequestLimitExceeded'));
    const { body } = await responseTo(request());
    expect(body.Status).toBe('FAILED');
    expect(body.Reason).toMatch(/RequestLimitExceeded/);
    expect(body.PhysicalResourceId).toBe(`no-spot-request:${RUNNER}`);
  });

  test('a failed delete keeps its physical id (a new one would read as a replacement)', async () => {
    answerDescribe();
    ec2Mock.on(CancelSpotInstanceRequestsCommand).rejects(ec2Error('UnauthorizedOperation'));
    const { body } = await responseTo(request({ RequestType: 'Delete', PhysicalResourceId: REQUEST }));
    expect(body.Status).toBe('FAILED');
    expect(body.PhysicalResourceId).toBe(REQUEST);
  });
});
