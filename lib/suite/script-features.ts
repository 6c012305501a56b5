/**
 * Which session features a pgbench script's SQL uses (pure): session-scope `SET` and
 * `set_config(…, false)`, session advisory locks, SQL-level `PREPARE` / `EXECUTE` / `DEALLOCATE`,
 * `LISTEN` / `UNLISTEN`, temporary tables, `WITH HOLD` cursors and `DISCARD` — the state a
 * transaction pool may lose (the next transaction runs on another server connection) or leak (the
 * next client gets it). Each use is mapped to the session-state matrix's feature
 * (lib/suite/session-state.ts, `proxylab local --suite session`) where it has one, so `validate`
 * and `plan` can name what to measure, and a later change can join them with its outcomes.
 *
 * The transaction-scoped forms are found and classified so: `SET LOCAL` and `set_config(…, true)`
 * (set-local), `pg_advisory_xact_lock*` (advisory-xact-lock), `CREATE TEMP TABLE … ON COMMIT DROP`
 * (temp-table-on-commit-drop), `SET TRANSACTION` / `SET CONSTRAINTS`. A plain `SET` inside
 * `BEGIN … COMMIT` is still session scope: "If SET (or equivalently SET SESSION) is issued within a
 * transaction that is later aborted, the effects of the SET command disappear when the transaction
 * is rolled back. Once the surrounding transaction is committed, the effects will persist until the
 * end of the session" (https://www.postgresql.org/docs/15/sql-set.html).
 *
 * A small lexer, not a parser: words, quoted identifiers, string literals ('…', E'…' with backslash
 * escapes, $tag$…$tag$), `--` and nested `/* *\/` comments; what a comment or literal holds is not
 * SQL (a DO block's body is a literal: not scanned). A backslash outside them starts a pgbench
 * meta-command, which runs to the end of the line (backslash-newline continues it) and ends the SQL
 * statement before it, as pgbench reads it (lib/suite/pgbench-script.ts).
 */
import type { Scenario } from './scenario';
import type { SessionFeature } from './session-state-kind';

/** How long the state a use makes lives. */
export type ScriptFeatureScope = 'session' | 'transaction' | 'reset';

/** One session feature a script uses: what, where, how long it lives, and its matrix row. */
export interface ScriptFeatureUse {
  /** In the script's words: `SET search_path`, `session advisory lock`, `DISCARD ALL`. */
  readonly label: string;
  /** 1-based line of the statement's keyword (the function's name for a call). */
  readonly line: number;
  readonly scope: ScriptFeatureScope;
  /** The session-state matrix's feature (SESSION_FEATURE_INFO), or null when it has no row for it. */
  readonly sessionFeature: SessionFeature | null;
}

interface Token {
  readonly kind: 'word' | 'string' | 'punct';
  /** Words lowercased (a quoted identifier as written); a string literal's value. */
  readonly text: string;
  readonly line: number;
}

/** Where the (nested) block comment that starts at `from` ends. */
function commentEnd(sql: string, from: number): number {
  let depth = 0;
  let j = from;
  while (j < sql.length) {
    if (sql.startsWith('/*', j)) {
      depth += 1;
      j += 2;
    } else if (sql.startsWith('*/', j)) {
      depth -= 1;
      j += 2;
      if (depth === 0) return j;
    } else j += 1;
  }
  return j;
}

/** The value of the string literal whose text starts at `from` (after its quote), and where it ends. */
function stringLiteral(sql: string, from: number, escapes: boolean): { value: string; end: number } {
  let value = '';
  let j = from;
  while (j < sql.length) {
    const c = sql[j] as string;
    if (escapes && c === '\\') {
      value += sql[j + 1] ?? '';
      j += 2;
    } else if (c === "'" && sql[j + 1] === "'") {
      value += "'";
      j += 2;
    } else if (c === "'") return { value, end: j + 1 };
    else {
      value += c;
      j += 1;
    }
  }
  return { value, end: j };
}

