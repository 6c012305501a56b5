/**
 * Issue 41's "done when", through the commands themselves (registered on a fresh commander
 * program, in-process): `validate`, `plan`, `cost` and `deploy --dry-run` on the default lab in
 * eu-west-1 print eu-west-1 prices with their date against a Price List stub (every request checked
 * against botocore's pricing model and the operator's `read` policy); without credentials and
 * without a cache each says the same one-line reason; `cost --lab labs/own-workload.json` prints
 * the production bill of RDS Proxy and of an HA PgBouncer pair.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import { Command } from 'commander';
import { unpricedRegionMessage } from '../../lib/cost/price-check';
import { isoDate } from '../../lib/cost/pricelist/table';
import { register as registerCost } from '../../scripts/commands/cost';
import { register as registerDeploy } from '../../scripts/commands/deploy';
import { register as registerLocal } from '../../scripts/commands/local';
import { register as registerPlan } from '../../scripts/commands/plan';
import { register as registerValidate } from '../../scripts/commands/validate';
import { mockAws } from '../helpers/aws-calls/recorder';
import { operator } from '../helpers/aws-calls/principals';
import { stubCatalogue, stubGetProducts } from '../helpers/price-list-stub';
import { scratchDir } from '../helpers/scratch';

const ROOT = join(__dirname, '..', '..');
/**
 * `proxylab local` here is always refused before any server starts (a region without prices), so
 * this unit test needs no PostgreSQL or PgBouncer (the preflight reads a literal local argv as a local run).
 */
const LOCAL = 'local';
const TODAY = isoDate(new Date());

function program(): Command {
  const p = new Command().exitOverride();
  registerValidate(p);
  registerPlan(p);
  registerCost(p);
  registerDeploy(p);
  registerLocal(p);
  return p;
}

/** labs/default.json with `region: "eu-west-1"`, in a scratch directory. */
function euLab(): string {
  const raw = JSON.parse(readFileSync(join(ROOT, 'labs', 'default.json'), 'utf8')) as Record<string, unknown>;
  const file = join(scratchDir('lab-eu-'), 'default-eu.json');
  writeFileSync(file, JSON.stringify({ ...raw, $schema: undefined, region: 'eu-west-1' }));
  return file;
}

const ENV_KEYS = [
  'PROXYLAB_PRICE_CACHE',
  'PROXYLAB_PRICES',
  'HOME',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_PROFILE',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_CONFIG_FILE',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
] as const;

let out: string[];
let err: string[];
let saved: Record<string, string | undefined>;

