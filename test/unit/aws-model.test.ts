/**
 * The AWS model check (test/helpers/aws-calls/model.ts): hand-written SDK inputs against botocore's
 * published models, one row per kind of problem, and the real PI fetcher through a mocked client.
 */
import { GetResourceMetricsCommand, PIClient } from '@aws-sdk/client-pi';
import { mockAws } from '../helpers/aws-calls/recorder';
import { COLLECTOR } from '../helpers/aws-calls/principals';
import { buildRunRequest } from '../../lib/aws/run-request';
import type { RunRequestArgs } from '../../lib/aws/runner-args';
import { buildRunCommands } from '../../lib/operator/ssm';
import { fetchPi, planPiRequests } from '../../lib/collector';
import {
  compilePattern,
  modelProblems,
  newestModelFile,
  readFullModel,
  serviceModel,
  SHAPE_FIELDS,
  skippedPatterns,
} from '../helpers/aws-calls/model';
import { expectModelValid, mockModelProblems, sdkCallOf } from '../helpers/aws-calls/model-mocks';

const piMock = mockAws(PIClient, COLLECTOR);
afterEach(() => piMock.reset());

const UUID = '11111111-2222-3333-4444-555555555555';
const INSTANCE = 'i-0123456789abcdef0';
const PI_INPUT = {
  ServiceType: 'RDS',
  Identifier: 'db-ABCDEFGHIJKLMNOPQRSTU1VW2X',
  MetricQueries: [{ Metric: 'db.load.avg' }],
  StartTime: new Date('2026-11-21T10:00:00Z'),
  EndTime: new Date('2026-11-21T10:05:00Z'),
  PeriodInSeconds: 60,
  PeriodAlignment: 'START_TIME',
};

describe('a valid input has no problems', () => {
  test.each<[string, string, unknown]>([
    ['PI', 'GetResourceMetrics', PI_INPUT],
    ['SSM', 'GetCommandInvocation', { CommandId: UUID, InstanceId: INSTANCE }],
    [
      'SSM',
      'SendCommand',
      {
        DocumentName: 'AWS-RunShellScript',
        InstanceIds: [INSTANCE],
        TimeoutSeconds: 600,
        Parameters: { commands: ['echo hi'] },
      },
    ],
    ['S3', 'PutObject', { Bucket: 'b', Key: 'runs/r1/x.json', Body: '{}', ContentType: 'application/json' }],
    ['S3', 'PutObject', { Bucket: 'b', Key: 'k', Body: new Uint8Array([1, 2]) }],
    [
      'Lambda',
      'Invoke',
      { FunctionName: 'f', InvocationType: 'RequestResponse', Payload: new Uint8Array(3) },
    ],
    ['Secrets Manager', 'GetSecretValue', { SecretId: 'arn:aws:secretsmanager:us-east-1:1:secret:x' }],
    // undefined and null members are left out by the SDK's serializers
    ['S3', 'ListObjectsV2', { Bucket: 'b', Prefix: 'runs/', ContinuationToken: undefined }],
    // the SDK fills in an idempotency token the caller leaves out, although the model requires none here
    [
      'Scheduler',
      'CreateSchedule',
      {
        Name: 's',
        ScheduleExpression: 'at(2026-11-21T18:00:00)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: {
          Arn: 'arn:aws:lambda:us-east-1:123456789012:function:f',
          RoleArn: 'arn:aws:iam::123456789012:role/r',
        },
      },
    ],
    // an operation without input members
    ['EC2', 'DescribeAvailabilityZones', {}],
  ])('%s %s', (service, operation, input) => {
    expect(modelProblems(service, operation, input)).toEqual([]);
  });
});

