/**
 * Generates the documentation tables that restate code, and the lab JSON Schema:
 *
 *   lab-fields      docs/lab-file.md, README.md   from the zod schema's .meta() (lib/config/schema.ts)
 *   suites          docs/suite.md, README.md      from the suite catalog (lib/suite/catalog.ts)
 *   scenarios       docs/suite.md                 idem
 *   sources         docs/suite.md                 idem (each experiment's published source)
 *   expectations    docs/suite.md                 idem (the expectation rules)
 *   error-classes   docs/suite.md                 from the parser's ERROR_PATTERNS (lib/suite/parser.ts)
 *   operator-policy docs/aws.md                   from `proxylab iam-policy` (lib/operator/iam-policy.ts) for labs/default.json
 *   server-stops    docs/suite.md                 from SERVER_STOP_MESSAGES (lib/suite/server-stop.ts)
 *   session-features docs/session-state.md       from the session-state programs and expectations (lib/suite/session-state.ts)
 *   settings        docs/settings.md              from the settings catalogues (lib/products/<product>/settings.ts)
 *   docs/lab.schema.json                          z.toJSONSchema of the lab schema (lib/config/json-schema.ts)
 *
 *   npx tsx scripts/gen-docs.ts           report what is out of date (exit 1 when something is)
 *   npx tsx scripts/gen-docs.ts --write   rewrite every block between `<!-- NAME:start -->` and
 *                                         `<!-- NAME:end -->`, and the schema file
 *
 * test/unit/generated-docs.test.ts fails when a committed block or the schema drifts.
 * (The README's cost table has its own generator: scripts/cost-table.ts.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  OPERATOR_ROLE_COMMANDS,
  OPERATOR_ROLES,
  operatorPolicy,
  type IamStatement,
  type OperatorRole,
} from '../lib/operator/iam-policy';
import { labJsonSchema, LAB_SCHEMA_FILE, type JsonSchema } from '../lib/config/json-schema';
import { loadLabFile } from '../lib/config/load';
import {
  EXPERIMENT_SOURCES,
  getSuite,
  scriptLabel,
  SUITE_NAMES,
  type ClientsSpec,
  type ExpectationRule,
  type Scenario,
} from '../lib/suite/catalog';
import { probeLabel } from '../lib/suite/probes';
import { CLASSES_WITHOUT_PATTERNS, ERROR_PATTERNS } from '../lib/suite/parser';
import { SERVER_STOP_MESSAGES, SERVER_STOPPED } from '../lib/suite/server-stop';
import {
  describeTarget,
  directTarget,
  kindsSelected,
  managedProxyTarget,
  poolerTarget,
  type TargetDescriptor,
} from '../lib/suite/targets';
import {
  describeSessionExpectation,
  expectSession,
  SESSION_FEATURE_INFO,
  SESSION_FEATURES,
  SESSION_SOURCES,
  type SessionFeature,
} from '../lib/suite/session-state';
import { describeMatch } from '../lib/suite/coverage';
import { catalogueMarkdown, pinnedVersions } from '../lib/cli/settings-catalogue';
import { POOLER_DRIVERS } from '../lib/poolers/registry';

export const ROOT = join(__dirname, '..');

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (text: string): string => `\`${text}\``;

// ------------------------------------------------------------------------------ lab fields

type Js = Record<string, unknown>;

function asJs(v: unknown): Js | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Js) : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

/** What a JSON Schema node allows, in words, from its constraints only. */
function allowed(js: Js): string {
  if (Array.isArray(js.anyOf)) {
    const options = (js.anyOf as unknown[]).map(asJs).filter((o): o is Js => o !== undefined);
    const nonNull = options.filter((o) => o.type !== 'null').map(allowed);
    return [...nonNull, ...(options.some((o) => o.type === 'null') ? ['`null`'] : [])].join(' or ');
  }
  const types = (Array.isArray(js.type) ? js.type : [js.type]).filter(
    (t): t is string => typeof t === 'string',
  );
  const nullable = types.includes('null');
  const type = types.find((t) => t !== 'null');
  const parts: string[] = [];
  if ('const' in js) return code(JSON.stringify(js.const));
  const list = Array.isArray(js.enum) ? (js.enum as unknown[]) : null;
  if (list) {
    parts.push(
      list.length <= 6 ? list.map((v) => code(JSON.stringify(v))).join(', ') : `one of ${list.length} values`,
    );
  } else if (type === 'integer' || type === 'number') {
    const min = num(js.minimum);
    const max = num(js.maximum);
    const exMin = num(js.exclusiveMinimum);
    const what = type === 'integer' ? 'integer' : 'number';
    if (min !== undefined && max !== undefined) parts.push(`${what} ${min}–${max}`);
    else if (exMin !== undefined && max !== undefined) parts.push(`${what} > ${exMin} and ≤ ${max}`);
    else if (exMin !== undefined) parts.push(`${what} > ${exMin}`);
    else if (min !== undefined) parts.push(`${what} ≥ ${min}`);
    else parts.push(what);
    const step = num(js.multipleOf);
    if (step !== undefined) parts.push(`in steps of ${step}`);
  } else if (type === 'boolean') {
    parts.push('`true` or `false`');
  } else if (type === 'string') {
    const max = num(js.maxLength);
    const min = num(js.minLength);
    parts.push(max !== undefined ? `text of ${min ?? 0}–${max} characters` : 'text');
  } else if (type === 'array') {
    const max = num(js.maxItems);
    const min = num(js.minItems);
    parts.push(
      max !== undefined ? `list of at most ${max}` : min !== undefined && min > 0 ? 'non-empty list' : 'list',
    );
  } else if (type === 'object') {
    parts.push(asJs(js.properties) ? 'object (fields below)' : 'object of string → string');
  }
  if (nullable) parts.push('or `null`');
  return parts.join(' ');
}

