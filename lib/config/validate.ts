/**
 * Lab validation: every problem at once, each naming the JSON path, the value received and what
 * is allowed. Pure: no file system, no AWS.
 *
 * Two passes over the same raw input:
 *  1. the zod schema (types, ranges, unknown keys), mapped to LabProblems;
 *  2. rules between fields (idle ≤ max, unique proxy names, instanceClass xor serverless, engine
 *     version and instance class membership), run on the RAW input wherever the fields involved
 *     are individually valid, so they report even when something else in the file is broken.
 */
import { z } from 'zod';
import {
  ACCEPTED_ENGINE_VERSIONS,
  RETIRED_ENGINE_VERSIONS,
  closestAcceptedVersion,
  findEngineVersion,
} from './engine-versions';
import { AURORA_POSTGRES_INSTANCE_CLASSES } from './instance-classes';
import {
  RDS_POSTGRES_EXTENDED_SUPPORT_MAJORS,
  RDS_POSTGRES_INSTANCE_CLASSES,
  RDS_POSTGRES_RETIRED_VERSIONS,
  RDS_POSTGRES_VERSIONS,
  RDS_STORAGE_LIMITS_GIB,
  closestRdsPostgresVersion,
  findRdsPostgresVersion,
} from './rds-postgres';
import { describeDatabase } from './database';
import { DEFAULTS, defaultMaxIdleConnectionsPercent } from './defaults';
import { poolerDriver } from '../poolers/registry';
import { POOLER_PRODUCTS } from '../poolers/products';
import { POOLER_ADMIN_PORT_BASE, POOLER_STATS_PORT, poolerDeployments } from '../poolers/endpoint';
import { totalPoolSize } from '../poolers/pool-size';
import { settingsOf, settingsProblems } from './settings';
import { getSuite, LAB_SUITE_NAME, SUITE_NAMES } from '../suite/catalog';
import { disruptionAction, type DisruptionNeed } from '../suite/disruption-actions';
import { labScenariosWithDefaults, scenarioProblems, type ScriptReader, type ScriptTexts } from './scenarios';
import { labFileSchema, LabFileInput, LIMITS, SUITE_NAME_PATTERN } from './schema';
import type { NetworkConfig } from './network';
import type {
  AuroraConfig,
  DatabaseConfig,
  LabConfig,
  LabProblem,
  LabValidation,
  PoolerConfig,
  ProxyConfig,
} from './types';

type PathSegment = PropertyKey;