describe('each kind of problem is reported with the path, the value and what the model allows', () => {
  test.each<[string, string, string, unknown, string]>([
    [
      'enum',
      'PI',
      'GetResourceMetrics',
      { ...PI_INPUT, PeriodAlignment: 'START' },
      `PI GetResourceMetrics: PeriodAlignment = "START" is not one of the model's PeriodAlignment values: END_TIME, START_TIME`,
    ],
    [
      'unknown member (typo)',
      'PI',
      'GetResourceMetrics',
      { ...PI_INPUT, PeriodInSecond: 60 },
      'PI GetResourceMetrics: PeriodInSecond: not a member of GetResourceMetricsRequest',
    ],
    [
      'required member missing',
      'PI',
      'GetResourceMetrics',
      { ...PI_INPUT, Identifier: undefined },
      'PI GetResourceMetrics: Identifier: required by the model (GetResourceMetricsRequest) but missing',
    ],
    [
      'number below min',
      'SSM',
      'SendCommand',
      { DocumentName: 'AWS-RunShellScript', TimeoutSeconds: 10 },
      "SSM SendCommand: TimeoutSeconds = 10 below the model's min 30",
    ],
    [
      'number above max',
      'SSM',
      'SendCommand',
      { DocumentName: 'AWS-RunShellScript', TimeoutSeconds: 2_592_001 },
      "SSM SendCommand: TimeoutSeconds = 2592001 above the model's max 2592000",
    ],
    [
      'string too long',
      'SSM',
      'SendCommand',
      { DocumentName: 'AWS-RunShellScript', Comment: 'x'.repeat(101) },
      "has length 101 above the model's max 100",
    ],
    [
      'string too short',
      'SSM',
      'GetCommandInvocation',
      { CommandId: 'cmd-1', InstanceId: INSTANCE },
      `SSM GetCommandInvocation: CommandId = "cmd-1" has length 5 below the model's min 36`,
    ],
    [
      'list too long',
      'PI',
      'GetResourceMetrics',
      { ...PI_INPUT, MetricQueries: Array.from({ length: 16 }, () => ({ Metric: 'db.load.avg' })) },
      "PI GetResourceMetrics: MetricQueries has length 16 above the model's max 15",
    ],
    [
      'list too short',
      'PI',
      'GetResourceMetrics',
      { ...PI_INPUT, MetricQueries: [] },
      "PI GetResourceMetrics: MetricQueries has length 0 below the model's min 1",
    ],
    [
      'pattern, in a list',
      'SSM',
      'SendCommand',
      { DocumentName: 'AWS-RunShellScript', InstanceIds: ['i-0aaa'] },
      `SSM SendCommand: InstanceIds[0] = "i-0aaa" does not match the model's InstanceId pattern`,
    ],
    [
      'nested path',
      'PI',
      'GetResourceMetrics',
      { ...PI_INPUT, MetricQueries: [{ Metric: 'db.load.avg' }, { Metric: 'db.load.avg', Filter: [] }] },
      'PI GetResourceMetrics: MetricQueries[1].Filter = an array: the model wants a map (MetricQueryFilterMap)',
    ],
    [
      'map entry count',
      'Lambda',
      'CreateEventSourceMapping',
      { FunctionName: 'f', SelfManagedEventSource: { Endpoints: {} } },
      "Lambda CreateEventSourceMapping: SelfManagedEventSource.Endpoints has entry count 0 below the model's min 1",
    ],
    [
      'map key enum',
      'Lambda',
      'CreateEventSourceMapping',
      { FunctionName: 'f', SelfManagedEventSource: { Endpoints: { BOOTSTRAP: ['b:9092'] } } },
      `Lambda CreateEventSourceMapping: SelfManagedEventSource.Endpoints{key "BOOTSTRAP"} = "BOOTSTRAP" is not one of the model's EndPointType values: KAFKA_BOOTSTRAP_SERVERS`,
    ],
    [
      'union with no member set',
      'CloudWatch',
      'PutMetricAlarm',
      { AlarmName: 'a', EvaluationCriteria: {} },
      'CloudWatch PutMetricAlarm: EvaluationCriteria: EvaluationCriteria is a union, exactly one member must be set, got 0',
    ],
    [
      'string given a number',
      'S3',
      'GetObject',
      { Bucket: 'b', Key: 7 },
      'S3 GetObject: Key = 7: the model wants a string (ObjectKey)',
    ],
    [
      'integer given a fraction',
      'PI',
      'GetResourceMetrics',
      { ...PI_INPUT, PeriodInSeconds: 1.5 },
      'PI GetResourceMetrics: PeriodInSeconds = 1.5: the model wants a whole number (integer Integer)',
    ],
    [
      'boolean given a string',
      'EC2',
      'DescribeInstances',
      { DryRun: 'true' },
      'EC2 DescribeInstances: DryRun = "true": the model wants a boolean',
    ],
    [
      'timestamp given a string',
      'PI',
      'GetResourceMetrics',
      { ...PI_INPUT, StartTime: '2026-11-21T10:00:00Z' },
      'PI GetResourceMetrics: StartTime = "2026-11-21T10:00:00Z": the model wants a timestamp (a valid Date)',
    ],
    [
      'timestamp given an invalid Date',
      'PI',
      'GetResourceMetrics',
      { ...PI_INPUT, EndTime: new Date('nope') },
      'PI GetResourceMetrics: EndTime = Invalid Date: the model wants a timestamp (a valid Date)',
    ],
    [
      'blob given a number',
      'Lambda',
      'Invoke',
      { FunctionName: 'f', Payload: 42 },
      'Lambda Invoke: Payload = 42: the model wants a blob (Uint8Array, string or stream)',
    ],
    [
      'list given a string',
      'SSM',
      'SendCommand',
      { DocumentName: 'AWS-RunShellScript', InstanceIds: INSTANCE },
      `SSM SendCommand: InstanceIds = "${INSTANCE}": the model wants a list (InstanceIdList)`,
    ],
    [
      'structure given an array',
      'Scheduler',
      'UpdateSchedule',
      { Name: 's', ScheduleExpression: 'rate(1 hour)', FlexibleTimeWindow: [], Target: {} },
      'Scheduler UpdateSchedule: FlexibleTimeWindow = an array: the model wants a structure (FlexibleTimeWindow)',
    ],
    [
      'unknown operation',
      'S3',
      'GetObjects',
      { Bucket: 'b' },
      'S3 GetObjects: not an operation of the model (2006-03-01)',
    ],
    ['unknown service', 'S4', 'GetObject', {}, 'S4: botocore has no model with serviceId "S4"'],
  ])('%s', (_kind, service, operation, input, expected) => {
    // WHEN
    const problems = modelProblems(service, operation, input);
    // THEN
    expect(problems.join('\n')).toContain(expected);
  });

  test('every problem is reported at once', () => {
    // GIVEN three independent problems
    const input = { ...PI_INPUT, ServiceType: 'rds', PeriodInSeconds: '60', Identifier: undefined };
    // WHEN
    const problems = modelProblems('PI', 'GetResourceMetrics', input);
    // THEN
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(/ServiceType = "rds" is not one of/);
    expect(problems.join('\n')).toMatch(/PeriodInSeconds = "60": the model wants a whole number/);
    expect(problems.join('\n')).toMatch(/Identifier: required/);
  });
});

