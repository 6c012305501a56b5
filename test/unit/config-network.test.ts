/**
 * The lab's `network` section (lib/config/network.ts): `"create"` (the default, the lab's own VPC)
 * or an existing VPC and private subnets. Every bad value is one problem naming the field, the value
 * and what is allowed, and rules between fields (region, endpoints, endpointCidrs) run even when
 * other fields are broken.
 */
import { expect } from '@jest/globals';
import { formatProblems, summarizeLab, validateLab, type LabProblem } from '../../lib/config';
import {
  createdEndpointServices,
  isPrivateNetwork,
  PRIVATE_ENDPOINT_SERVICES,
} from '../../lib/config/network';

const VPC = 'vpc-0123456789abcdef0';
const A = 'subnet-0123456789abcdef1';
const B = 'subnet-0123456789abcdef2';
const EXISTING = { vpcId: VPC, subnetIds: [A, B], account: '111122223333', egress: 'vpc-endpoints' };

function problemsOf(raw: unknown): readonly LabProblem[] {
  const r = validateLab(raw);
  if (r.ok) throw new Error(`expected problems, lab was valid: ${JSON.stringify(r.lab)}`);
  return r.problems;
}

describe('valid network sections, resolved', () => {
  test.each<[string, unknown, unknown]>([
    ['absent: the lab’s own VPC', undefined, { mode: 'create' }],
    ['"create"', 'create', { mode: 'create' }],
    [
      'an existing VPC without internet: the stack creates the endpoints by default',
      EXISTING,
      {
        mode: 'existing',
        account: '111122223333',
        region: 'eu-west-1',
        vpcId: VPC,
        subnetIds: [A, B],
        egress: 'vpc-endpoints',
        endpoints: 'create',
        endpointCidrs: [],
      },
    ],
    [
      "the network team's endpoints, where they are",
      { ...EXISTING, endpoints: 'existing', endpointCidrs: ['10.0.0.0/8'] },
      expect.objectContaining({ endpoints: 'existing', endpointCidrs: ['10.0.0.0/8'] }),
    ],
    [
      'an existing VPC with internet egress (17-digit ids, 8-digit ids alike)',
      { ...EXISTING, vpcId: 'vpc-0123abcd', subnetIds: ['subnet-0123abcd', B], egress: 'internet' },
      expect.objectContaining({ egress: 'internet', vpcId: 'vpc-0123abcd' }),
    ],
  ])('%s', (_what, network, expected) => {
    // GIVEN / WHEN
    const r = validateLab({ name: 'n', region: 'eu-west-1', ...(network === undefined ? {} : { network }) });
    // THEN
    if (!r.ok) throw new Error(formatProblems(r.problems));
    expect(r.lab.network).toEqual(expected);
  });

  test('private means an existing VPC with egress "vpc-endpoints"; only endpoints "create" makes the stack create them', () => {
    const lab = (network: unknown) => {
      const r = validateLab({ name: 'n', region: 'eu-west-1', network });
      if (!r.ok) throw new Error(formatProblems(r.problems));
      return r.lab.network;
    };
    expect(createdEndpointServices(lab(EXISTING))).toEqual(PRIVATE_ENDPOINT_SERVICES);
    expect(createdEndpointServices(lab({ ...EXISTING, endpoints: 'existing' }))).toEqual([]);
    expect(createdEndpointServices(lab({ ...EXISTING, egress: 'internet' }))).toEqual([]);
    expect(isPrivateNetwork(lab({ ...EXISTING, endpoints: 'existing' }))).toBe(true);
    expect(isPrivateNetwork(lab('create'))).toBe(false);
  });

  test('the summary names the VPC and the egress', () => {
    const r = validateLab({ name: 'n', region: 'eu-west-1', network: EXISTING });
    expect(r.ok && summarizeLab(r.lab)).toMatch(
      /; existing vpc-0123456789abcdef0 \(2 subnets, egress vpc-endpoints, create endpoints\); ttl 8 h$/,
    );
  });
});

