/**
 * What a pgbench script may not hold (pure): the meta-commands that run a program on the machine
 * running pgbench. A lab file is shared across teams and accounts, and its scripts run on every
 * transaction of every step — locally, and on the cloud runners — so `\shell` and `\setshell` are
 * refused wherever a script enters a run: lab validation (lib/config/scenarios.ts), the run request
 * the runners read (lib/aws/run-request.ts) and every plan a run executes, stored or fresh
 * (lib/engine/plan-or-resume.ts).
 *
 * pgbench's documentation says only that "script file meta commands begin with a backslash (\)
 * and extend to the end of the line" and "can spread over several lines with backslash-return
 * continuations"; it is silent on case and on a meta-command after SQL on one line. So this follows
 * pgbench's sources (src/bin/pgbench/pgbench.c, exprscan.l, PostgreSQL 12–18), each form below
 * checked against pgbench 15.18 (a `\shell` without a command is its syntax error "missing command
 * in command "shell"", so how it reads a line shows without a server):
 * - The SQL lexer stops at *any* backslash outside quotes and comments, not only at the start of a
 *   line: `SELECT 1; \shell cmd` and `SELECT 1 \shell cmd` run `cmd` too (ParseScript: every
 *   PSCAN_BACKSLASH goes to process_backslash_command).
 * - The command word is read by exprscan.l's INITIAL state, which skips spaces, tabs, `\r`, `\f`,
 *   `\v` and backslash-newline continuations before it: `\ shell`, `\<TAB>shell` and a `\\` at
 *   the end of a line followed by `shell` on the next are `\shell` as well. The word ends at
 *   whitespace, a newline or a continuation (`\shell;` is the unknown command `shell;`).
 * - getMetaCommand compares the word with pg_strcasecmp: `\SHELL` and `\SetShell` are the same
 *   commands (ASCII case only).
 * This check does not lex SQL: a `\shell` inside a string literal or a comment, which pgbench would
 * not run, is refused too. That errs on the safe side; a script never needs the text there.
 */

/** One shell meta-command in a script: its 1-based line (where its backslash is) and its name, case as written. */
export interface ShellMetaCommand {
  readonly line: number;
  readonly command: string;
}

// A backslash; then what exprscan.l skips before the word (spaces, tabs, CR, FF, VT, backslash-
// newline continuations); then the word itself, ending where exprscan.l ends a word.
const SHELL_COMMAND = /\\(?:[ \t\r\f\v]|\\\n)*(setshell|shell)(?=[ \t\r\f\v\n]|\\\n|$)/giy;

/** Every `\shell` / `\setshell` pgbench would see in `sql`, in any case and spacing, with its line. */
export function shellMetaCommands(sql: string): ShellMetaCommand[] {
  const found: ShellMetaCommand[] = [];
  let line = 1;
  for (let i = 0; i < sql.length; i++) {
    const c = sql.charCodeAt(i);
    if (c === 10) line += 1;
    if (c !== 92) continue; // a backslash
    SHELL_COMMAND.lastIndex = i;
    const m = SHELL_COMMAND.exec(sql);
    if (m) found.push({ line, command: `\\${m[1] as string}` });
  }
  return found;
}

/**
 * Why a script may not run, or null: `must not run shell commands: orders.sql line 3 (\shell), …`
 * and what a script may hold instead. `name` is the script's file as the caller knows it.
 */
export function shellScriptProblem(name: string, sql: string): string | null {
  const found = shellMetaCommands(sql);
  if (found.length === 0) return null;
  const lines = found.map((f) => `line ${f.line} (${f.command})`).join(', ');
  return (
    `must not run shell commands: ${name} ${lines}. pgbench's \\shell and \\setshell (in any case ` +
    'and spacing) run a program on the machine running pgbench, on every transaction; a lab script may ' +
    'hold SQL and the other meta-commands (\\set, \\sleep, \\if/\\elif/\\else/\\endif, \\gset, \\aset, ' +
    'the pipeline commands)'
  );
}

/** The first of `scripts` that holds a shell meta-command, as `a script must not run shell commands: NAME line …`; else null. */
export function firstShellScriptProblem(
  scripts: Iterable<{ readonly name: string; readonly sql: string }>,
): string | null {
  for (const s of scripts) {
    const problem = shellScriptProblem(s.name, s.sql);
    if (problem !== null) return `a script ${problem}`;
  }
  return null;
}