/** The SQL statements of a script as tokens: split at `;` and at pgbench meta-commands. */
export function scriptStatements(sql: string): Token[][] {
  const statements: Token[][] = [];
  let current: Token[] = [];
  const end = (): void => {
    if (current.length > 0) statements.push(current);
    current = [];
  };
  let line = 1;
  let i = 0;
  const n = sql.length;
  // Advances over sql[from, to), counting newlines.
  const skip = (to: number): void => {
    for (; i < to && i < n; i++) if (sql[i] === '\n') line += 1;
  };
  while (i < n) {
    const c = sql[i] as string;
    const rest = sql.slice(i, i + 2);
    const dollar = c === '$' ? /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66)) : null;
    if (/\s/.test(c)) skip(i + 1);
    else if (rest === '--') skip(sql.indexOf('\n', i) < 0 ? n : sql.indexOf('\n', i));
    else if (rest === '/*') skip(commentEnd(sql, i));
    else if (c === '\\') {
      end();
      let j = i + 1;
      while (j < n && sql[j] !== '\n') j += sql[j] === '\\' && sql[j + 1] === '\n' ? 2 : 1;
      skip(j);
    } else if (c === ';') {
      end();
      skip(i + 1);
    } else if (c === "'" || ((c === 'e' || c === 'E') && sql[i + 1] === "'")) {
      const startLine = line;
      const { value, end: to } = stringLiteral(sql, c === "'" ? i + 1 : i + 2, c !== "'");
      skip(to);
      current.push({ kind: 'string', text: value, line: startLine });
    } else if (c === '"') {
      const close = sql.indexOf('"', i + 1);
      const startLine = line;
      const to = close < 0 ? n : close + 1;
      current.push({ kind: 'word', text: sql.slice(i + 1, to - 1), line: startLine });
      skip(to);
    } else if (dollar !== null) {
      const tag = dollar[0];
      const close = sql.indexOf(tag, i + tag.length);
      const startLine = line;
      const to = close < 0 ? n : close + tag.length;
      current.push({ kind: 'string', text: sql.slice(i + tag.length, to - tag.length), line: startLine });
      skip(to);
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      const m = /^[A-Za-z0-9_$\u0080-\uffff]+/.exec(sql.slice(i)) as RegExpExecArray;
      current.push({ kind: 'word', text: m[0].toLowerCase(), line });
      skip(i + m[0].length);
    } else {
      current.push({ kind: 'punct', text: c, line });
      skip(i + 1);
    }
  }
  end();
  return statements;
}

/** The matrix row a session-scope parameter change lands on. */
function setFeature(parameter: string): SessionFeature {
  if (parameter === 'search_path' || parameter === 'schema') return 'search-path';
  if (parameter === 'role') return 'set-role';
  if (parameter === 'intervalstyle') return 'set-tracked';
  return 'set-session';
}

const SET_LABEL: Readonly<Record<string, string>> = { schema: 'SET SCHEMA (search_path)', role: 'SET ROLE' };

/** A `SET …` statement (tokens after SET). */
function setUse(rest: readonly Token[], line: number): ScriptFeatureUse | null {
  const words = rest.map((t) => t.text);
  const first = words[0];
  if (first === 'transaction' || first === 'constraints')
    return { label: `SET ${first.toUpperCase()}`, line, scope: 'transaction', sessionFeature: null };
  if (first === 'local') {
    const name = words.slice(1, 3).join(' ') === 'time zone' ? 'timezone' : (words[1] ?? '');
    return { label: `SET LOCAL ${name}`, line, scope: 'transaction', sessionFeature: 'set-local' };
  }
  const body = first === 'session' ? words.slice(1) : words;
  const [a, b] = body;
  if (a === 'authorization')
    return { label: 'SET SESSION AUTHORIZATION', line, scope: 'session', sessionFeature: null };
  if (a === 'characteristics')
    return { label: 'SET SESSION CHARACTERISTICS', line, scope: 'session', sessionFeature: 'set-session' };
  if (a === undefined) return null;
  const name = a === 'time' && b === 'zone' ? 'timezone' : a === 'names' ? 'client_encoding' : dotted(body);
  return {
    label: SET_LABEL[name] ?? `SET ${name}`,
    line,
    scope: 'session',
    sessionFeature: setFeature(name),
  };
}

/** A parameter name, `myapp.tenant` included. */
function dotted(words: readonly string[]): string {
  return words[1] === '.' && words[2] !== undefined ? `${words[0]}.${words[2]}` : (words[0] ?? '');
}

/** The arguments of the call whose `(` is at `open`, each as its tokens. */
function callArguments(tokens: readonly Token[], open: number): Token[][] {
  const args: Token[][] = [[]];
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.kind === 'punct' && t.text === '(') depth += 1;
    if (t.kind === 'punct' && t.text === ')') depth -= 1;
    if (depth === 0) break;
    if (depth === 1 && t.kind === 'punct' && (t.text === ',' || t.text === '(')) {
      if (t.text === ',') args.push([]);
      continue;
    }
    args[args.length - 1]?.push(t);
  }
  return args;
}

