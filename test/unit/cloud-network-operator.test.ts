/**
 * The operator's side of a lab in an existing VPC:
 *  - deploy chooses only the runners' zones, among the lab's subnets (EC2 DescribeSubnets and
 *    DescribeInstanceTypeOfferings), and refuses subnets CloudFormation would fail on, naming
 *    `network.subnetIds`;
 *  - `proxylab iam-policy` grants what the synth-time lookups and doctor's route check call;
 *  - deploy stages each pinned pooler release for hosts without internet, keeping it only with its
 *    published SHA-256 (a fake `fetch`: no network).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DescribeInstanceTypeOfferingsCommand, DescribeSubnetsCommand, EC2Client } from '@aws-sdk/client-ec2';
import 'aws-sdk-client-mock-jest';
import { loadLabFile } from '../../lib/config/load';
import type { LabConfig } from '../../lib/config/types';
import { UsageError } from '../../lib/core/errors';
import {
  chooseExistingVpcZones,
  chooseZonesInSubnets,
  type SubnetZone,
} from '../../lib/operator/availability-zones';
import { operatorPolicy } from '../../lib/operator/iam-policy';
import {
  labPoolerReleases,
  needsStagedPoolerSources,
  stagePoolerSources,
  stageReleases,
} from '../../lib/operator/pooler-sources';
import type { TarballRelease } from '../../lib/poolers/driver';
import { pgdoormanInstallCommands } from '../../lib/poolers/pgdoorman/install';
import { PGDOORMAN_RELEASES } from '../../lib/poolers/pgdoorman/releases';
import { poolerSourcePath } from '../../lib/poolers/sources';
import { iamProblems } from '../helpers/aws-calls/iam';
import { operator } from '../helpers/aws-calls/principals';
import { mockAws } from '../helpers/aws-calls/recorder';
import { REPO_ROOT } from '../helpers/cli';
import { scratchDir } from '../helpers/scratch';

const PRIVATE = loadLabFile(join(REPO_ROOT, 'labs', 'private.json'));
const INTERNET = loadLabFile(join(REPO_ROOT, 'labs', 'existing-vpc.json'));
const DEFAULT = loadLabFile(join(REPO_ROOT, 'labs', 'default.json'));
const VPC = 'vpc-0000000000000a001';
const [A, B] = ['subnet-0000000000000a011', 'subnet-0000000000000a012'];

const ec2 = mockAws(EC2Client, operator('deploy', 'private'));
afterEach(() => ec2.reset());

const subnet = (subnetId: string, name: string, id: string, vpcId = VPC): SubnetZone => ({
  subnetId,
  vpcId,
  zone: { name, id },
});
const NEEDS = { instanceType: 'c7g.large', rdsProxy: true, vpcId: VPC, subnetIds: [A, B] };

describe('deploy in an existing VPC: the runners go where their type is offered, among the lab subnets', () => {
  test('EC2 is asked for exactly the lab subnets and the type; the runners take the offering zones', async () => {
    // GIVEN us-east-1b (use1-az6) does not offer the type
    ec2.on(DescribeSubnetsCommand).resolves({
      Subnets: [
        { SubnetId: A, VpcId: VPC, AvailabilityZone: 'us-east-1a', AvailabilityZoneId: 'use1-az1' },
        { SubnetId: B, VpcId: VPC, AvailabilityZone: 'us-east-1b', AvailabilityZoneId: 'use1-az6' },
      ],
    });
    ec2.on(DescribeInstanceTypeOfferingsCommand).resolves({
      InstanceTypeOfferings: [{ Location: 'use1-az1' }, { Location: 'use1-az2' }],
    });
    // WHEN
    const zones = await chooseExistingVpcZones(new EC2Client({ region: 'us-east-1' }), NEEDS);
    // THEN
    expect(zones.runners).toEqual(['us-east-1a']);
    expect(ec2).toHaveReceivedCommandWith(DescribeSubnetsCommand, { SubnetIds: [A, B] });
  });

  test.each<[string, SubnetZone[], Partial<typeof NEEDS>, RegExp]>([
    [
      'a subnet EC2 does not describe',
      [subnet(A, 'us-east-1a', 'use1-az1')],
      {},
      /network\.subnetIds\[1\] subnet-0000000000000a012: EC2 does not describe it/,
    ],
    [
      'a subnet of another VPC',
      [subnet(A, 'us-east-1a', 'use1-az1'), subnet(B, 'us-east-1b', 'use1-az2', 'vpc-0000000000000f001')],
      {},
      /network\.subnetIds\[1\] subnet-0000000000000a012: in vpc-0000000000000f001, not network\.vpcId vpc-0000000000000a001/,
    ],
    [
      'one zone only',
      [subnet(A, 'us-east-1a', 'use1-az1'), subnet(B, 'us-east-1a', 'use1-az1')],
      {},
      /network\.subnetIds: all in us-east-1a \(use1-az1\); the database subnet group needs subnets in at least two/,
    ],
    [
      'a zone RDS Proxy does not support, with proxies',
      [subnet(A, 'us-east-1a', 'use1-az3'), subnet(B, 'us-east-1b', 'use1-az2')],
      {},
      /network\.subnetIds\[0\] subnet-0000000000000a011: in zone us-east-1a \(use1-az3\), where RDS Proxy cannot be created/,
    ],
    [
      'no zone of the subnets offers the type',
      [subnet(A, 'us-east-1a', 'use1-az4'), subnet(B, 'us-east-1b', 'use1-az5')],
      {},
      /runners\.instanceType c7g\.large is not offered in any zone of network\.subnetIds/,
    ],
  ])('refused: %s', (_what, subnets, over, message) => {
    expect(() =>
      chooseZonesInSubnets(subnets, ['use1-az1', 'use1-az2', 'use1-az3'], { ...NEEDS, ...over }),
    ).toThrow(UsageError);
    expect(() =>
      chooseZonesInSubnets(subnets, ['use1-az1', 'use1-az2', 'use1-az3'], { ...NEEDS, ...over }),
    ).toThrow(message);
  });

  test('use1-az3 is fine without proxies', () => {
    const subnets = [subnet(A, 'us-east-1a', 'use1-az3'), subnet(B, 'us-east-1b', 'use1-az2')];
    expect(chooseZonesInSubnets(subnets, ['use1-az3'], { ...NEEDS, rdsProxy: false }).runners).toEqual([
      'us-east-1a',
    ]);
  });
});

describe('proxylab iam-policy for an existing VPC', () => {
  const sids = (lab: LabConfig, role: 'run' | 'deploy'): string[] =>
    operatorPolicy(lab, { role }).Statement.map((s) => s.Sid);

  test.each<[string, LabConfig, string[], string[]]>([
    ['the lab’s own VPC: nothing of this', DEFAULT, [], []],
    ['internet egress: the VPC lookup only', INTERNET, [], ['LookUpVpc']],
    [
      'no internet: the VPC and S3 prefix-list lookups, and doctor’s route tables',
      PRIVATE,
      ['ReadRouteTables'],
      ['LookUpVpc', 'LookUpS3PrefixList', 'ReadS3PrefixListEntries'],
    ],
  ])('%s', (_what, lab, run, deploy) => {
    const network = ['ReadRouteTables', 'LookUpVpc', 'LookUpS3PrefixList', 'ReadS3PrefixListEntries'];
    expect(sids(lab, 'run').filter((s) => network.includes(s))).toEqual(run);
    expect(sids(lab, 'deploy').filter((s) => network.includes(s))).toEqual([...run, ...deploy]);
  });

  test("the VPC's account is the policy's account unless --account says otherwise", () => {
    expect(JSON.stringify(operatorPolicy(PRIVATE, { role: 'read' }))).toContain(
      ':111122223333:stack/proxylab-private/',
    );
    expect(JSON.stringify(operatorPolicy(PRIVATE, { role: 'read', account: '444455556666' }))).toContain(
      ':444455556666:stack/',
    );
  });

  test.each([
    // aws-cdk's VPC context provider (DescribeVpnGateways is not called: returnVpnGateways false)
    ['EC2', 'DescribeVpcs', { Filters: [{ Name: 'vpc-id', Values: [VPC] }] }],
    ['EC2', 'DescribeSubnets', { Filters: [{ Name: 'vpc-id', Values: [VPC] }] }],
    ['EC2', 'DescribeRouteTables', { Filters: [{ Name: 'vpc-id', Values: [VPC] }] }],
    // PrefixList.fromLookup: a Cloud Control list, whose handler reads the managed prefix lists
    ['CloudControl', 'ListResources', { TypeName: 'AWS::EC2::PrefixList' }],
    ['EC2', 'DescribeManagedPrefixLists', {}],
  ])('the deploy policy allows the synth-time lookup call %s %s', async (service, operation, input) => {
    expect(await iamProblems({ service, operation, input }, operator('deploy', 'private'))).toEqual([]);
  });

  test('the run policy of a lab with internet does not carry the route-table read', async () => {
    const call = { service: 'EC2', operation: 'DescribeRouteTables', input: {} };
    expect(await iamProblems(call, operator('run', 'existing-vpc'))).not.toEqual([]);
    expect(await iamProblems(call, operator('run', 'private'))).toEqual([]);
  });
});

describe('deploy stages the pooler sources of a lab without internet', () => {
  const release = labPoolerReleases(PRIVATE)[0] as TarballRelease;
  const bytes = new TextEncoder().encode('a tarball standing in for the release');
  const sha = createHash('sha256').update(bytes).digest('hex');
  const fake = { ...release, sha256: sha };
  const lab = PRIVATE;

  function fakeFetch(body: Uint8Array, status = 200): { fn: typeof fetch; urls: string[] } {
    const urls: string[] = [];
    const fn = ((url: string) => {
      urls.push(url);
      return Promise.resolve(new Response(body, { status, statusText: status === 200 ? 'OK' : 'Not Found' }));
    }) as unknown as typeof fetch;
    return { fn, urls };
  }

  test('only a lab with poolers and no internet needs it', () => {
    expect(needsStagedPoolerSources(PRIVATE)).toBe(true);
    expect(needsStagedPoolerSources(INTERNET)).toBe(false);
    expect(needsStagedPoolerSources({ ...PRIVATE, poolers: [] })).toBe(false);
  });

  test('downloads from the release URL, keeps the archive only with the published SHA-256, then reuses it', async () => {
    // GIVEN an empty staging directory and a release whose published hash is the stand-in's
    const env = { PROXYLAB_POOLER_SOURCES: scratchDir('proxylab-sources-') };
    const { fn, urls } = fakeFetch(bytes);
    // WHEN staged twice
    const first = await stageReleases([fake], { fetch: fn, env });
    const second = await stageReleases([fake], { fetch: fn, env });
    // THEN downloaded once, kept the second time, byte for byte
    const file = poolerSourcePath(fake, env);
    expect(first).toEqual([{ release: fake, file, action: 'downloaded', bytes: bytes.length }]);
    expect(second).toEqual([{ release: fake, file, action: 'kept', bytes: bytes.length }]);
    expect(urls).toEqual([fake.url]);
    expect(readFileSync(file)).toEqual(Buffer.from(bytes));
  });

  test('a PgDoorman pooler (a git tag built on the host) cannot be staged: deploy stops naming what its build fetches', () => {
    // GIVEN the private lab with its pooler turned into PgDoorman, past validation (which refuses it)
    const doorman = PRIVATE.poolers[0];
    if (!doorman) throw new Error('labs/private.json has no pooler');
    const lab: LabConfig = {
      ...PRIVATE,
      poolers: [{ ...doorman, kind: 'pgdoorman', version: PGDOORMAN_RELEASES[0]?.version ?? '?' }],
    };
    // WHEN
    const err = (() => {
      try {
        labPoolerReleases(lab);
        return null;
      } catch (e) {
        return e;
      }
    })();
    // THEN
    expect(err).toMatchObject({ code: 'pooler-source-not-stageable' });
    expect((err as Error).message).toMatch(/PgDoorman 3\.10\.7 cannot be staged .*github\.com/);
    // and its install lines refuse a staged source instead of fetching from upstream anyway
    const release = PGDOORMAN_RELEASES[0];
    if (!release) throw new Error('no PgDoorman release');
    expect(() => pgdoormanInstallCommands(release, { kind: 's3', uri: 's3://bucket/key.gz' })).toThrow(
      /cannot be installed from a staged archive \(s3:\/\/bucket\/key\.gz\): its host builds the pinned tag/,
    );
    expect(pgdoormanInstallCommands(release).join('\n')).toContain('git clone');
  });

  test("the lab's releases are its poolers' pinned versions, once each", () => {
    expect(labPoolerReleases(PRIVATE).map((r) => `${r.product} ${r.version}`)).toEqual([
      `pgbouncer ${PRIVATE.poolers[0]?.version ?? '?'}`,
    ]);
  });

  test.each<[string, Uint8Array, number, RegExp, string]>([
    [
      'other bytes than the published ones',
      new TextEncoder().encode('tampered'),
      200,
      /has SHA-256 [0-9a-f]{64}, not the published/,
      'pooler-source-checksum-mismatch',
    ],
    [
      'an HTTP error',
      bytes,
      404,
      /cannot download .* HTTP 404 Not Found; or put the release's tarball at .* yourself/,
      'pooler-source-download-failed',
    ],
  ])('%s: nothing is staged and the deploy stops', async (_what, body, status, message, code) => {
    const env = { PROXYLAB_POOLER_SOURCES: scratchDir('proxylab-sources-') };
    const { fn } = fakeFetch(body, status);
    // WHEN the real release (its published hash) is staged from the fake server
    const err = await stagePoolerSources(lab, { fetch: fn, env }).catch((e: unknown) => e);
    // THEN
    expect(err).toMatchObject({ code });
    expect((err as Error).message).toMatch(message);
    expect(existsSync(poolerSourcePath(release, env))).toBe(false);
  });

  test('a file already there with another hash is not kept: it is downloaded again', async () => {
    // GIVEN a stale file where the release's archive goes
    const env = { PROXYLAB_POOLER_SOURCES: scratchDir('proxylab-sources-') };
    const file = poolerSourcePath(fake, env);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, 'stale');
    // WHEN
    const staged = await stageReleases([fake], { fetch: fakeFetch(bytes).fn, env });
    // THEN
    expect(staged.map((x) => x.action)).toEqual(['downloaded']);
    expect(readFileSync(file)).toEqual(Buffer.from(bytes));
  });
});