export interface LabFieldRow {
  readonly path: string;
  readonly default: string;
  readonly allowed: string;
  readonly description: string;
}

/** One row per documented field of a lab file, in schema order, from the JSON Schema (defaults, descriptions, bounds). */
export function labFieldRows(schema: JsonSchema = labJsonSchema({ keepDefaultText: true })): LabFieldRow[] {
  const rows: LabFieldRow[] = [];
  const walk = (node: Js, prefix: string): void => {
    const props = asJs(node.properties) ?? {};
    const required = Array.isArray(node.required) ? (node.required as string[]) : [];
    for (const [key, value] of Object.entries(props)) {
      const js = asJs(value);
      if (!js || key === '$schema') continue;
      const path = `${prefix}${key}`;
      const children = asJs(js.properties);
      if (js.type === 'object' && children) {
        walk(js, `${path}.`);
        continue;
      }
      const dflt =
        'default' in js
          ? code(JSON.stringify(js.default))
          : typeof js.defaultText === 'string'
            ? js.defaultText
            : required.includes(key)
              ? prefix === ''
                ? '(required)'
                : `(required in \`${prefix.replace(/\.$/, '')}\`)`
              : '—';
      rows.push({
        path,
        default: dflt,
        allowed: allowed(js),
        description: typeof js.description === 'string' ? js.description : '',
      });
      const items = asJs(js.items);
      if (js.type === 'array' && items && asJs(items.properties)) walk(items, `${path}[].`);
      // A choice of a value or an object (`network`: "create" or an existing VPC): the object's fields too.
      const objectOption = Array.isArray(js.anyOf)
        ? (js.anyOf as unknown[]).map(asJs).find((o) => o?.type === 'object' && asJs(o.properties))
        : undefined;
      if (objectOption) walk(objectOption, `${path}.`);
    }
  };
  walk(schema, '');
  return rows;
}

function renderLabFields(): string {
  return [
    '| field | default | allowed | what |',
    '|---|---|---|---|',
    ...labFieldRows().map(
      (r) =>
        `| ${code(r.path)} | ${cell(r.default)} | ${cell(r.allowed)} | ${cell(r.description)}${settingsPointer(r.path)} |`,
    ),
  ].join('\n');
}