describe('bad network values: one problem each, naming the field, the value and what is allowed', () => {
  test.each<[string, unknown, string, unknown, RegExp]>([
    [
      'a string other than "create"',
      'existing',
      'network',
      'existing',
      /^must be "create" \(the lab's own VPC\), or an existing VPC as an object .*got "existing"$/,
    ],
    ['a number', 3, 'network', 3, /^must be "create" .*got 3$/],
    [
      'a short VPC id',
      { ...EXISTING, vpcId: 'vpc-12345' },
      'network.vpcId',
      'vpc-12345',
      /^must be a VPC id such as "vpc-0123456789abcdef0" \(vpc- and 8 or 17 hex digits\), got "vpc-12345"$/,
    ],
    [
      'a VPC name instead of its id',
      { ...EXISTING, vpcId: 'prod-vpc' },
      'network.vpcId',
      'prod-vpc',
      /got "prod-vpc"$/,
    ],
    [
      'one subnet',
      { ...EXISTING, subnetIds: [A] },
      'network.subnetIds',
      [A],
      /^must be a list of at least 2 subnet ids in at least two Availability Zones \(the database subnet group needs two\)/,
    ],
    [
      'a subnet twice',
      { ...EXISTING, subnetIds: [A, A] },
      'network.subnetIds',
      [A, A],
      /^must be a list of distinct subnet ids/,
    ],
    [
      'a subnet name',
      { ...EXISTING, subnetIds: [A, 'private-b'] },
      'network.subnetIds[1]',
      'private-b',
      /^must be a subnet id such as "subnet-0123456789abcdef0" \(subnet- and 8 or 17 hex digits\), got "private-b"$/,
    ],
    [
      'an account id as a number',
      { ...EXISTING, account: 111122223333 },
      'network.account',
      111122223333,
      /^must be a 12-digit AWS account id in quotes/,
    ],
    [
      'an 11-digit account',
      { ...EXISTING, account: '11112222333' },
      'network.account',
      '11112222333',
      /got "11112222333"$/,
    ],
    [
      'an unknown egress',
      { ...EXISTING, egress: 'nat' },
      'network.egress',
      'nat',
      /^must be one of "vpc-endpoints", "internet" .*got "nat"$/,
    ],
    [
      'egress missing',
      { vpcId: VPC, subnetIds: [A, B], account: '111122223333' },
      'network.egress',
      undefined,
      /^is required: must be one of "vpc-endpoints", "internet"/,
    ],
    [
      'an unknown endpoints value',
      { ...EXISTING, endpoints: 'none' },
      'network.endpoints',
      'none',
      /^must be one of "create", "existing", got "none"$/,
    ],
    [
      'a CIDR with a bad prefix',
      { ...EXISTING, endpoints: 'existing', endpointCidrs: ['10.0.0.0/33'] },
      'network.endpointCidrs[0]',
      '10.0.0.0/33',
      /^must be an IPv4 CIDR block such as "10\.0\.0\.0\/16", got "10\.0\.0\.0\/33"$/,
    ],
    [
      'endpoints with internet egress',
      { ...EXISTING, egress: 'internet', endpoints: 'create' },
      'network.endpoints',
      'create',
      /^must not be given with egress "internet"/,
    ],
    [
      'endpointCidrs with endpoints the lab creates',
      { ...EXISTING, endpointCidrs: ['10.0.0.0/8'] },
      'network.endpointCidrs',
      ['10.0.0.0/8'],
      /^must be given only with egress "vpc-endpoints" and endpoints "existing"/,
    ],
  ])('%s', (_what, network, path, value, message) => {
    // GIVEN / WHEN
    const problems = problemsOf({ name: 'n', region: 'eu-west-1', network });
    // THEN exactly one problem, on that field
    expect(problems).toHaveLength(1);
    expect(problems[0]).toEqual({ path, value, message: expect.stringMatching(message) });
  });

  test('an unknown key inside the object names the object’s keys', () => {
    const problems = problemsOf({
      name: 'n',
      region: 'eu-west-1',
      network: { ...EXISTING, subnets: [A, B] },
    });
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      [
        'network.subnets',
        expect.stringMatching(
          /^unknown key \(did you mean "subnetIds"\?\); allowed keys here: vpcId, subnetIds, account, egress, endpoints, endpointCidrs$/,
        ),
      ],
    ]);
  });

  test('an existing VPC needs the region (the lookup binds the stack to it), reported beside the other problems', () => {
    const problems = problemsOf({ name: 'n', network: { ...EXISTING, account: '1' } });
    expect(problems.map((p) => p.path).sort()).toEqual(['network.account', 'region']);
    expect(problems.find((p) => p.path === 'region')?.message).toMatch(
      /^is required with an existing VPC \(network\.vpcId\): CDK looks the VPC up in that account and region/,
    );
  });
});

describe('a pooler whose install needs the internet, in a lab without it', () => {
  const doorman = { name: 'doorman', kind: 'pgdoorman', placement: 'dedicated', instanceType: 'c7g.large' };
  const bouncer = { name: 'bouncer', kind: 'pgbouncer', placement: 'dedicated', instanceType: 'c7g.large' };

  test('PgDoorman without internet is refused at its kind, saying what its build fetches and what to use', () => {
    // GIVEN a private lab with a PgBouncer (staged by deploy) and a PgDoorman (built from its tag)
    const problems = problemsOf({
      name: 'n',
      region: 'eu-west-1',
      network: EXISTING,
      poolers: [bouncer, doorman],
    });
    // THEN one problem, on PgDoorman only
    expect(problems.map((p) => [p.path, p.value])).toEqual([['poolers[1].kind', 'pgdoorman']]);
    expect(problems[0]?.message).toMatch(
      /^must be a pooler a host without internet can install \(network\.egress "vpc-endpoints"\): PgDoorman cannot, because .*github\.com.*static\.rust-lang\.org.*crates\.io.*Use network\.egress "internet" .* \(pgbouncer\); got "pgdoorman"$/,
    );
  });

  test.each<[string, unknown]>([
    ['an existing VPC with internet egress', { ...EXISTING, egress: 'internet' }],
    ["the lab's own VPC", 'create'],
  ])('PgDoorman is accepted in %s', (_what, network) => {
    const r = validateLab({ name: 'n', region: 'eu-west-1', network, poolers: [doorman] });
    if (!r.ok) throw new Error(formatProblems(r.problems));
    expect(r.lab.poolers.map((p) => p.kind)).toEqual(['pgdoorman']);
  });
});