describe('which model', () => {
  test.each([
    ['S3', 's3'],
    ['RDS', 'rds'],
    ['SSM', 'ssm'],
    ['CloudWatch', 'monitoring'],
    ['PI', 'pi'],
    ['CloudFormation', 'cloudformation'],
    ['EC2', 'ec2'],
    ['Lambda', 'lambda'],
    ['Scheduler', 'scheduler'],
    ['Secrets Manager', 'secretsmanager'],
  ])(
    'serviceId %s is the model whose metadata says so (endpoint prefix %s), at its newest api version',
    (id, prefix) => {
      // WHEN
      const model = serviceModel(id);
      // THEN
      expect(model?.metadata.serviceId).toBe(id);
      expect((model?.metadata as { endpointPrefix?: string } | undefined)?.endpointPrefix).toBe(prefix);
    },
  );

  test('the newest api version: RDS 2014-10-31 rather than 2014-09-01', () => {
    expect(serviceModel('RDS')?.metadata.apiVersion).toBe('2014-10-31');
  });

  test('a serviceId whose botocore directory has another name is found by its metadata', () => {
    // "CloudWatch Logs" lives in botocore/data/logs
    expect(serviceModel('CloudWatch Logs')?.metadata.serviceId).toBe('CloudWatch Logs');
  });
});

describe('the slim model the checks read (kept on disk per model file)', () => {
  test.each([
    ['S3', 's3'],
    ['EC2', 'ec2'],
    ['RDS', 'rds'],
    ['SSM', 'ssm'],
    ['CloudWatch', 'cloudwatch'],
    ['PI', 'pi'],
    ['Lambda', 'lambda'],
    ['Secrets Manager', 'secretsmanager'],
  ])('%s: every operation, and every field the check reads of each shape an input reaches', (id, dir) => {
    // GIVEN the model as botocore publishes it
    const file = newestModelFile(dir);
    if (file === null) throw new Error(`botocore has no ${dir} model`);
    const full = readFullModel(file);
    // WHEN
    const slim = serviceModel(id);
    // THEN the same metadata and operations, each with its input shape
    expect(slim?.metadata).toEqual(full.metadata);
    const inputs = (ops: typeof full.operations): [string, string | undefined][] =>
      Object.entries(ops).map(([name, op]) => [name, op.input?.shape]);
    expect(inputs(slim?.operations ?? {})).toEqual(inputs(full.operations));
    // every shape reached from an input is there, with the fields the check reads
    const reached = new Set<string>();
    const visit = (name: string): void => {
      if (reached.has(name)) return;
      reached.add(name);
      const shape = full.shapes[name];
      for (const m of Object.values(shape?.members ?? {})) visit(m.shape);
      for (const r of [shape?.member, shape?.key, shape?.value]) if (r) visit(r.shape);
    };
    for (const op of Object.values(full.operations)) if (op.input) visit(op.input.shape);
    expect(Object.keys(slim?.shapes ?? {}).sort()).toEqual([...reached].sort());
    // one comparison per shape, as JSON (EC2 alone has ~1900 shapes of up to 13 fields)
    const kept = (shape: (typeof full.shapes)[string] | undefined): string =>
      JSON.stringify(
        SHAPE_FIELDS.map((field) => {
          if (field === 'members')
            return Object.entries(shape?.members ?? {}).map(([k, m]) => [k, m.shape, m.idempotencyToken]);
          if (field === 'member' || field === 'key' || field === 'value') return shape?.[field]?.shape;
          return shape?.[field];
        }),
      );
    const differ = [...reached].filter((name) => kept(slim?.shapes[name]) !== kept(full.shapes[name]));
    expect(differ).toEqual([]);
  });
});

