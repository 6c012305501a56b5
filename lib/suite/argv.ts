/**
 * pgbench command lines (pure). Secrets never enter argv: the password travels in the environment
 * (`buildPgbenchEnv`), TLS mode too (PGSSLMODE), and GSSAPI encryption is switched off there
 * (PGGSSENCMODE=disable, see buildPgbenchEnv).
 *
 * Flags used and the pgbench version they need:
 *   -h -p -U -c -j -T -t -R -C -M -n -f -b -i -s       all supported versions (≥ 9.6)
 *   --progress, --log, --log-prefix, --sampling-rate   ≥ 9.6
 *   -f file@weight / -b name@weight                    ≥ 9.6
 *   --unlogged-tables, --foreign-keys (init)           ≥ 9.6 / ≥ 11
 *   --failures-detailed, --max-tries                   ≥ 15 — only when asked for and pgbenchMajor ≥ 15
 * The per-transaction log (`--log`) is kept instead of `--aggregate-interval`, because latency
 * percentiles need every (or a sampled) transaction; per-second series are derived from it.
 */
import * as path from 'path';
import { UsageError } from '../core/errors';
import type { InitFlag, ScriptPart } from './catalog';
import type { PlannedStep } from './expand';
import type { ConnectionInfo } from './types';

export interface PgbenchArgvOptions {
  /** Prefix of the per-transaction log files (pgbench appends `.PID[.thread]`); include the directory. */
  readonly logPrefix: string;
  /** Directory the engine wrote `scriptFilesFor(step)` into. */
  readonly scriptDir: string;
  /** Major version of the pgbench binary; gates 15+ flags. @default null (unknown: no 15+ flags) */
  readonly pgbenchMajor?: number | null;
  /** Add `--failures-detailed` (pgbench ≥ 15 only). @default false */
  readonly failuresDetailed?: boolean;
  /** Add `--max-tries N` (pgbench ≥ 15 only; retries serialization/deadlock failures). @default - not passed */
  readonly maxTries?: number;
  /** `--progress` interval in seconds. @default 1 */
  readonly progressSec?: number;
}

function connectionArgs(conn: ConnectionInfo): string[] {
  return ['-h', conn.host, '-p', String(conn.port), '-U', conn.user];
}

/**
 * Environment for pgbench: the connection's env (PGPASSWORD…), PGSSLMODE when set, and
 * PGGSSENCMODE=disable. No lab uses Kerberos, and with libpq's default `gssencmode=prefer` every
 * connection first asks the Kerberos library for a credential cache (fe-connect.c:
 * `try_gss = pg_GSS_have_cred_cache(...)` unless gssencmode is `disable`; PostgreSQL docs, libpq
 * "gssencmode"). That is load-generator work in every `-C` connection, and with `-j 2` it races
 * the process's exit: when a refused connection ends pgbench while the other thread is inside
 * krb5, pgbench aborts (`krb5int_getspecific: Assertion ... failed`, SIGABRT) — 3 of 150 runs of
 * `-c 60 -j 2` against max_connections 40 here, none of 200 with `disable`. A connection's own
 * PGGSSENCMODE wins.
 */
export function buildPgbenchEnv(conn: ConnectionInfo): Record<string, string> {
  return {
    PGGSSENCMODE: 'disable',
    ...(conn.env ?? {}),
    ...(conn.sslmode ? { PGSSLMODE: conn.sslmode } : {}),
  };
}

/** File name of an inline SQL script inside scriptDir. */
function fileName(part: Extract<ScriptPart, { file: unknown }>): string {
  return path.basename(part.file.name);
}

/** SQL files the engine must write into scriptDir before running the step. */
export function scriptFilesFor(step: PlannedStep): Array<{ name: string; content: string }> {
  const files: Array<{ name: string; content: string }> = [];
  for (const part of step.script.parts) {
    if (!('file' in part)) continue;
    const name = fileName(part);
    if (!files.some((f) => f.name === name))
      files.push({ name, content: part.file.sql.endsWith('\n') ? part.file.sql : `${part.file.sql}\n` });
  }
  return files;
}

