/**
 * A cloud run records every target's effective settings in plan.json as a local run does (issue 39
 * item 3c): the operator puts the lab's `settings` and proxylab's own values (lib/config/kit-settings.ts)
 * into the run request, the runner reads it (S3, as the runner: IAM-checked) and gives them to
 * describeTarget for each RDS Proxy and pooler target. The kit values restate what the pooler hosts
 * render: checked here against the rendered files.
 */
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { validateLab } from '../../lib/config';
import type { LabConfig } from '../../lib/config/types';
import {
  buildRunRequest,
  readRunRequest,
  requestUrl,
  runnerArgsFromRequest,
} from '../../lib/aws/run-request';
import { poolerKitSettings } from '../../lib/config/kit-settings';
import { runnerArgsFromOutputs } from '../../lib/operator/operator';
import type { PoolerEndpoint } from '../../lib/poolers/endpoint';
import type { PoolerHostConfig } from '../../lib/poolers/host-config';
import { poolerDriver } from '../../lib/poolers/registry';
import { settingSpec, settingText } from '../../lib/products/settings';
import { productEntry } from '../../lib/products';
import { targetDescriptorSchema } from '../../lib/results/schemas';
import { buildPoolerTargets } from '../../lib/runner/pooler-targets';
import { buildCloudTargets } from '../../lib/runner/targets';
import type { TargetDescriptor } from '../../lib/suite/targets';
import { RUNNER } from '../helpers/aws-calls/principals';
import { mockAws } from '../helpers/aws-calls/recorder';
import { labOutputsWith, proxyOutputs } from '../helpers/lab-outputs';
import { s3GetBody } from '../helpers/s3-body';

const s3Mock = mockAws(S3Client, RUNNER);
afterEach(() => s3Mock.reset());

function lab(): LabConfig {
  const v = validateLab({
    name: 'demo',
    proxies: [
      {
        name: 'pool50',
        maxConnectionsPercent: 50,
        borrowTimeoutSeconds: 30,
        settings: { InitQuery: "SET timezone = 'UTC'", IdleClientTimeout: 600 },
      },
    ],
    poolers: [
      {
        name: 'bouncer',
        kind: 'pgbouncer',
        placement: 'dedicated',
        instanceType: 'c7g.xlarge',
        poolModes: ['transaction', 'session'],
        version: '1.25.2',
        settings: { server_login_retry: 2 },
      },
    ],
  });
  if (!v.ok) throw new Error(JSON.stringify(v.problems));
  return v.lab;
}

const BOUNCER: PoolerEndpoint = {
  name: 'bouncer',
  product: 'pgbouncer',
  placement: 'dedicated',
  host: '10.0.0.9',
  port: 6432,
  adminPorts: [6440, 6441],
  statsPort: 6439,
  poolModes: ['transaction', 'session'],
  processes: 2,
  poolPercent: 90,
  maxPreparedStatements: 200,
  version: '1.25.2',
  tls: true,
};

const outputs = labOutputsWith({ ...proxyOutputs('demo', 'pool50'), poolerEndpoints: { bouncer: BOUNCER } });
const RUN = { runId: 'r-1', suite: 'smoke', region: 'eu-west-1', startAt: '2026-11-28T10:00:00Z' };
const credentials = { username: 'master', password: 'pw', dbname: 'postgres', host: 'writer', port: 5432 };

/** The targets runner 0 builds from the request it reads from S3. */
async function runnerDescriptors(requestText: string): Promise<Map<string, TargetDescriptor>> {
  s3Mock.on(GetObjectCommand).resolves({ Body: s3GetBody(requestText) } as never);
  const request = await readRunRequest(
    new S3Client({ region: 'eu-west-1' }),
    requestUrl(outputs.resultsBucketName, RUN.runId),
  );
  const args = runnerArgsFromRequest(request, 0);
  const query = () => Promise.resolve('100');
  const { targets, writer } = buildCloudTargets({
    credentials,
    writer: args.writerEndpoint,
    proxies: args.proxies,
    query,
    poolPercent: () => null,
  });
  const poolers = buildPoolerTargets({
    poolers: args.poolers,
    probes: new Map([['bouncer', { version: '1.25.2', maxPreparedStatements: 200 }]]),
    credentials,
    writer,
    poolPercent: () => 90,
    runnerCount: 1,
  });
  return new Map([...targets, ...poolers].map((t) => [t.descriptor.name, t.descriptor]));
}