const TRUE_WORDS = new Set(['true', 't', 'on', 'yes', 'y', '1']);
const FALSE_WORDS = new Set(['false', 'f', 'off', 'no', 'n', '0']);

/** `set_config(name, value, is_local)`: session unless is_local is a true constant. */
function setConfigUse(args: readonly Token[][], line: number): ScriptFeatureUse {
  const nameArg = args[0] ?? [];
  const name = nameArg.length === 1 && nameArg[0]?.kind === 'string' ? nameArg[0].text.toLowerCase() : '…';
  const local = (args[2] ?? []).map((t) => t.text.toLowerCase()).join('');
  if (TRUE_WORDS.has(local))
    return { label: `set_config(${name}, …, true)`, line, scope: 'transaction', sessionFeature: 'set-local' };
  const shown = FALSE_WORDS.has(local) ? 'false' : '…';
  return {
    label: `set_config(${name}, …, ${shown})`,
    line,
    scope: 'session',
    sessionFeature: name === '…' ? 'set-session' : setFeature(name),
  };
}

const ADVISORY_SESSION = new Set([
  'pg_advisory_lock',
  'pg_advisory_lock_shared',
  'pg_try_advisory_lock',
  'pg_try_advisory_lock_shared',
  'pg_advisory_unlock',
  'pg_advisory_unlock_shared',
  'pg_advisory_unlock_all',
]);
const ADVISORY_XACT = new Set([
  'pg_advisory_xact_lock',
  'pg_advisory_xact_lock_shared',
  'pg_try_advisory_xact_lock',
  'pg_try_advisory_xact_lock_shared',
]);

/** The uses a function call anywhere in a statement makes. */
function callUses(tokens: readonly Token[]): ScriptFeatureUse[] {
  const uses: ScriptFeatureUse[] = [];
  tokens.forEach((t, i) => {
    const next = tokens[i + 1];
    if (t.kind !== 'word' || next?.kind !== 'punct' || next.text !== '(') return;
    if (ADVISORY_SESSION.has(t.text))
      uses.push({
        label: 'session advisory lock',
        line: t.line,
        scope: 'session',
        sessionFeature: 'advisory-lock',
      });
    else if (ADVISORY_XACT.has(t.text))
      uses.push({
        label: 'transaction advisory lock',
        line: t.line,
        scope: 'transaction',
        sessionFeature: 'advisory-xact-lock',
      });
    else if (t.text === 'set_config') uses.push(setConfigUse(callArguments(tokens, i + 1), t.line));
  });
  return uses;
}

/** `CREATE [GLOBAL|LOCAL] TEMP[ORARY] {TABLE|SEQUENCE} …` (tokens after CREATE). */
function createTempUse(words: readonly string[], line: number): ScriptFeatureUse | null {
  const w = words[0] === 'global' || words[0] === 'local' ? words.slice(1) : words;
  if ((w[0] !== 'temp' && w[0] !== 'temporary') || w[1] === undefined) return null;
  if (w[1] === 'sequence')
    return { label: 'temporary sequence', line, scope: 'session', sessionFeature: 'temp-sequence-nextval' };
  if (w[1] !== 'table') return { label: `temporary ${w[1]}`, line, scope: 'session', sessionFeature: null };
  const text = ` ${words.join(' ')} `;
  return text.includes(' on commit drop ')
    ? {
        label: 'temporary table ON COMMIT DROP',
        line,
        scope: 'transaction',
        sessionFeature: 'temp-table-on-commit-drop',
      }
    : { label: 'temporary table', line, scope: 'session', sessionFeature: 'temp-table' };
}