/** A `settings` field's row names the page listing every catalogue (the block is in README.md too: no link). */
function settingsPointer(path: string): string {
  return /\]\.settings$/.test(path) ? " Every product's catalogue: docs/settings.md." : '';
}

// ------------------------------------------------------------------------------ suites

function allScenarios(): Array<{ scenario: Scenario; suites: string[] }> {
  const byName = new Map<string, { scenario: Scenario; suites: string[] }>();
  for (const name of SUITE_NAMES) {
    for (const s of getSuite(name).scenarios) {
      const entry = byName.get(s.name) ?? { scenario: s, suites: [] };
      entry.suites.push(name);
      byName.set(s.name, entry);
    }
  }
  return [...byName.values()];
}

function renderSuites(): string {
  return [
    '| suite | what | scenarios |',
    '|---|---|---|',
    ...SUITE_NAMES.map((name) => {
      const suite = getSuite(name);
      return `| ${code(name)} | ${cell(suite.description)} | ${suite.scenarios.map((s) => code(s.name)).join(', ')} |`;
    }),
  ].join('\n');
}

const round = (x: number): string => String(Math.round(x * 1000) / 1000);

function clientsText(clients: readonly ClientsSpec[]): string {
  const abs = clients.filter((c): c is number => typeof c === 'number');
  const rel = clients.filter((c): c is Exclude<ClientsSpec, number> => typeof c !== 'number');
  const parts: string[] = [];
  if (abs.length > 0) parts.push(abs.join(', '));
  for (const basis of ['maxConnections', 'poolSize'] as const) {
    const times = rel.filter((c) => c.of === basis).map((c) => c.times);
    if (times.length === 0) continue;
    const what = basis === 'maxConnections' ? 'max_connections' : 'pool size';
    const list =
      times.length > 6
        ? `${round(Math.min(...times))}…${round(Math.max(...times))} (${times.length} values)`
        : times.map(round).join(', ');
    parts.push(`{${list}} × ${what}`);
  }
  return parts.join('; ');
}

function pgbenchText(s: Scenario): string {
  const parts = [`-j ${s.jobs}`];
  if (s.durationSec !== undefined) parts.push(`-T ${s.durationSec}`);
  if (s.transactionsPerClient !== undefined) parts.push(`-t ${s.transactionsPerClient}`);
  if (s.rate !== undefined) parts.push(`-R ${s.rate}`);
  parts.push(`scale ${s.scale}`, ...s.initFlags);
  return parts.join(' ');
}

function renderScenarios(): string {
  return [
    '| scenario | suites | experiment | script | pgbench | clients | targets | protocol × connect | pool % | reps |',
    '|---|---|---|---|---|---|---|---|---|---:|',
    ...allScenarios().map(({ scenario: s, suites }) =>
      [
        '',
        code(s.name),
        suites.join(', '),
        `${s.experiment}: ${cell(s.title)}`,
        // A probe scenario runs no pgbench: its probe in place of the script (lib/suite/probes.ts).
        code(s.probe ? probeLabel(s.probe) : scriptLabel(s.script)),
        s.probe
          ? s.probe.kind === 'disruption' && s.probe.load !== undefined
            ? `probe; background load ${code(`-b ${s.probe.load.scenario} -c ${s.probe.load.clients}`)}`
            : 'probe, no pgbench'
          : code(pgbenchText(s)),
        cell(clientsText(s.clients)),
        kindsSelected(s.targets).join(', '),
        `${s.protocols.join('/')} × ${s.connects.join('/')}`,
        s.poolPercents ? s.poolPercents.join(', ') : '',
        String(s.repetitions),
        '',
      ]
        .join(' | ')
        .trim(),
    ),
  ].join('\n');
}