test("the request carries the lab's settings; the runner's descriptors record them, proxylab's and the defaults", async () => {
  // GIVEN the request the operator writes for a lab with settings on its proxy and its pooler
  const request = buildRunRequest(runnerArgsFromOutputs(outputs, lab(), RUN), 1);
  // WHEN runner 0 reads it and builds its targets
  const d = await runnerDescriptors(JSON.stringify(request));
  // THEN the proxy target records the lab's two settings, proxylab's from the lab's fields, the rest default
  const proxy = d.get('pool50')?.settings.effective ?? {};
  expect(proxy.InitQuery).toEqual({ value: "SET timezone = 'UTC'", source: 'lab' });
  expect(proxy.IdleClientTimeout).toEqual({ value: 600, source: 'lab' });
  expect(proxy.MaxConnectionsPercent).toEqual({ value: 50, source: 'proxylab' });
  expect(proxy.ConnectionBorrowTimeout).toEqual({ value: 30, source: 'proxylab' });
  expect(proxy.RequireTLS).toEqual({ value: true, source: 'proxylab' });
  expect(proxy).not.toHaveProperty('SessionPinningFilters'); // refused for PostgreSQL: never a setting there
  // AND each pool of the pooler: the lab's retry, its mode, PgBouncer's defaults for 1.25.2
  const tx = d.get('bouncer-transaction')?.settings.effective ?? {};
  expect(tx.server_login_retry).toEqual({ value: 2, source: 'lab' });
  expect(tx.query_wait_timeout).toEqual({ value: 120, source: 'default' });
  expect(tx.pool_mode).toEqual({ value: 'transaction', source: 'proxylab' });
  expect(tx.default_pool_size).toEqual({ value: null, source: 'proxylab' });
  expect(tx.client_tls_sslmode).toEqual({ value: 'require', source: 'proxylab' });
  expect(tx.so_reuseport).toEqual({ value: true, source: 'proxylab' });
  expect(d.get('bouncer-session')?.settings.effective?.pool_mode).toEqual({
    value: 'session',
    source: 'proxylab',
  });
  // AND direct has no catalogue: nothing recorded; every descriptor is what plan.json accepts
  expect(d.get('direct')?.settings.effective).toBeUndefined();
  for (const desc of d.values()) expect(targetDescriptorSchema.safeParse(desc).success).toBe(true);
});

test('a request from an older CLI (no settings anywhere) still runs: defaults recorded, nothing invented', async () => {
  // GIVEN the same request without the fields this change added
  const request = JSON.parse(
    JSON.stringify(buildRunRequest(runnerArgsFromOutputs(outputs, lab(), RUN), 1)),
  ) as {
    targets: { proxies: Array<Record<string, unknown>>; poolerSettings?: unknown };
  };
  for (const p of request.targets.proxies) {
    delete p.settings;
    delete p.kitSettings;
  }
  delete request.targets.poolerSettings;
  // WHEN
  const d = await runnerDescriptors(JSON.stringify(request));
  // THEN RDS Proxy's settings are its defaults (no lab value, proxylab's not said)
  expect(d.get('pool50')?.settings.effective?.IdleClientTimeout).toEqual({ value: 1800, source: 'default' });
  expect(d.get('pool50')?.settings.effective?.MaxConnectionsPercent).toEqual({
    value: 100,
    source: 'default',
  });
  expect(d.get('bouncer-transaction')?.settings.effective?.server_login_retry).toEqual({
    value: 15,
    source: 'default',
  });
});