/** The use a statement's leading keyword makes, if any. */
function statementUse(tokens: readonly Token[]): ScriptFeatureUse | null {
  const first = tokens[0];
  if (first?.kind !== 'word') return null;
  const line = first.line;
  const words = tokens.slice(1).map((t) => (t.kind === 'word' ? t.text : t.kind === 'punct' ? t.text : "''"));
  const sqlPrepare = (label: string): ScriptFeatureUse => ({
    label,
    line,
    scope: 'session',
    sessionFeature: 'sql-prepare',
  });
  switch (first.text) {
    case 'set':
      return setUse(tokens.slice(1), line);
    case 'prepare':
      // PREPARE TRANSACTION is two-phase commit, not a prepared statement
      return words[0] === 'transaction' ? null : sqlPrepare('PREPARE');
    case 'execute':
      return sqlPrepare('EXECUTE');
    case 'deallocate':
      return sqlPrepare('DEALLOCATE');
    case 'listen':
    case 'unlisten':
      return { label: first.text.toUpperCase(), line, scope: 'session', sessionFeature: 'listen-notify' };
    case 'create':
      return createTempUse(words, line);
    case 'declare': {
      const forAt = words.indexOf('for');
      const head = forAt < 0 ? words : words.slice(0, forAt);
      const hold = head.some((w, i) => w === 'with' && head[i + 1] === 'hold');
      return hold
        ? { label: 'WITH HOLD cursor', line, scope: 'session', sessionFeature: 'with-hold-cursor' }
        : null;
    }
    case 'discard': {
      const what = (words[0] ?? '').toUpperCase();
      return {
        label: `DISCARD ${what}`,
        line,
        scope: 'reset',
        sessionFeature: what === 'ALL' ? 'discard-all' : null,
      };
    }
    case 'select': {
      // SELECT … INTO TEMP[ORARY] [TABLE] name creates a temporary table
      const into = words.findIndex(
        (w, i) => w === 'into' && (words[i + 1] === 'temp' || words[i + 1] === 'temporary'),
      );
      return into < 0
        ? null
        : { label: 'temporary table', line, scope: 'session', sessionFeature: 'temp-table' };
    }
    default:
      return null;
  }
}

/** Every session feature `sql` (a pgbench script) uses, in the order of its lines. */
export function scriptSessionFeatures(sql: string): ScriptFeatureUse[] {
  const uses = scriptStatements(sql).flatMap((tokens) => {
    const own = statementUse(tokens);
    return [...(own === null ? [] : [own]), ...callUses(tokens)];
  });
  return uses.sort((a, b) => a.line - b.line);
}

/** A scenario as the summaries read it: its name and its own script files. */
export interface ScenarioScripts {
  readonly name: string;
  readonly scripts: ReadonlyArray<{ readonly name: string; readonly sql: string }>;
}

/** A scenario's own script files (its built-in scripts hold no session feature). */
export function scenarioScripts(s: Pick<Scenario, 'name' | 'script'>): ScenarioScripts {
  return { name: s.name, scripts: s.script.parts.flatMap((p) => ('file' in p ? [p.file] : [])) };
}

/** `SET search_path (lines 2, 7) → search-path`: uses with the same label and row, one item. */
function describeUses(
  uses: ReadonlyArray<ScriptFeatureUse & { readonly script: string }>,
  named: boolean,
): string {
  const groups = new Map<string, { use: ScriptFeatureUse; at: string[] }>();
  for (const u of uses) {
    const key = `${u.label}\u0000${u.sessionFeature ?? ''}`;
    const at = named ? `${u.script} line ${u.line}` : String(u.line);
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { use: u, at: [at] });
    else if (!g.at.includes(at)) g.at.push(at);
  }
  return [...groups.values()]
    .map(({ use, at }) => {
      const where = named ? at.join(', ') : `line${at.length === 1 ? '' : 's'} ${at.join(', ')}`;
      return `${use.label} (${where})${use.sessionFeature === null ? '' : ` → ${use.sessionFeature}`}`;
    })
    .join('; ');
}

/** The hint under the scenario lines. */
export const SESSION_FEATURES_HINT =
  'a transaction pool may lose or leak session state between transactions; `proxylab local --suite session` measures each feature per target';

/**
 * One line per scenario whose scripts use a session (or reset) feature, then the hint; nothing when
 * none does. `→ id` names the session-state matrix's feature. A transaction-scoped use is named at
 * the end of its scenario's line, as such.
 */
export function sessionFeatureLines(scenarios: readonly ScenarioScripts[]): string[] {
  const lines: string[] = [];
  for (const s of scenarios) {
    const named = s.scripts.length > 1;
    const uses = s.scripts.flatMap((f) =>
      scriptSessionFeatures(f.sql).map((u) => ({ ...u, script: f.name })),
    );
    const session = uses.filter((u) => u.scope !== 'transaction');
    if (session.length === 0) continue;
    const xact = uses.filter((u) => u.scope === 'transaction');
    const tail =
      xact.length === 0
        ? ''
        : `; transaction-scoped (kept within its transaction): ${describeUses(xact, named)}`;
    lines.push(
      `scenario ${s.name}: session features (→ session-state feature): ${describeUses(session, named)}${tail}`,
    );
  }
  return lines.length === 0 ? [] : [...lines, `hint: ${SESSION_FEATURES_HINT}`];
}
