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
import { describeDatabase } from './database';
import { DEFAULTS } from './defaults';
import { poolerDriver } from '../poolers/registry';
import { POOLER_PRODUCTS } from '../poolers/products';
import { getSuite, LAB_SUITE_NAME, SUITE_NAMES } from '../suite/catalog';
import { disruptionAction, type DisruptionNeed } from '../suite/disruption-actions';
import { disruptionLoadProblems, scenarioProblems, type ScriptReader, type ScriptTexts } from './scenarios';
import { labFileSchema, LIMITS, SUITE_NAME_PATTERN } from './schema';
import type { LabConfig, LabProblem, LabValidation } from './types';
import { formatValue, mustBe, suggestKey, issueToProblems, asRecord } from './problems';
import { checkEngineVersion, checkCapacity, checkPostgres } from './checks-database';
import { needDefault, newerMinorHint, newerMinorOf } from './minor-versions';
import { checkProxies, poolerBudgetOf, checkPoolers, checkSettingsOf } from './checks-targets';
import { withDefaults } from './with-defaults';

export { asRecord, formatPath, formatValue, suggestKey } from './problems';

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
  if (need.newerMinor === true) return newerMinorOf(need.section, value) !== null;
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
      // what the action needs of the lab's database (its record): each need of the section the lab
      // has; a disruption of the other engine does not apply to the lab and is recorded not
      // available at run time, so it is no problem here
      for (const need of action === undefined ? [] : disruptionAction(action).needs) {
        const db = asRecord(root[need.section]);
        if (!db || needMet(need, db[need.field])) continue;
        const path = `${need.section}.${need.field}`;
        if (reported.has(path)) continue;
        reported.add(path);
        const value = db[need.field] ?? `absent (${needDefault(need)} by default)`;
        const hint = need.newerMinor === true ? newerMinorHint(need.section) : '';
        out.push({
          path,
          value,
          message: `must be ${need.why}; got ${JSON.stringify(value)}${hint} (suite ${name}, scenario ${scenario.name})`,
        });
      }
      // what it needs of a lab-level list (a Blue/Green switchover: an RDS Proxy to measure through)
      const list = action === undefined ? undefined : disruptionAction(action).needsList;
      if (list === undefined || reported.has(list.field)) continue;
      const entries = root[list.field];
      const have = Array.isArray(entries) ? entries.length : 0;
      if (have >= list.atLeast) continue;
      reported.add(list.field);
      out.push({
        path: list.field,
        value: entries ?? 'absent ([] by default)',
        message: `must be ${list.why}; got ${have} (suite ${name}, scenario ${scenario.name})`,
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
  out.push(...disruptionLoadProblems(root.disruptionLoad, root.scenarios));
  checkNetwork(root, out);
  return out;
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
