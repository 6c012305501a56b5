/** POSIX shell single-quoting, for commands we print or send for a shell to run. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=@,+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
