/**
 * Issue 25 item 5: the writer, the runners and the dedicated pooler hosts share one Availability
 * Zone unless the lab asks for a cross-zone hop, and each component's zone is a stack output the run
 * records; item 6: Aurora I/O-Optimized is a lab option (StorageType aurora-iopt1). The writer's zone
 * is set with ClusterInstanceOptions.availabilityZone (Aurora) / DatabaseInstanceProps.availabilityZone
 * (RDS for PostgreSQL): "Aurora automatically chooses an appropriate Availability Zone if you don't
 * specify one" (aws-cdk-lib aws-rds aurora-cluster-instance.d.ts).
 */
import { Match } from 'aws-cdk-lib/assertions';
import { AZ_CONTEXT_KEYS } from '../../lib/lab-stack';
import { labFrom, newTestApp, resourcesOfType, synthLab } from './helpers';

const WITH_POOLER = {
  name: 'zones',
  aurora: { instanceClass: 'db.r6g.large', readers: 1 },
  proxies: [{ name: 'full' }],
  poolers: [{ name: 'bouncer', kind: 'pgbouncer', placement: 'dedicated', instanceType: 'c7g.large' }],
  runners: { count: 2 },
};

/** Synth with the zones `proxylab deploy` would choose: runners' type offered in eu-west-1b only. */
function synthInZones(raw: Record<string, unknown>) {
  const app = newTestApp();
  app.node.setContext(AZ_CONTEXT_KEYS.vpc, 'eu-west-1b,eu-west-1a');
  app.node.setContext(AZ_CONTEXT_KEYS.runners, 'eu-west-1b');
  return synthLab(labFrom(raw), app);
}

let withPoolerInZones: ReturnType<typeof synthLab> | undefined;
/** synthInZones(WITH_POOLER), made once for the tests that only read it. */
function synthWithPoolerInZones(): ReturnType<typeof synthLab> {
  withPoolerInZones ??= synthInZones(WITH_POOLER);
  return withPoolerInZones;
}

/** The AvailabilityZone of every DB instance, writer first (by logical id). */
function dbInstanceZones(template: ReturnType<typeof synthLab>['template']): Record<string, unknown> {
  return Object.fromEntries(
    resourcesOfType(template, 'AWS::RDS::DBInstance').map(([id, p]) => [id, p.AvailabilityZone]),
  );
}

describe('one zone by default', () => {
  test('the writer goes to the runners’ zone, the reader stays RDS’s choice; runners and pooler host are there', () => {
    // WHEN the lab is synthesized with the deploy-time zone choice
    const { template } = synthWithPoolerInZones();
    // THEN the writer instance is pinned to eu-west-1b, the reader is not pinned
    const zones = dbInstanceZones(template);
    const writer = Object.entries(zones).find(([id]) => /writer/i.test(id));
    const reader = Object.entries(zones).find(([id]) => /reader/i.test(id));
    expect(writer?.[1]).toBe('eu-west-1b');
    expect(reader?.[1]).toBeUndefined();
    // and every EC2 instance (2 runners, 1 pooler host) sits in a subnet of eu-west-1b
    const subnets = new Map(resourcesOfType(template, 'AWS::EC2::Subnet').map(([id, p]) => [id, p]));
    const instances = resourcesOfType(template, 'AWS::EC2::Instance');
    expect(instances).toHaveLength(3);
    for (const [, p] of instances) {
      const ref = /"SubnetId":\{"Ref":"([^"]+)"\}/.exec(JSON.stringify(p))?.[1] ?? '';
      expect(subnets.get(ref)?.AvailabilityZone).toBe('eu-west-1b');
    }
  });

  test('without the deploy-time choice (cdk synth) the writer follows the runners’ first subnet zone token', () => {
    const { template } = synthLab(labFrom(WITH_POOLER));
    const writer = Object.entries(dbInstanceZones(template)).find(([id]) => /writer/i.test(id));
    expect(writer?.[1]).toEqual({ 'Fn::Select': [0, { 'Fn::GetAZs': '' }] });
  });

  test('crossZone puts the writer in the VPC’s other zone', () => {
    const { template } = synthInZones({ ...WITH_POOLER, crossZone: true });
    const writer = Object.entries(dbInstanceZones(template)).find(([id]) => /writer/i.test(id));
    expect(writer?.[1]).toBe('eu-west-1a');
  });

  test.each([
    [false, 'eu-west-1b'],
    [true, undefined],
  ])(
    'RDS for PostgreSQL: multiAz %s → instance zone %s (CloudFormation refuses a zone with Multi-AZ)',
    (multiAz, zone) => {
      const { template } = synthInZones({ name: 'pg', postgres: { multiAz }, proxies: [{ name: 'p' }] });
      expect(Object.values(dbInstanceZones(template))).toEqual([zone]);
    },
  );

  test('the ComponentZones output names the writer, each runner and each pooler host', () => {
    const { template } = synthWithPoolerInZones();
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const text = JSON.stringify(outputs.ComponentZones?.Value);
    // a JSON object built at deploy time: the writer's zone literal, the instances' GetAtt AvailabilityZone
    expect(text).toMatch(/\\"writer\\":\\"eu-west-1b\\"/);
    expect(text).toMatch(
      /runner-0.*AvailabilityZone.*runner-1.*AvailabilityZone.*pooler:bouncer.*AvailabilityZone/,
    );
  });
});

describe('Aurora storage configuration', () => {
  test.each([
    ['io-optimized', 'aurora-iopt1'],
    ['standard', undefined],
  ])('storageType %s → the cluster’s StorageType %s', (storageType, cfn) => {
    const { template } = synthLab(labFrom({ name: 'io', aurora: { storageType } }));
    template.hasResourceProperties('AWS::RDS::DBCluster', {
      StorageType: cfn === undefined ? Match.absent() : cfn,
    });
  });
});
