/**
 * POSIX shell single-quoting, for commands we print or send for a shell to run: the one quoting
 * of the project (SSM commands, doctor probes, resume hints, preflight's install commands).
 * A word of only characters no POSIX shell treats specially (letters, digits and `_ @ % + = : , . / -`)
 * stays as it is; anything else goes in single quotes, a `'` inside as `'\\''`.
 */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