beforeEach(() => {
  saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  for (const k of ENV_KEYS) delete process.env[k];
  // an empty home and cache: no ~/.aws files, no cached prices
  process.env.HOME = scratchDir('home-');
  process.env.PROXYLAB_PRICE_CACHE = scratchDir('prices-');
  out = [];
  err = [];
  jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  jest.restoreAllMocks();
  process.exitCode = undefined;
  for (const k of ENV_KEYS) {
    const v = saved[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const run = async (args: string[]): Promise<unknown> => {
  try {
    await program().parseAsync(args, { from: 'user' });
    return null;
  } catch (e) {
    return e;
  }
};

describe('the default lab in eu-west-1, against a Price List stub', () => {
  test('validate, plan, cost and deploy --dry-run each print eu-west-1 prices with their date', async () => {
    // GIVEN credentials (a key pair in the environment) and the Price List answering for eu-west-1
    process.env.AWS_ACCESS_KEY_ID = 'AKIAEXAMPLE';
    process.env.AWS_SECRET_ACCESS_KEY = 'example';
    const pricing = mockAws(PricingClient, operator('read'));
    pricing.on(GetProductsCommand).callsFake(stubGetProducts(stubCatalogue('eu-west-1', 1.1)));
    const lab = euLab();
    const line = `eu-west-1 prices as of ${TODAY} (AWS Price List`;
    // WHEN validate: read from the Price List, then cached
    expect(await run(['validate', lab])).toBeNull();
    expect(out.join('')).toContain(`  ${line}, read now)`);
    const calls = pricing.commandCalls(GetProductsCommand).length;
    expect(calls).toBeGreaterThan(5);
    // AND plan, cost and deploy --dry-run read today's cache: no further call
    out = [];
    expect(await run(['plan', '--lab', lab, '--suite', 'smoke'])).toBeNull();
    expect(out.join('')).toContain(`(eu-west-1, prices as of ${TODAY})`);
    err = [];
    out = [];
    expect(await run(['cost', lab])).toBeNull();
    expect(err.join('')).toContain(`${line}, cached today)`);
    expect(out.join('')).toContain(
      `Production, per 720-hour month (eu-west-1 on-demand prices as of ${TODAY}):`,
    );
    out = [];
    expect(await run(['deploy', '--lab', lab, '--region', 'eu-west-1', '--dry-run'])).toBeNull();
    expect(out.join('')).toContain(`${line}, cached today)`);
    expect(out.join('')).toMatch(/would run: .*cdk deploy/);
    expect(pricing.commandCalls(GetProductsCommand).length).toBe(calls);
  });
});

describe('the default lab in eu-west-1, without credentials and without a cache', () => {
  test('validate, plan, cost, deploy --dry-run and local --price-region each say the same one-line reason', async () => {
    const lab = euLab();
    const reason =
      /no prices for region eu-west-1: the AWS Price List was not asked: no AWS credentials configured \(no AWS_ACCESS_KEY_ID, AWS_PROFILE or ~\/\.aws files\); no cached prices under [^;]+; the committed table covers only us-east-1 \(give AWS credentials allowed pricing:GetProducts, as `proxylab iam-policy` prints, and run again to read and cache them\)/;
    // validate: the lab's region is a problem, with the reason
    const validate = ((await run(['validate', lab])) as Error).message;
    expect(validate).toMatch(/^invalid lab file .*: 1 problem\n {2}region: cannot be priced/);
    expect(validate).toMatch(reason);
    const message = unpricedRegionMessage('eu-west-1');
    expect(message).toMatch(reason);
    expect(message).not.toContain('\n');
    expect(validate).toContain(message);
    // plan: the cost line says it
    out = [];
    expect(await run(['plan', '--lab', lab, '--suite', 'smoke'])).toBeNull();
    expect(out.join('')).toContain(message);
    // cost and deploy: a usage error with it
    const cost = await run(['cost', lab]);
    expect((cost as Error).message).toBe(`region eu-west-1 ${message}`);
    const deploy = await run(['deploy', '--lab', lab, '--region', 'eu-west-1', '--dry-run']);
    expect((deploy as Error).message).toContain(`region eu-west-1 ${message}`);
    expect((deploy as Error).message).toMatch(/^not deployed: /);
    // local --price-region: refused before anything starts, with the same reason
    const local = await run([
      LOCAL,
      '--out',
      scratchDir('runs-'),
      '--no-install',
      '--price-region',
      'eu-west-1',
    ]);
    expect((local as Error).message).toMatch(reason);
    expect((local as Error).message).toMatch(/^--price-region eu-west-1: no prices for region eu-west-1: /);
    expect(out.join('')).not.toMatch(/Starting PostgreSQL/);
  });

  test.each(['cn-north-1', 'us-gov-west-1', 'mars-1'])(
    "local --price-region %s: not a commercial region, in pricesFor's words",
    async (region) => {
      const local = await run([
        LOCAL,
        '--out',
        scratchDir('runs-'),
        '--no-install',
        '--price-region',
        region,
      ]);
      expect((local as Error).message).toBe(
        `--price-region ${region}: region "${region}" is not a commercial AWS region (e.g. eu-west-1); GovCloud, ISO and China regions are not priced`,
      );
    },
  );
});

describe('--app-hosts N: local refuses exactly what cost refuses', () => {
  test.each(['0', '1.5', 'two'])(
    '%j: the same message from cost and from local, before anything starts',
    async (n) => {
      const message = `--app-hosts must be a whole number of application hosts ≥ 1, got "${n}"`;
      const cost = await run(['cost', '--lab', join(ROOT, 'labs', 'own-workload.json'), '--app-hosts', n]);
      expect((cost as Error).message).toBe(message);
      const local = await run([
        LOCAL,
        '--out',
        scratchDir('runs-'),
        '--no-install',
        '--price-region',
        'us-east-1',
        '--app-hosts',
        n,
      ]);
      expect((local as Error).message).toBe(message);
      expect(out.join('')).not.toMatch(/Starting PostgreSQL/);
    },
  );

  test('local --app-hosts without --price-region: refused, naming both flags', async () => {
    const local = await run([LOCAL, '--out', scratchDir('runs-'), '--no-install', '--app-hosts', '3']);
    expect((local as Error).message).toBe(
      '--app-hosts 3 prices the production column, which needs --price-region REGION: give both or neither',
    );
  });
});

describe('cost --lab labs/own-workload.json', () => {
  test('prints the production monthly bill of RDS Proxy and of an HA PgBouncer pair', async () => {
    expect(await run(['cost', '--lab', join(ROOT, 'labs', 'own-workload.json')])).toBeNull();
    const text = out.join('');
    expect(text).toMatch(
      /Production, per 720-hour month \(us-east-1 on-demand prices as of \d{4}-\d{2}-\d{2}\):/,
    );
    expect(text).toContain('  RDS Proxy proxy: $21.60 on top of the database');
    expect(text).toContain('  PgBouncer bouncer (HA pair): $123.16 on top of the database');
    expect(text).toContain(
      '    Network Load Balancer: $16.20 — $0.0225/h (LCUs, i.e. traffic, not included)',
    );
  });
});
