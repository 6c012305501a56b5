/**
 * Errors thrown by constructs name the construct path, so a failing synth of a many-construct
 * stack says which one (aws-cdk's ValidationError does the same with its scope).
 */
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { LabDatabase } from '../../lib/constructs/database';
import { PoolerHost, poolerHostConfig, releaseOf } from '../../lib/constructs/pooler-host';
import { applyLabLifecycle, NOW_CONTEXT_KEY } from '../../lib/constructs/ttl';
import { labFrom, ROOT } from './helpers';
import { LabStack } from '../../lib/lab-stack';
import path from 'node:path';

test('LabDatabase: an engine version outside the accepted list names the construct', () => {
  // GIVEN a lab whose aurora section bypassed validation
  const stack = new Stack(new App(), 'Lab');
  const vpc = new ec2.Vpc(stack, 'Vpc');
  const database = { ...labFrom({ name: 'x' }).database, engineVersion: '9.9' };
  // WHEN / THEN
  expect(() => new LabDatabase(stack, 'Database', { vpc, subnets: {}, database })).toThrow(
    /^Lab\/Database: engine version 9\.9 is not in ACCEPTED_ENGINE_VERSIONS/,
  );
});

test('expiry: a bad proxylab:now context names the scope', () => {
  const app = new App({ context: { [NOW_CONTEXT_KEY]: 'tomorrow' } });
  const stack = new Stack(app, 'Lab');
  expect(() => applyLabLifecycle(stack, { name: 'x', owner: null, ttlHours: 8 })).toThrow(
    /^Lab\/Expiry: context proxylab:now must be an ISO-8601 time, got "tomorrow"/,
  );
});

test('RunnerFleet: runner software twice names the fleet', () => {
  // GIVEN a lab stack that already installed its runner software (a small asset, no bundling)
  const stack = new LabStack(new App(), 'proxylab-x', {
    lab: labFrom({ name: 'x' }),
    runnerSoftware: {
      asset: new s3assets.Asset(new Stack(new App(), 'Assets'), 'A', { path: path.join(ROOT, 'README.md') }),
      command: 'true',
    },
  });
  const again = {
    asset: new s3assets.Asset(stack, 'Again', { path: path.join(ROOT, 'README.md') }),
    command: 'true',
  };
  // WHEN / THEN
  expect(() => stack.runners.addRunnerSoftware(again)).toThrow(
    /^proxylab-x\/Runners: runner software is already installed/,
  );
});

describe('poolers', () => {
  const ON_RUNNERS = { name: 'near', kind: 'pgbouncer', placement: 'on-runners' };
  const lab = labFrom({ name: 'x', poolers: [ON_RUNNERS] });
  const software = (stack: Stack) => ({
    asset: new s3assets.Asset(stack, 'Bundle', { path: path.join(ROOT, 'README.md') }),
    command: 'true',
  });

  test('RunnerFleet: a second pooler on the runners names the fleet and both poolers', () => {
    // GIVEN a stack whose runners already run `near`
    const stack = new LabStack(new App(), 'proxylab-x', {
      lab,
      runnerSoftware: software(new Stack(new App(), 'A')),
    });
    const pooler = lab.poolers[0];
    const secret = stack.poolerAdminSecret;
    if (!pooler || !secret) throw new Error('the lab has a pooler');
    const config = poolerHostConfig(
      stack,
      { ...pooler, name: 'other' },
      {
        writerHost: 'db.example',
        port: 5432,
        secret,
        connectable: stack.database,
      },
      secret,
      '127.0.0.1',
    );
    // WHEN / THEN
    expect(() => stack.runners.addPooler(releaseOf(pooler), config, secret)).toThrow(
      /^proxylab-x\/Runners: pooler near already runs on the runners; other would need the same ports/,
    );
  });

  test('PoolerHost: an on-runners pooler names the construct', () => {
    const stack = new LabStack(new App(), 'proxylab-y', {
      lab,
      runnerSoftware: software(new Stack(new App(), 'B')),
    });
    const pooler = lab.poolers[0];
    const secret = stack.poolerAdminSecret;
    if (!pooler || !secret) throw new Error('the lab has a pooler');
    expect(
      () =>
        new PoolerHost(stack, 'Host', {
          vpc: stack.network.vpc,
          subnets: stack.network.runnerSubnets,
          pooler,
          database: { writerHost: 'db.example', port: 5432, secret, connectable: stack.database },
          clients: stack.runners.securityGroup,
          adminSecret: secret,
          software: software(stack),
        }),
    ).toThrow(/^proxylab-y\/Host: pooler near is not a dedicated pooler with an instanceType/);
  });

  test('releaseOf: a version that bypassed validation names the pooler', () => {
    const pooler = lab.poolers[0];
    if (!pooler) throw new Error('the lab has a pooler');
    expect(() => releaseOf({ ...pooler, version: '1.99.9' })).toThrow(
      /^pooler near: PgBouncer 1\.99\.9 is not in lib\/poolers\/pgbouncer\/releases\.ts/,
    );
  });
});