test("a test's local stand-in for the proxy (a PgBouncer pool) records none of RDS Proxy's settings", () => {
  // GIVEN the runner's proxy targets built as the stand-in tests build them
  const request = buildRunRequest(runnerArgsFromOutputs(outputs, lab(), RUN), 1);
  const args = runnerArgsFromRequest(request, 0);
  const { targets } = buildCloudTargets({
    credentials,
    writer: args.writerEndpoint,
    proxies: args.proxies,
    query: () => Promise.resolve('100'),
    poolPercent: () => null,
    proxyKind: 'pgbouncer-transaction',
  });
  // THEN its descriptor claims no effective settings (PgBouncer's defaults would be a guess)
  expect(targets.find((t) => t.descriptor.name === 'pool50')?.descriptor.settings.effective).toBeUndefined();
});

test('a request whose settings are not settings is refused naming the field', async () => {
  const request = JSON.parse(
    JSON.stringify(buildRunRequest(runnerArgsFromOutputs(outputs, lab(), RUN), 1)),
  ) as {
    targets: { poolerSettings: Record<string, unknown> };
  };
  request.targets.poolerSettings.bouncer = { server_login_retry: { nested: 1 } };
  await expect(runnerDescriptors(JSON.stringify(request))).rejects.toMatchObject({
    code: 'run-file-invalid',
    field: 'targets.poolerSettings.bouncer.server_login_retry',
  });
});

describe("proxylab's values are what the pooler hosts render", () => {
  const base: PoolerHostConfig = {
    name: 'bouncer',
    product: 'pgbouncer',
    placement: 'dedicated',
    region: 'eu-west-1',
    dbSecretArn: 'arn:db',
    adminSecretArn: 'arn:admin',
    serverHost: 'writer.example',
    serverPort: 5432,
    listenAddr: '0.0.0.0',
    poolModes: ['transaction'],
    processes: 2,
    poolPercent: 90,
    sharedBy: 1,
    maxPreparedStatements: 200,
    tls: true,
    binaryPath: '/usr/local/bin/pgbouncer',
    version: '1.25.2',
  };
  test.each([
    ['pgbouncer', base, /^(\w+) = (.*)$/],
    [
      'pgdoorman',
      {
        ...base,
        product: 'pgdoorman',
        processes: 1,
        version: '3.10.7',
        binaryPath: '/usr/local/bin/pg_doorman',
      },
      /^(\w+) = "?(.*?)"?$/,
    ],
  ] as const)('%s', (product, config, line) => {
    // GIVEN the files its host writes
    const text = poolerDriver(product)
      .host.render({
        config,
        root: '/r',
        dataPort: 6432,
        poolSizePerProcess: 10,
        dbname: 'postgres',
        dbUser: { username: 'u', password: 'p' },
        adminUser: { username: 'a', password: 'q' },
        workerThreads: 2,
        random: (n) => Buffer.alloc(n, 1),
      })
      .map((f) => f.text)
      .join('\n');
    const written = new Map(
      text
        .split('\n')
        .map((l) => line.exec(l))
        .flatMap((m) => (m ? [[m[1] as string, m[2] as string] as const] : [])),
    );
    // WHEN proxylab's values for the same pooler are listed
    const endpoint = { ...BOUNCER, product, processes: config.processes, version: config.version };
    const kit = poolerKitSettings(endpoint, 'transaction', config.maxPreparedStatements);
    const cat = productEntry(product).settings;
    // THEN each one with a figure is the file's line, in the product's spelling
    const known = Object.entries(kit).filter(([, v]) => v !== null);
    expect(known.length).toBeGreaterThan(3);
    for (const [name, value] of known) {
      const spec = cat === null ? undefined : settingSpec(cat, name);
      expect({ name, inCatalogue: spec !== undefined }).toEqual({ name, inCatalogue: true });
      const text =
        typeof value === 'boolean' && product === 'pgdoorman' ? String(value) : settingText(spec!, value!);
      // a flag proxylab leaves off is not written (off is the product's default)
      expect({ name, written: written.get(name) ?? (value === false ? text : undefined) }).toEqual({
        name,
        written: text,
      });
    }
  });
});