function whenText(rule: ExpectationRule): string {
  const w = rule.when;
  const parts: string[] = [w.target ? describeMatch(w.target) : 'any target'];
  if (w.protocols) parts.push(`protocol ${w.protocols.join('/')}`);
  if (w.connects) parts.push(`connect ${w.connects.join('/')}`);
  if (w.maxConnectionsBand) parts.push(`clients ${w.maxConnectionsBand.join('/')} max_connections`);
  if (w.clientsAbovePoolSize !== undefined)
    parts.push(w.clientsAbovePoolSize ? 'clients > pool size' : 'clients ≤ pool size');
  return parts.join('; ');
}

function expectedText(rule: ExpectationRule): string {
  const classes = rule.errorClasses ? `: ${[...new Set(rule.errorClasses)].join(' | ')}` : '';
  return code(`${rule.outcome}${classes}`);
}

function renderExpectations(): string {
  const rows = new Map<string, { rule: ExpectationRule; where: string[] }>();
  for (const { scenario } of allScenarios()) {
    scenario.expectations.forEach((rule, i) => {
      const key = JSON.stringify(rule);
      const row = rows.get(key) ?? { rule, where: [] };
      row.where.push(`${scenario.name} #${i + 1}`);
      rows.set(key, row);
    });
  }
  return [
    '| when | expected | why | scenarios (rule position) |',
    '|---|---|---|---|',
    ...[...rows.values()].map(({ rule, where }) => {
      const why = [rule.note, rule.published ? `published: ${rule.published}` : undefined]
        .filter((x): x is string => x !== undefined)
        .join('; ');
      return `| ${cell(whenText(rule))} | ${cell(expectedText(rule))} | ${cell(why)} | ${where.join(', ')} |`;
    }),
  ].join('\n');
}

function renderSources(): string {
  return [
    '| experiment | source | publisher | date | where |',
    '|---|---|---|---|---|',
    ...EXPERIMENT_SOURCES.map(({ id, source: s }) =>
      [
        '',
        id,
        cell(s.title),
        cell(s.publisher ?? 'not public'),
        s.date ?? '—',
        cell(s.url ?? `not public${s.note ? ` (${s.note.replace(/^not public:\s*/, '')})` : ''}`),
        '',
      ]
        .join(' | ')
        .trim(),
    ),
  ].join('\n');
}

function renderErrorClasses(): string {
  return [
    '| class | matched (case-insensitive, first class wins) |',
    '|---|---|',
    ...ERROR_PATTERNS.map((e) =>
      e.class === SERVER_STOPPED
        ? `| ${e.class} | a server or PgBouncer shut down, restarted or crashed: any message of the table under [Infrastructure failures](#infrastructure-failures-a-server-that-stops-is-never-a-finding) (SQLSTATE 57P01, 57P02, 57P03; PgBouncer's 08P01 shutdown messages) |`
        : `| ${e.class} | ${e.patterns.map((p) => cell(code(p.source.replace(/\\/g, '')))).join(', ')} |`,
    ),
    ...Object.entries(CLASSES_WITHOUT_PATTERNS).map(([cls, text]) => `| ${cls} | ${cell(text)} |`),
  ].join('\n');
}

// ------------------------------------------------------------------------------ operator policy

/** AWS's documentation example account: the docs show ARNs pinned the way `--account` pins them. */
export const DOCS_ACCOUNT = '111122223333';

function statementText(st: IamStatement): string {
  const list = (v: string | readonly string[]): string =>
    (typeof v === 'string' ? [v] : v).map(code).join(', ');
  const condition = st.Condition
    ? Object.entries(st.Condition)
        .flatMap(([op, kv]) =>
          Object.entries(kv).map(([k, v]) => `${op} ${code(k)} = ${list(typeof v === 'string' ? v : v)}`),
        )
        .join('; ')
    : '';
  return `${list(st.Action)} | ${list(st.Resource)} | ${cell(condition)}`;
}