describe('model patterns (ECMA-262, not anchored; Java-isms translated or skipped)', () => {
  test.each<[string, string, boolean]>([
    // not anchored: a pattern matches anywhere unless it says ^ / $
    ['.*\\S.*', '  x ', true],
    ['.*\\S.*', '   ', false],
    ['\\Aab\\z', 'ab', true],
    ['\\Aab\\z', 'xab', false],
    ['^\\p{Alnum}+$', 'ab12', true],
    ['^\\p{Alnum}+$', 'ab-12', false],
    ['^[\\p{Alnum}_-]+$', 'a_b-1', true],
    ['(?i)^all$', 'ALL', true],
    ['(?s)^.{1,3}$', 'a\nb', true],
    ['^[\\p{L}\\p{N}]+$', 'Zürich1', true],
  ])('%s on %j → %s', (pattern, value, matches) => {
    const re = compilePattern(pattern);
    expect(re).not.toBeNull();
    expect(re?.test(value)).toBe(matches);
  });

  test('a pattern JS cannot express is skipped and listed, never guessed', () => {
    // GIVEN a Java possessive quantifier
    const pattern = '[0-9A-Z]{2}+';
    // WHEN / THEN
    expect(compilePattern(pattern)).toBeNull();
    expect(skippedPatterns()).toContain(pattern);
  });
});

describe('through the real collector code (lib/collector/fetch-pi.ts) and a mocked PI client', () => {
  const WINDOW = { start: '2026-11-21T10:00:00Z', end: '2026-11-21T10:03:00Z' };
  const resources = { clusterId: 'c', instanceIds: ['w'], piResourceIds: ['db-RES1'], proxies: [] };

  async function fetchOnce(): Promise<void> {
    piMock.on(GetResourceMetricsCommand).resolves({ MetricList: [] });
    await fetchPi(new PIClient({ region: 'us-east-1' }), planPiRequests(resources, WINDOW));
  }

  test('what fetchPi sends is valid for the PI model', async () => {
    // WHEN
    await fetchOnce();
    // THEN
    expect(piMock.calls()).toHaveLength(1);
    expect(mockModelProblems(piMock)).toEqual([]);
    expect(() => expectModelValid(piMock)).not.toThrow();
  });

  test("the same call with PeriodAlignment 'START' is reported (the value PI would refuse)", async () => {
    // GIVEN what fetchPi really sent
    await fetchOnce();
    const sent = sdkCallOf(piMock.calls()[0]!);
    expect(sent).toMatchObject({ service: 'PI', operation: 'GetResourceMetrics' });
    // WHEN its PeriodAlignment is wrong
    const problems = modelProblems(sent.service, sent.operation, {
      ...(sent.input as object),
      PeriodAlignment: 'START',
    });
    // THEN
    expect(problems).toEqual([
      `PI GetResourceMetrics: PeriodAlignment = "START" is not one of the model's PeriodAlignment values: END_TIME, START_TIME`,
    ]);
  });
});

describe('production inputs at their limits', () => {
  test('SendCommand for the longest run id (128 characters) and a long suite name is valid (Comment ≤ 100, key prefix ≤ 500)', () => {
    // GIVEN a run request at the run id's limit (RUN_ID_PATTERN: 1 + 127 characters)
    const args: RunRequestArgs = {
      runId: `r${'x'.repeat(127)}`,
      suite: 'a-suite-name-as-long-as-anyone-would-write-it',
      bucket: 'lab-results',
      secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:lab-db-AbCdEf',
      proxies: [],
      poolers: [],
      poolerAdminSecretArn: null,
      writerEndpoint: { host: 'lab.cluster-abc.us-east-1.rds.amazonaws.com', port: 5432 },
      database: { engine: 'aurora-postgresql', instanceClass: 'db.r6g.large' },
      region: 'us-east-1',
      startAt: '2026-11-21T11:00:00.000Z',
      collector: null,
      barrierTimeoutSec: 900,
      expectVersion: null,
    };
    const request = buildRunRequest(args, 3);
    // WHEN
    const plans = buildRunCommands([INSTANCE, 'i-0123456789abcdef1', 'i-0123456789abcdef2'], request);
    // THEN
    expect(plans.flatMap((p) => modelProblems('SSM', 'SendCommand', p.input))).toEqual([]);
  });
});