function scriptArgs(step: PlannedStep, scriptDir: string): string[] {
  const mixed = step.script.parts.length > 1;
  return step.script.parts.flatMap((part) => {
    const weight = mixed || part.weight !== undefined ? `@${part.weight ?? 1}` : '';
    if ('builtin' in part) return ['-b', `${part.builtin}${weight}`];
    return ['-f', `${path.join(scriptDir, fileName(part))}${weight}`];
  });
}

/**
 * Whether pgbench should skip its pre-run VACUUM (`-n`): always for pooled targets (the write-ups'
 * pooled runs measure the pooler, and VACUUM through a transaction pool is pointless), and for
 * scripts that touch no pgbench table (SQL files only).
 */
export function skipsVacuum(step: PlannedStep): boolean {
  return step.descriptor.capabilities.pooled || step.script.parts.every((p) => 'file' in p);
}

/**
 * Whether pgbench needs `-s` on a run: its `:scale` variable is the scale it reads from
 * pgbench_branches when a built-in script runs, but only what `-s` says (default 1) when every
 * script is a file (pgbench docs, `-s`: "when testing only custom benchmarks (-f option), the scale
 * factor will be reported as 1 unless this option is used"). A lab's own script at scale 10 that
 * picks `random(1, 100000 * :scale)` must see 10; at scale 1 the flag would say pgbench's default.
 */
function scaleForScripts(step: PlannedStep): boolean {
  return step.params.scale > 1 && step.script.parts.every((p) => 'file' in p);
}

export function buildPgbenchArgv(
  step: PlannedStep,
  conn: ConnectionInfo,
  opts: PgbenchArgvOptions,
): string[] {
  const p = step.params;
  const major = opts.pgbenchMajor ?? null;
  const needs15 = (flag: string): void => {
    if (major === null || major < 15)
      throw new UsageError(`${flag} needs pgbench 15 or later (pgbench major ${major ?? 'unknown'})`);
  };
  const argv: string[] = [...connectionArgs(conn)];
  if (skipsVacuum(step)) argv.push('-n');
  argv.push('--progress', String(opts.progressSec ?? 1));
  argv.push('-M', p.protocol);
  if (p.connect === 'per-transaction') argv.push('-C');
  argv.push('-c', String(p.clients), '-j', String(Math.min(p.jobs, p.clients)));
  if (p.durationSec !== null) argv.push('-T', String(p.durationSec));
  else if (p.transactionsPerClient !== null) argv.push('-t', String(p.transactionsPerClient));
  if (p.rate !== null) argv.push('-R', String(p.rate));
  if (scaleForScripts(step)) argv.push('-s', String(p.scale));
  argv.push('--log', '--log-prefix', opts.logPrefix);
  if (step.logSamplingRate !== null) argv.push('--sampling-rate', String(step.logSamplingRate));
  if (opts.failuresDetailed) {
    needs15('--failures-detailed');
    argv.push('--failures-detailed');
  }
  if (opts.maxTries !== undefined) {
    needs15('--max-tries');
    argv.push('--max-tries', String(opts.maxTries));
  }
  argv.push(...scriptArgs(step, opts.scriptDir));
  argv.push(conn.dbname);
  return argv;
}

/** `pgbench -i -s SCALE [flags] … dbname`; run it against the direct target. */
export function buildPgbenchInitArgv(
  scale: number,
  flags: readonly InitFlag[],
  conn: ConnectionInfo,
): string[] {
  if (!(Number.isInteger(scale) && scale >= 1))
    throw new UsageError(`pgbench scale must be an integer ≥ 1, got ${scale}`);
  return ['-i', '-s', String(scale), ...flags, '--quiet', ...connectionArgs(conn), conn.dbname];
}

/** argv with anything that looks like a secret masked (for StepRecord.command). */
export function redactArgv(argv: readonly string[]): string[] {
  return argv.map((a) =>
    a.replace(/(password\s*=\s*)\S+/gi, '$1***').replace(/(postgres(?:ql)?:\/\/[^:/@]+:)[^@]+@/gi, '$1***@'),
  );
}