function renderOperatorPolicy(): string {
  const lab = loadLabFile(join(ROOT, 'labs', 'default.json'));
  const policies = Object.fromEntries(
    OPERATOR_ROLES.map((role) => [role, operatorPolicy(lab, { role, account: DOCS_ACCOUNT })]),
  ) as Record<OperatorRole, ReturnType<typeof operatorPolicy>>;
  const firstRole = (sid: string): OperatorRole =>
    OPERATOR_ROLES.find((r) => policies[r].Statement.some((st) => st.Sid === sid)) ?? 'deploy';
  return [
    `\`proxylab iam-policy --lab labs/default.json --role ROLE --account ${DOCS_ACCOUNT}\` (each role includes the ones above it):`,
    '',
    '| role | for |',
    '|---|---|',
    ...OPERATOR_ROLES.map((r) => `| ${code(r)} | ${OPERATOR_ROLE_COMMANDS[r]} |`),
    '',
    '| statement | from role | actions | resources | condition |',
    '|---|---|---|---|---|',
    ...policies.deploy.Statement.map((st) => `| ${st.Sid} | ${firstRole(st.Sid)} | ${statementText(st)} |`),
    '',
    'The `run` policy in full (`--role run`):',
    '',
    '```json',
    JSON.stringify(policies.run, null, 2),
    '```',
  ].join('\n');
}

function renderServerStops(): string {
  return [
    '| message (case-insensitive) | SQLSTATE | from | when |',
    '|---|---|---|---|',
    ...SERVER_STOP_MESSAGES.map(
      (m) =>
        `| ${cell(code(m.pattern.source.replace(/\\b/g, '').replace(/\\/g, '')))} | ${m.sqlstate} | ${m.source} | ${cell(m.when)} |`,
    ),
  ].join('\n');
}

/**
 * The session-state features: what each program does, and what each kind of target is expected to
 * show, decided by expectSession from a representative descriptor — so the table follows the code.
 */
function renderSessionFeatures(): string {
  const targets: ReadonlyArray<[string, TargetDescriptor]> = [
    ['direct', describeTarget(directTarget(), { version: '17' })],
    [
      'PgBouncer 1.18 transaction',
      describeTarget(poolerTarget('pgbouncer', 'b', 'transaction'), {
        version: '1.18.0',
        maxPreparedStatements: null,
      }),
    ],
    [
      'PgBouncer 1.25 transaction',
      describeTarget(poolerTarget('pgbouncer', 'b', 'transaction'), {
        version: '1.25.2',
        maxPreparedStatements: 200,
      }),
    ],
    [
      'PgBouncer session',
      describeTarget(poolerTarget('pgbouncer', 'b', 'session'), {
        version: '1.25.2',
        maxPreparedStatements: 200,
      }),
    ],
    [
      'PgDoorman 3.10 transaction',
      describeTarget(poolerTarget('pgdoorman', 'd', 'transaction'), {
        version: '3.10.7',
        maxPreparedStatements: 8192,
      }),
    ],
    [
      'PgDoorman session',
      describeTarget(poolerTarget('pgdoorman', 'd', 'session'), {
        version: '3.10.7',
        maxPreparedStatements: 8192,
      }),
    ],
    ['RDS Proxy', describeTarget(managedProxyTarget('proxy'), { version: null })],
  ];
  const expected = (f: SessionFeature, d: TargetDescriptor): string => {
    const e = expectSession(f, d);
    const pins = e.pins === null ? '' : e.pins ? ', pins' : ', no pin';
    return `${describeSessionExpectation(e)}${pins}`;
  };
  const sourcesOf = (f: SessionFeature): string =>
    [...new Set(targets.flatMap(([, d]) => expectSession(f, d).sources))]
      .map((id) => `[${id}](${SESSION_SOURCES[id].url})`)
      .join(', ');
  return [
    `| feature | what the probe does | ${targets.map(([n]) => n).join(' | ')} | RDS Proxy's pinning condition | sources |`,
    `|---|---|${targets.map(() => '---').join('|')}|---|---|`,
    ...SESSION_FEATURES.map((f) => {
      const info = SESSION_FEATURE_INFO[f];
      return [
        '',
        `${cell(info.label)} (\`${f}\`)`,
        cell(info.what),
        ...targets.map(([, d]) => expected(f, d)),
        cell(info.rdsProxy.condition),
        sourcesOf(f),
        '',
      ]
        .join(' | ')
        .trim();
    }),
  ].join('\n');
}