/** `['proxies', 1, 'name']` → `proxies[1].name`; `[]` → `(root)`. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const key = String(seg);
      const plain = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key);
      out += plain ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out || '(root)';
}

/** Short rendering of a received value for messages. */
export function formatValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    // undefined for functions and symbols
    text = JSON.stringify(value) ?? notJson(value);
  } catch {
    // a BigInt, or a circular object
    text = notJson(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Rendering of a value JSON.stringify cannot render. */
function notJson(value: unknown): string {
  switch (typeof value) {
    case 'function':
      return 'a function';
    case 'object':
      return value === null ? 'null' : 'an object that is not JSON (circular?)';
    case 'symbol':
      return value.toString();
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'undefined':
      return 'nothing';
  }
}

function mustBe(allowed: string, value: unknown): string {
  return value === undefined
    ? `is required: must be ${allowed}`
    : `must be ${allowed}, got ${formatValue(value)}`;
}

// ---------------------------------------------------------------------------------------------
// did-you-mean for unknown keys

/** Optimal-string-alignment distance: insertions, deletions, substitutions, adjacent swaps. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The known key closest to `key`, if close enough to be a typo. */
export function suggestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const c = candidate.toLowerCase();
    const distance = c === lower ? 0 : editDistance(lower, c);
    const limit = Math.max(1, Math.min(3, Math.floor(candidate.length / 3)));
    if (distance <= limit && (!best || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

/** The keys the schema allows for the object at `path` (walking through optional/array wrappers). */
function knownKeysAt(path: readonly PathSegment[]): string[] {
  let schema: z.ZodType = labFileSchema;
  const unwrap = (s: z.ZodType): z.ZodType => {
    let cur = s;
    for (;;) {
      if (cur instanceof z.ZodOptional || cur instanceof z.ZodDefault || cur instanceof z.ZodNullable) {
        cur = cur.unwrap() as z.ZodType;
      } else return cur;
    }
  };
  // A union of a literal and an object (`network`): its keys are the object option's.
  const objectOf = (s: z.ZodType): z.ZodType =>
    s instanceof z.ZodUnion
      ? ((s.options as readonly z.ZodType[]).find((o) => o instanceof z.ZodObject) ?? s)
      : s;
  for (const seg of path) {
    schema = objectOf(unwrap(schema));
    if (schema instanceof z.ZodArray && typeof seg === 'number') schema = schema.element as z.ZodType;
    else if (schema instanceof z.ZodObject && typeof seg === 'string') {
      const next = (schema.shape as Record<string, z.ZodType | undefined>)[seg];
      if (!next) return [];
      schema = next;
    } else return [];
  }
  schema = objectOf(unwrap(schema));
  // `$schema` is for editors; listing it among the lab's fields would only distract.
  return schema instanceof z.ZodObject ? Object.keys(schema.shape).filter((k) => k !== '$schema') : [];
}

// ---------------------------------------------------------------------------------------------
// pass 1: schema issues → problems

/**
 * A union (`network`: "create" or an object) that failed: when the input has the type of exactly
 * one option (an object given where the other option is a string), that option's issues are the
 * ones that name fields; the union's own message only says what the whole may be.
 */
function matchedUnionOption(issue: z.core.$ZodIssue): z.core.$ZodIssue[] | null {
  if (issue.code !== 'invalid_union') return null;
  const typeMismatch = (i: z.core.$ZodIssue): boolean =>
    i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value');
  const matched = issue.errors.filter((branch) => !(branch.length === 1 && branch.every(typeMismatch)));
  if (matched.length !== 1) return null;
  return (matched[0] ?? []).map((i) => ({ ...i, path: [...issue.path, ...i.path] }));
}

function issueToProblems(issue: z.core.$ZodIssue): LabProblem[] {
  const inner = matchedUnionOption(issue);
  if (inner) return inner.flatMap(issueToProblems);
  const input: unknown = (issue as { input?: unknown }).input;
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeysAt(issue.path);
    const obj = (input && typeof input === 'object' ? input : {}) as Record<string, unknown>;
    return issue.keys.map((key) => {
      const hint = suggestKey(key, known);
      const message =
        `unknown key` +
        (hint ? ` (did you mean "${hint}"?)` : '') +
        (known.length ? `; allowed keys here: ${known.join(', ')}` : '');
      return { path: formatPath([...issue.path, key]), value: obj[key], message };
    });
  }
  if (issue.code === 'invalid_key') {
    const inner = issue.issues[0]?.message ?? 'a valid key';
    return [{ path: formatPath(issue.path), value: input, message: `key ${mustBe(inner, input)}` }];
  }
  return [{ path: formatPath(issue.path), value: input, message: mustBe(issue.message, input) }];
}

// ---------------------------------------------------------------------------------------------
// pass 2: rules between fields, on the raw input

export function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function isIntIn(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

function checkEngineVersion(version: unknown, out: LabProblem[]): void {
  if (typeof version !== 'string' || findEngineVersion(version)) return;
  const path = 'aurora.engineVersion';
  const byMajor = new Map<string, string[]>();
  for (const e of ACCEPTED_ENGINE_VERSIONS) {
    const major = e.version.split('.')[0] ?? '';
    byMajor.set(major, [...(byMajor.get(major) ?? []), e.version]);
  }
  const allowed = [...byMajor.values()].map((v) => v.join(', ')).join('; ');
  const closest = closestAcceptedVersion(version);
  const hint = closest ? ` (closest: ${closest})` : '';
  const message = RETIRED_ENGINE_VERSIONS.includes(version)
    ? `Aurora PostgreSQL ${version} is no longer creatable (AWS retired it); use a creatable version${hint}: ${allowed}; got ${formatValue(version)}`
    : `must be an Aurora PostgreSQL version aws-cdk-lib knows and AWS still creates${hint}: ${allowed}; got ${formatValue(version)}`;
  out.push({ path, value: version, message });
}

/** Membership in an engine's class list, with a close suggestion (`t4g.medium` → `db.t4g.medium`, `db.r6g.huge` → `db.r6g.large`). */
function checkInstanceClass(
  cls: unknown,
  c: {
    path: string;
    engine: string;
    classes: readonly string[];
    examples: string;
    out: LabProblem[];
  },
): void {
  if (typeof cls !== 'string' || c.classes.includes(cls)) return;
  const normalized = cls.startsWith('db.') ? cls : `db.${cls}`;
  const hint = c.classes.includes(normalized)
    ? `; did you mean "${normalized}"?`
    : (() => {
        const s = suggestKey(cls, c.classes) ?? suggestSameFamily(normalized, c.classes);
        return s ? `; did you mean "${s}"?` : '';
      })();
  const families = [...new Set(c.classes.map((x) => x.split('.')[1]))].join(', ');
  c.out.push({
    path: c.path,
    value: cls,
    message: `must be a DB instance class ${c.engine} offers (families ${families}; e.g. ${c.examples}), got ${formatValue(cls)}${hint}`,
  });
}

/** For a known family with an unknown size (`db.r6g.huge`): the closest size of that family by spelling. */
function suggestSameFamily(cls: string, classes: readonly string[]): string | undefined {
  const [, fam, size] = cls.split('.');
  if (!fam || !size) return undefined;
  const sameFamily = classes.filter((c) => c.split('.')[1] === fam);
  if (sameFamily.length === 0) return undefined;
  let best: { c: string; d: number } | undefined;
  for (const c of sameFamily) {
    const d = editDistance(size, c.split('.')[2] ?? '');
    if (!best || d < best.d) best = { c, d };
  }
  return best?.c;
}

function checkCapacity(aurora: Record<string, unknown>, out: LabProblem[]): void {
  const cls = aurora.instanceClass;
  const serverless = asRecord(aurora.serverless);
  if (cls !== undefined && aurora.serverless !== undefined) {
    out.push({
      path: 'aurora.serverless',
      value: aurora.serverless,
      message:
        'must not be given together with aurora.instanceClass: choose a provisioned class OR serverless v2',
    });
  }
  checkInstanceClass(cls, {
    path: 'aurora.instanceClass',
    engine: 'Aurora PostgreSQL',
    classes: AURORA_POSTGRES_INSTANCE_CLASSES,
    examples: 'db.t4g.medium, db.r6g.4xlarge',
    out,
  });
  if (serverless) {
    const min = serverless.minCapacity;
    const max = serverless.maxCapacity;
    if (
      typeof min === 'number' &&
      typeof max === 'number' &&
      min >= 0 &&
      max <= LIMITS.serverlessAcuMax &&
      min > max
    ) {
      out.push({
        path: 'aurora.serverless.minCapacity',
        value: min,
        message: `must be ≤ aurora.serverless.maxCapacity (${max}), got ${formatValue(min)}`,
      });
    }
  }
}

function checkRdsPostgresVersion(version: unknown, out: LabProblem[]): void {
  if (typeof version !== 'string' || findRdsPostgresVersion(version)) return;
  const path = 'postgres.engineVersion';
  const allowed = RDS_POSTGRES_VERSIONS.map((e) => e.version).join(', ');
  const closest = closestRdsPostgresVersion(version);
  const hint = closest ? ` (closest: ${closest})` : '';
  const major = Number(/^(\d+)/.exec(version)?.[1] ?? NaN);
  let message: string;
  if (RDS_POSTGRES_EXTENDED_SUPPORT_MAJORS.includes(major))
    message = `RDS for PostgreSQL ${major} is past RDS end of standard support: AWS creates it only on RDS Extended Support (billed per vCPU-hour on top, not in the price table) or not at all; use a version under standard support: ${allowed}; got ${formatValue(version)}`;
  else if (RDS_POSTGRES_RETIRED_VERSIONS.includes(version))
    message = `RDS for PostgreSQL ${version} is no longer creatable (AWS retired it); use a creatable version${hint}: ${allowed}; got ${formatValue(version)}`;
  else
    message = `must be an RDS for PostgreSQL version aws-cdk-lib knows and AWS still creates${hint}: ${allowed}; got ${formatValue(version)}`;
  out.push({ path, value: version, message });
}

function checkPostgres(pg: Record<string, unknown>, out: LabProblem[]): void {
  checkRdsPostgresVersion(pg.engineVersion, out);
  checkInstanceClass(pg.instanceClass, {
    path: 'postgres.instanceClass',
    engine: 'RDS for PostgreSQL',
    classes: RDS_POSTGRES_INSTANCE_CLASSES,
    examples: 'db.t4g.micro, db.t4g.medium (the classes with a price)',
    out,
  });
  const size = pg.allocatedStorageGb;
  const type = typeof pg.storageType === 'string' ? pg.storageType : DEFAULTS.postgres.storageType;
  const limits = (RDS_STORAGE_LIMITS_GIB as Record<string, { min: number; max: number } | undefined>)[type];
  if (
    limits &&
    typeof size === 'number' &&
    Number.isInteger(size) &&
    (size < limits.min || size > limits.max)
  ) {
    out.push({
      path: 'postgres.allocatedStorageGb',
      value: size,
      message: `must be ${limits.min}–${limits.max} GiB for ${type} storage (RDS for PostgreSQL's limits), got ${formatValue(size)}`,
    });
  }
}

function checkProxies(proxies: unknown, out: LabProblem[]): void {
  if (!Array.isArray(proxies)) return;
  const seen = new Map<string, number>();
  proxies.forEach((p: unknown, i: number) => {
    const proxy = asRecord(p);
    if (!proxy) return;
    const name = proxy.name;
    if (typeof name === 'string') {
      const key = name.toLowerCase();
      const first = seen.get(key);
      if (first !== undefined) {
        out.push({
          path: `proxies[${i}].name`,
          value: name,
          message: `must be unique (case-insensitive): proxies[${first}] is already named ${formatValue(proxies[first] && asRecord(proxies[first])?.name)}, got ${formatValue(name)}`,
        });
      } else seen.set(key, i);
    }
    const max = proxy.maxConnectionsPercent ?? DEFAULTS.proxy.maxConnectionsPercent;
    const idle = proxy.maxIdleConnectionsPercent;
    if (isIntIn(max, 1, 100) && isIntIn(idle, 0, 100) && idle > max) {
      out.push({
        path: `proxies[${i}].maxIdleConnectionsPercent`,
        value: idle,
        message: `must be an integer 0–${max} (≤ maxConnectionsPercent ${max}), got ${formatValue(idle)}`,
      });
    }
  });
}

/**
 * Poolers: names unique among proxies AND poolers (case-insensitive: both become target names),
 * `instanceType` exactly when the placement is dedicated, at most one pooler on the runners (they
 * would share its ports), and a version proxylab has a checksum for.
 */
/** What a pooler's share is taken from: max_connections when the lab sets it, and the runner count. */
interface PoolerBudget {
  readonly maxConnections: number | null;
  readonly runnerCount: number;
}

function poolerBudgetOf(root: Record<string, unknown>): PoolerBudget {
  const db = asRecord(root.postgres) ?? asRecord(root.aurora);
  const max = db?.maxConnections;
  const count = asRecord(root.runners)?.count;
  return {
    maxConnections: typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : null,
    runnerCount:
      typeof count === 'number' && Number.isInteger(count) && count > 0 ? count : DEFAULTS.runners.count,
  };
}

function checkPoolers(poolers: unknown, proxies: unknown, out: LabProblem[], budget: PoolerBudget): void {
  if (!Array.isArray(poolers)) return;
  const taken = new Map<string, string>();
  let firstOnRunners: number | null = null;
  if (Array.isArray(proxies)) {
    proxies.forEach((p: unknown, i: number) => {
      const name = asRecord(p)?.name;
      if (typeof name === 'string' && !taken.has(name.toLowerCase()))
        taken.set(name.toLowerCase(), `proxies[${i}]`);
    });
  }
  poolers.forEach((p: unknown, i: number) => {
    const pooler = asRecord(p);
    if (!pooler) return;
    const at = (key: string): string => `poolers[${i}].${key}`;
    const name = pooler.name;
    if (typeof name === 'string') {
      const first = taken.get(name.toLowerCase());
      if (first !== undefined) {
        out.push({
          path: at('name'),
          value: name,
          message: `must be unique among proxies and poolers (case-insensitive): ${first} is already named like it, got ${formatValue(name)}`,
        });
      } else taken.set(name.toLowerCase(), `poolers[${i}]`);
    }
    const placement = pooler.placement;
    if (placement === 'dedicated' && pooler.instanceType === undefined) {
      out.push({
        path: at('instanceType'),
        value: undefined,
        message:
          'is required for placement "dedicated": must be an EC2 instance type such as "c7g.xlarge" (the pooler host)',
      });
    }
    if (placement === 'on-runners' && pooler.instanceType !== undefined) {
      out.push({
        path: at('instanceType'),
        value: pooler.instanceType,
        message: `must not be given for placement "on-runners" (the pooler runs on the runners, runners.instanceType), got ${formatValue(pooler.instanceType)}`,
      });
    }
    // The driver of a known kind (its data port, its name in messages); null: the schema's error.
    const kindDriver = (POOLER_PRODUCTS as readonly unknown[]).includes(pooler.kind)
      ? poolerDriver(pooler.kind as string)
      : null;
    if (placement === 'on-runners') {
      if (firstOnRunners === null) firstOnRunners = i;
      else
        out.push({
          path: at('placement'),
          value: placement,
          message: `must not be "on-runners" twice: poolers[${firstOnRunners}] already runs on the runners, and both would need ports ${kindDriver ? `${kindDriver.host.dataPort}, ` : ''}${POOLER_STATS_PORT} and ${POOLER_ADMIN_PORT_BASE}+ there; got ${formatValue(placement)}`,
        });
    }
    // Every process opens at least one server connection: more processes (× runners, on-runners)
    // than the share of max_connections would break "poolPercent is the share in total". Known
    // only when the lab sets max_connections (else the engine's formula decides at deploy time).
    const processes = pooler.processes ?? DEFAULTS.pooler.processes;
    const percent = pooler.poolPercent ?? DEFAULTS.pooler.poolPercent;
    if (
      budget.maxConnections !== null &&
      (placement === 'dedicated' || placement === 'on-runners') &&
      typeof processes === 'number' &&
      Number.isInteger(processes) &&
      processes >= 1 &&
      typeof percent === 'number' &&
      percent >= 1 &&
      percent <= 100
    ) {
      const deployments = poolerDeployments(placement, budget.runnerCount);
      const share = totalPoolSize(percent, budget.maxConnections);
      if (processes * deployments > share)
        out.push({
          path: at('processes'),
          value: processes,
          message: `must leave each ${kindDriver?.displayName ?? 'pooler'} process at least one server connection: ${processes} process(es)${deployments > 1 ? ` × ${deployments} runners` : ''} > the pooler's share, ${percent} % of max_connections ${budget.maxConnections} = ${share}; got ${formatValue(processes)}`,
        });
    }
    // A multithreaded product scales inside one process (its worker threads); a single-threaded one
    // across processes. Each knob belongs to one kind of product.
    if (kindDriver) {
      const multithreaded = !kindDriver.capabilities(
        typeof pooler.version === 'string' ? pooler.version : kindDriver.defaultVersion,
      ).singleThreaded;
      if (multithreaded && typeof processes === 'number' && processes !== 1)
        out.push({
          path: at('processes'),
          value: processes,
          message: `must be 1 for ${kindDriver.displayName}: it runs one multithreaded process (set workerThreads for more cores); got ${formatValue(processes)}`,
        });
      if (!multithreaded && pooler.workerThreads !== undefined)
        out.push({
          path: at('workerThreads'),
          value: pooler.workerThreads,
          message: `must not be given for ${kindDriver.displayName}: each process has one thread (set processes for more cores); got ${formatValue(pooler.workerThreads)}`,
        });
    }
    const version = pooler.version;
    // The releases are the driver's; an unknown kind is the schema's error, not this one.
    const driver = kindDriver;
    if (typeof version === 'string' && driver && !driver.releases.some((r) => r.version === version)) {
      out.push({
        path: at('version'),
        value: version,
        message: `must be a ${driver.displayName} release proxylab has pinned (lib/poolers/${driver.product}/releases.ts): ${driver.releases.map((r) => r.version).join(', ')}; got ${formatValue(version)}`,
      });
    }
  });
}

function checkSuites(suites: unknown, scenarios: unknown, out: LabProblem[]): void {
  if (!Array.isArray(suites)) return;
  const hasScenarios = Array.isArray(scenarios) && scenarios.length > 0;
  const known = [...SUITE_NAMES, ...(hasScenarios ? [LAB_SUITE_NAME] : [])];
  suites.forEach((name: unknown, i: number) => {
    if (typeof name !== 'string' || !SUITE_NAME_PATTERN.test(name) || known.includes(name)) return;
    if (name === LAB_SUITE_NAME) {
      out.push({
        path: `suites[${i}]`,
        value: name,
        message: `must name a suite the lab can run: "${LAB_SUITE_NAME}" is the lab's own scenarios, and this lab has no "scenarios" (docs/lab-file.md); catalog suites: ${SUITE_NAMES.join(', ')}`,
      });
      return;
    }
    const hint = suggestKey(name, known);
    out.push({
      path: `suites[${i}]`,
      value: name,
      message: `must be a suite in the catalog (${SUITE_NAMES.join(', ')})${hasScenarios ? ` or "${LAB_SUITE_NAME}" (the lab's own scenarios)` : ''}, got ${formatValue(name)}${hint ? `; did you mean "${hint}"?` : ''}`,
    });
  });
}

function needMet(need: DisruptionNeed, value: unknown): boolean {
  if (need.atLeast !== undefined) return typeof value === 'number' && value >= need.atLeast;
  return value === need.equals;
}

/** A lab whose suites fail over must have something to fail over to. */
function checkDisruptions(root: Record<string, unknown>, out: LabProblem[]): void {
  const suites = Array.isArray(root.suites)
    ? root.suites.filter((s): s is string => typeof s === 'string' && SUITE_NAMES.includes(s))
    : [];
  const reported = new Set<string>();
  for (const name of suites)
    for (const scenario of getSuite(name).scenarios) {
      const action = scenario.probe?.kind === 'disruption' ? scenario.probe.disruption.action : undefined;
      // what the action needs of the lab's database (its record); a disruption of the other engine does
      // not apply to the lab and is recorded not available at run time, so it is no problem here
      const need = action === undefined ? null : disruptionAction(action).needs;
      const db = need ? asRecord(root[need.section]) : undefined;
      if (!need || !db || needMet(need, db[need.field])) continue;
      const path = `${need.section}.${need.field}`;
      if (reported.has(path)) continue;
      reported.add(path);
      const value = db[need.field] ?? `absent (${need.field === 'readers' ? 0 : false} by default)`;
      out.push({
        path,
        value,
        message: `must be ${need.why}; got ${JSON.stringify(value)} (suite ${name}, scenario ${scenario.name})`,
      });
    }
}

function checkTagCount(tags: unknown, out: LabProblem[]): void {
  const record = asRecord(tags);
  if (!record) return;
  const count = Object.keys(record).length;
  if (count > LIMITS.userTagsMax) {
    out.push({
      path: 'tags',
      value: `${count} tags`,
      message: `must hold at most ${LIMITS.userTagsMax} tags (AWS allows 50 per resource; proxylab sets 3 itself), got ${count}`,
    });
  }
}

/**
 * An existing VPC: the lookup needs the lab's `region` (the stack is bound to account and region);
 * `endpoints` means something only without internet egress, `endpointCidrs` only with the network
 * team's endpoints.
 */
function checkNetwork(root: Record<string, unknown>, out: LabProblem[]): void {
  const network = asRecord(root.network);
  if (!network) return;
  // Without internet a pooler host installs only what deploy can stage (a tarball with a published
  // SHA-256); a product whose install fetches more says what (its driver's host.needsInternet).
  if (network.egress === 'vpc-endpoints' && Array.isArray(root.poolers))
    root.poolers.forEach((p: unknown, i: number) => {
      const kind = asRecord(p)?.kind;
      if (!(POOLER_PRODUCTS as readonly unknown[]).includes(kind)) return;
      const driver = poolerDriver(kind as string);
      if (driver.host.needsInternet !== null)
        out.push({
          path: `poolers[${i}].kind`,
          value: kind,
          message: `must be a pooler a host without internet can install (network.egress "vpc-endpoints"): ${driver.displayName} cannot, because ${driver.host.needsInternet}. Use network.egress "internet" (a NAT or transit gateway that reaches those hosts) or a pooler whose release deploy stages (${POOLER_PRODUCTS.filter((k) => poolerDriver(k).host.needsInternet === null).join(', ')}); got ${formatValue(kind)}`,
        });
    });
  if (root.region === undefined)
    out.push({
      path: 'region',
      value: undefined,
      message:
        'is required with an existing VPC (network.vpcId): CDK looks the VPC up in that account and region, so the stack is bound to them; must be an AWS region such as "eu-west-1"',
    });
  if (network.egress === 'internet' && network.endpoints !== undefined)
    out.push({
      path: 'network.endpoints',
      value: network.endpoints,
      message: `must not be given with egress "internet" (the hosts reach AWS through the VPC's own route to the internet; endpoints are for egress "vpc-endpoints"), got ${formatValue(network.endpoints)}`,
    });
  const endpoints = network.endpoints ?? DEFAULTS.network.endpoints;
  if (network.endpointCidrs !== undefined && (network.egress === 'internet' || endpoints !== 'existing'))
    out.push({
      path: 'network.endpointCidrs',
      value: network.endpointCidrs,
      message: `must be given only with egress "vpc-endpoints" and endpoints "existing" (where the network team's endpoints are; the endpoints the lab creates get their own security group), got ${formatValue(network.endpointCidrs)}`,
    });
}

function crossFieldProblems(raw: unknown, readScript: ScriptReader | null, texts: ScriptTexts): LabProblem[] {
  const out: LabProblem[] = [];
  const root = asRecord(raw);
  if (!root) return out;
  const aurora = asRecord(root.aurora);
  if (aurora) {
    checkEngineVersion(aurora.engineVersion, out);
    checkCapacity(aurora, out);
  }
  const postgres = asRecord(root.postgres);
  if (postgres) checkPostgres(postgres, out);
  if (root.aurora !== undefined && root.postgres !== undefined) {
    out.push({
      path: 'postgres',
      value: root.postgres,
      message:
        'must not be given together with aurora: a lab has one database, either "aurora" (Aurora PostgreSQL) or "postgres" (RDS for PostgreSQL)',
    });
  }
  checkProxies(root.proxies, out);
  checkPoolers(root.poolers, root.proxies, out, poolerBudgetOf(root));
  checkSettingsOf(root, out);
  checkSuites(root.suites, root.scenarios, out);
  checkDisruptions(root, out);
  checkTagCount(root.tags, out);
  out.push(...scenarioProblems(root.scenarios, readScript, texts));
  checkNetwork(root, out);
  return out;
}

/**
 * Each proxy's and pooler's `settings` against its product's catalogue, for the version it pins (a
 * pooler's `version`, else its driver's default; RDS Proxy has none). A pooler of an unknown kind or
 * version is left to the checks that name those.
 */
function checkSettingsOf(root: Record<string, unknown>, out: LabProblem[]): void {
  if (Array.isArray(root.proxies))
    root.proxies.forEach((p: unknown, i: number) => {
      const r = asRecord(p);
      if (r) out.push(...settingsProblems('rds-proxy', null, r.settings, `proxies[${i}].settings`));
    });
  if (Array.isArray(root.poolers))
    root.poolers.forEach((p: unknown, i: number) => {
      const r = asRecord(p);
      if (!r || typeof r.kind !== 'string' || !(POOLER_PRODUCTS as readonly string[]).includes(r.kind))
        return;
      const driver = poolerDriver(r.kind);
      const version = typeof r.version === 'string' ? r.version : driver.defaultVersion;
      if (!driver.releases.some((x) => x.version === version)) return;
      out.push(...settingsProblems(r.kind, version, r.settings, `poolers[${i}].settings`));
    });
}

// ---------------------------------------------------------------------------------------------
// defaults

function databaseWithDefaults(input: LabFileInput): DatabaseConfig {
  const p = input.postgres;
  if (p) {
    const d = DEFAULTS.postgres;
    return {
      engine: 'postgres',
      engineVersion: p.engineVersion ?? d.engineVersion,
      instanceClass: p.instanceClass ?? d.instanceClass,
      allocatedStorageGb: p.allocatedStorageGb ?? d.allocatedStorageGb,
      storageType: p.storageType ?? d.storageType,
      multiAz: p.multiAz ?? d.multiAz,
      maxConnections: p.maxConnections ?? null,
      performanceInsights: p.performanceInsights ?? d.performanceInsights,
      logConnections: p.logConnections ?? d.logConnections,
      snapshotOnDestroy: p.snapshotOnDestroy ?? d.snapshotOnDestroy,
    };
  }
  const a = input.aurora ?? {};
  const capacity: AuroraConfig['capacity'] = a.serverless
    ? {
        kind: 'serverless',
        minCapacityAcu: a.serverless.minCapacity,
        maxCapacityAcu: a.serverless.maxCapacity,
      }
    : { kind: 'provisioned', instanceClass: a.instanceClass ?? DEFAULTS.aurora.instanceClass };
  return {
    engine: 'aurora-postgresql',
    engineVersion: a.engineVersion ?? DEFAULTS.aurora.engineVersion,
    capacity,
    readers: a.readers ?? DEFAULTS.aurora.readers,
    storageType: a.storageType ?? DEFAULTS.aurora.storageType,
    maxConnections: a.maxConnections ?? null,
    performanceInsights: a.performanceInsights ?? DEFAULTS.aurora.performanceInsights,
    logConnections: a.logConnections ?? DEFAULTS.aurora.logConnections,
    snapshotOnDestroy: a.snapshotOnDestroy ?? DEFAULTS.aurora.snapshotOnDestroy,
  };
}

function networkWithDefaults(input: LabFileInput): NetworkConfig {
  const n = input.network;
  if (n === undefined || n === 'create') return { mode: 'create' };
  return {
    mode: 'existing',
    account: n.account,
    // validate.ts requires the region with an existing VPC (checkNetwork)
    region: input.region ?? '',
    vpcId: n.vpcId,
    subnetIds: n.subnetIds,
    egress: n.egress,
    endpoints: n.endpoints ?? DEFAULTS.network.endpoints,
    endpointCidrs: n.endpointCidrs ?? [],
  };
}

function withDefaults(input: LabFileInput, texts: ScriptTexts): LabConfig {
  const proxies: ProxyConfig[] = (input.proxies ?? []).map((p) => {
    const maxConnectionsPercent = p.maxConnectionsPercent ?? DEFAULTS.proxy.maxConnectionsPercent;
    return {
      name: p.name,
      maxConnectionsPercent,
      maxIdleConnectionsPercent:
        p.maxIdleConnectionsPercent ?? defaultMaxIdleConnectionsPercent(maxConnectionsPercent),
      borrowTimeoutSeconds: p.borrowTimeoutSeconds ?? DEFAULTS.proxy.borrowTimeoutSeconds,
      requireTls: p.requireTls ?? DEFAULTS.proxy.requireTls,
      debugLogging: p.debugLogging ?? DEFAULTS.proxy.debugLogging,
      settings: settingsOf(p.settings),
    };
  });
  const poolers: PoolerConfig[] = (input.poolers ?? []).map((p) => ({
    name: p.name,
    kind: p.kind,
    placement: p.placement,
    instanceType: p.instanceType ?? null,
    version: p.version ?? poolerDriver(p.kind).defaultVersion,
    poolModes: p.poolModes ?? DEFAULTS.pooler.poolModes,
    poolPercent: p.poolPercent ?? DEFAULTS.pooler.poolPercent,
    maxPreparedStatements: p.maxPreparedStatements ?? poolerDriver(p.kind).defaultMaxPreparedStatements,
    processes: p.processes ?? DEFAULTS.pooler.processes,
    workerThreads: p.workerThreads ?? null,
    tls: p.tls ?? DEFAULTS.pooler.tls,
    settings: settingsOf(p.settings),
  }));
  return {
    name: input.name,
    description: input.description ?? DEFAULTS.description,
    region: input.region ?? null,
    owner: input.owner ?? null,
    database: databaseWithDefaults(input),
    proxies,
    poolers,
    runners: {
      instanceType: input.runners?.instanceType ?? DEFAULTS.runners.instanceType,
      count: input.runners?.count ?? DEFAULTS.runners.count,
      placement: input.runners?.placement ?? DEFAULTS.runners.placement,
      spot: input.runners?.spot ?? DEFAULTS.runners.spot,
    },
    crossZone: input.crossZone ?? DEFAULTS.crossZone,
    network: networkWithDefaults(input),
    results: {
      retainOnDestroy: input.results?.retainOnDestroy ?? DEFAULTS.results.retainOnDestroy,
      expireAfterDays: input.results?.expireAfterDays ?? DEFAULTS.results.expireAfterDays,
    },
    ttlHours: input.ttlHours === undefined ? DEFAULTS.ttlHours : input.ttlHours,
    tags: input.tags ?? {},
    suites: input.suites ?? (input.scenarios !== undefined ? [LAB_SUITE_NAME] : DEFAULTS.suites),
    scenarios: labScenariosWithDefaults(input.scenarios, texts),
    budget: input.budget ?? null,
  };
}

export interface ValidateOptions {
  /** More checks on the parsed file (e.g. prices), reported among the schema's problems. */
  readonly extraChecks?: (raw: unknown) => LabProblem[];
  /**
   * Reads the script files `scenarios[].workload[].file` names, relative to the lab file's folder
   * (lib/config/load.ts gives one). Without it a lab that names a script file is a problem there.
   */
  readonly readScript?: ScriptReader;
}

/** Validates a parsed lab file (any JSON value); reports every problem at once. */
export function validateLab(raw: unknown, opts: ValidateOptions = {}): LabValidation {
  const rootObject = asRecord(raw);
  if (!rootObject) {
    return { ok: false, problems: [{ path: '(root)', value: raw, message: mustBe('a JSON object', raw) }] };
  }
  const parsed = labFileSchema.safeParse(raw, { reportInput: true });
  const problems: LabProblem[] = parsed.success ? [] : parsed.error.issues.flatMap(issueToProblems);
  const texts: ScriptTexts = new Map();
  problems.push(
    ...crossFieldProblems(raw, opts.readScript ?? null, texts),
    ...(opts.extraChecks?.(raw) ?? []),
  );
  // Document order of top-level keys, then the order the checks found them (stable sort).
  const topOrder = Object.keys(rootObject);
  const rank = (p: LabProblem): number => {
    const top = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(p.path)?.[0] ?? '';
    const i = topOrder.indexOf(top);
    return i < 0 ? topOrder.length : i;
  };
  problems.sort((x, y) => rank(x) - rank(y));
  const seen = new Set<string>();
  const unique = problems.filter((p) => {
    const key = `${p.path}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (unique.length > 0 || !parsed.success) return { ok: false, problems: unique };
  return { ok: true, lab: withDefaults(parsed.data, texts) };
}

/** One line per problem: `path: message`. */
export function formatProblems(problems: readonly LabProblem[], source?: string): string {
  const lines = problems.map((p) => `${p.path}: ${p.message}`);
  return source
    ? [
        `${source}: ${problems.length} problem${problems.length === 1 ? '' : 's'}`,
        ...lines.map((l) => `  ${l}`),
      ].join('\n')
    : lines.join('\n');
}

/** One line describing a validated lab, e.g. for `proxylab validate`. */
export function summarizeLab(lab: LabConfig): string {
  const db = lab.database;
  const maxConn =
    db.maxConnections === null ? 'default max_connections' : `max_connections ${db.maxConnections}`;
  const proxies =
    lab.proxies.length === 0
      ? 'no proxy'
      : `${lab.proxies.length} prox${lab.proxies.length === 1 ? 'y' : 'ies'} (${lab.proxies
          .map((p) => `${p.name} ${p.maxConnectionsPercent}%`)
          .join(', ')})`;
  const poolers =
    lab.poolers.length === 0
      ? ''
      : `; ${lab.poolers.length} pooler${lab.poolers.length === 1 ? '' : 's'} (${lab.poolers
          .map(
            (p) =>
              `${p.name} ${poolerDriver(p.kind).displayName} ${p.version} ${p.placement === 'dedicated' ? `on ${p.instanceType ?? '?'}` : 'on the runners'} ${p.poolModes.join('/')} ×${p.processes}`,
          )
          .join(', ')})`;
  const runners = `${lab.runners.count} × ${lab.runners.instanceType}${lab.runners.spot ? ' spot' : ''} runner${lab.runners.count === 1 ? '' : 's'}`;
  const n = lab.network;
  const network =
    n.mode === 'existing'
      ? `; existing ${n.vpcId} (${n.subnetIds.length} subnets, egress ${n.egress}${n.egress === 'vpc-endpoints' ? `, ${n.endpoints} endpoints` : ''})`
      : '';
  return `${lab.name}: ${describeDatabase(db)}, ${maxConn}; ${proxies}${poolers}; ${runners}${network}; ${lab.ttlHours === null ? 'no expiry' : `ttl ${lab.ttlHours} h`}`;
}