// ------------------------------------------------------------------------------ blocks and files

export interface GeneratedBlock {
  readonly name: string;
  readonly files: readonly string[];
  readonly render: () => string;
}

export const BLOCKS: readonly GeneratedBlock[] = [
  { name: 'lab-fields', files: ['docs/lab-file.md', 'README.md'], render: renderLabFields },
  { name: 'suites', files: ['docs/suite.md', 'README.md'], render: renderSuites },
  { name: 'scenarios', files: ['docs/suite.md'], render: renderScenarios },
  { name: 'sources', files: ['docs/suite.md'], render: renderSources },
  { name: 'expectations', files: ['docs/suite.md'], render: renderExpectations },
  { name: 'error-classes', files: ['docs/suite.md'], render: renderErrorClasses },
  { name: 'operator-policy', files: ['docs/aws.md'], render: renderOperatorPolicy },
  { name: 'server-stops', files: ['docs/suite.md'], render: renderServerStops },
  { name: 'session-features', files: ['docs/session-state.md'], render: renderSessionFeatures },
  {
    name: 'settings',
    files: ['docs/settings.md'],
    render: () => catalogueMarkdown((p) => pinnedVersions(POOLER_DRIVERS, p)),
  },
];

export const markers = (name: string): { start: string; end: string } => ({
  start: `<!-- ${name}:start -->`,
  end: `<!-- ${name}:end -->`,
});

/** The block with its markers and the do-not-edit note. */
export function blockText(block: GeneratedBlock): string {
  const { start, end } = markers(block.name);
  return [
    start,
    `<!-- generated by \`npx tsx scripts/gen-docs.ts --write\`; do not edit by hand -->`,
    '',
    block.render(),
    '',
    end,
  ].join('\n');
}

/** The committed block (markers included) in `text`, or null when the markers are missing. */
export function extractBlock(text: string, name: string): string | null {
  const { start, end } = markers(name);
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) return null;
  return text.slice(i, j + end.length);
}

export function replaceBlock(text: string, name: string, block: string): string | null {
  const current = extractBlock(text, name);
  return current === null ? null : text.replace(current, () => block);
}

export function labSchemaText(): string {
  return JSON.stringify(labJsonSchema(), null, 2) + '\n';
}

function main(argv: readonly string[]): number {
  const write = argv.includes('--write');
  let stale = 0;
  const files = new Map<string, string>();
  const read = (rel: string): string => files.get(rel) ?? readFileSync(join(ROOT, rel), 'utf8');
  for (const block of BLOCKS) {
    const text = blockText(block);
    for (const rel of block.files) {
      const next = replaceBlock(read(rel), block.name, text);
      if (next === null) {
        process.stderr.write(
          `${rel}: no ${markers(block.name).start} … ${markers(block.name).end} markers\n`,
        );
        stale++;
        continue;
      }
      if (next !== read(rel)) {
        process.stdout.write(`${rel}: ${block.name} ${write ? 'updated' : 'out of date'}\n`);
        stale++;
      }
      files.set(rel, next);
    }
  }
  const schema = labSchemaText();
  let current: string;
  try {
    current = readFileSync(join(ROOT, LAB_SCHEMA_FILE), 'utf8');
  } catch {
    current = '';
  }
  if (current !== schema) {
    process.stdout.write(`${LAB_SCHEMA_FILE}: ${write ? 'updated' : 'out of date'}\n`);
    stale++;
    files.set(LAB_SCHEMA_FILE, schema);
  }
  if (write) {
    for (const [rel, text] of files) writeFileSync(join(ROOT, rel), text);
    return 0;
  }
  if (stale === 0) process.stdout.write('generated docs and lab schema are up to date\n');
  return stale === 0 ? 0 : 1;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
