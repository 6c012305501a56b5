/**
 * Queries through the `psql` binary (no npm client): unaligned output with a unit-separator
 * field delimiter, several statements per call separated by `\echo` markers.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  parsePsqlResults,
  parseUnaligned,
  PSQL_OUTPUT_ARGS,
  PSQL_RESULT_MARK,
  psqlStatementArgs,
  type PsqlRow,
} from '../core/psql-text';
import { childEnv, runCommand } from './process';

export interface PsqlTarget {
  readonly psql: string;
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly dbname: string;
  readonly env?: Readonly<Record<string, string>>;
}

export type Row = PsqlRow;

export class PsqlError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'PsqlError';
  }
}

/** Run statements; returns one row set per statement. Throws PsqlError on failure. */
export async function psqlQuery(
  target: PsqlTarget,
  statements: readonly string[],
  timeoutMs = 15000,
): Promise<Row[][]> {
  const args = [
    '-h',
    target.host,
    '-p',
    String(target.port),
    '-U',
    target.user,
    '-d',
    target.dbname,
    ...psqlStatementArgs(statements),
  ];
  const res = await runCommand(target.psql, args, { env: target.env, timeoutMs });
  if (res.exitCode !== 0) {
    const msg =
      res.stderr.trim().split('\n').slice(-2).join(' ') || `psql exited with ${res.exitCode ?? res.signal}`;
    throw new PsqlError(`psql ${target.host}:${target.port}/${target.dbname}: ${msg}`, res.stderr);
  }
  return parsePsqlResults(res.stdout);
}

/** Run one statement; returns its rows. Throws PsqlError on failure. */
export async function psqlQueryOne(target: PsqlTarget, statement: string, timeoutMs = 15000): Promise<Row[]> {
  const [rows] = await psqlQuery(target, [statement], timeoutMs);
  // String.split always yields at least one part, so one statement always has one row set.
  if (rows === undefined) throw new PsqlError(`psql returned no result for: ${statement}`, '');
  return rows;
}

/** Run statements whose output does not matter (DDL, admin commands). */
export async function psqlExec(
  target: PsqlTarget,
  statements: readonly string[],
  timeoutMs = 15000,
): Promise<void> {
  await psqlQuery(target, statements, timeoutMs);
}

/**
 * One long-lived psql connection fed through stdin: for polling once a second without starting a
 * process and a server backend each time (which, on a 2-core machine, measurably cost the
 * benchmark itself). Calls are serialized; a dead session is restarted on the next call.
 */
export class PsqlSession {
  private child: ChildProcessWithoutNullStreams | null = null;
  private stdout = '';
  private stderr = '';
  private queue: Promise<unknown> = Promise.resolve();
  private onData: (() => void) | null = null;
  private closed = false;

  constructor(private readonly target: PsqlTarget) {}

  query(statements: readonly string[], timeoutMs = 5000): Promise<Row[][]> {
    const run = this.queue.then(() => this.run(statements, timeoutMs));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    const child = this.child;
    this.child = null;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
  }

  private ensure(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    const t = this.target;
    const child = spawn(
      t.psql,
      [...PSQL_OUTPUT_ARGS, '-h', t.host, '-p', String(t.port), '-U', t.user, '-d', t.dbname],
      { env: childEnv(null, t.env), stdio: ['pipe', 'pipe', 'pipe'] },
    );
    child.stdout.on('data', (b: Buffer) => {
      if (this.child !== child) return; // a replaced session's late output
      this.stdout += b.toString('utf8');
      this.onData?.();
    });
    child.stderr.on('data', (b: Buffer) => {
      if (this.child !== child) return;
      this.stderr += b.toString('utf8');
      this.onData?.();
    });
    child.stdin.on('error', () => undefined);
    child.on('close', () => {
      if (this.child !== child) return;
      this.child = null;
      this.onData?.();
    });
    child.on('error', () => undefined);
    this.child = child;
    return child;
  }

  private run(statements: readonly string[], timeoutMs: number): Promise<Row[][]> {
    if (this.closed) return Promise.reject(new PsqlError('psql session closed', ''));
    const child = this.ensure();
    this.stdout = '';
    this.stderr = '';
    const where = `psql ${this.target.host}:${this.target.port}/${this.target.dbname}`;
    return new Promise<Row[][]>((resolve, reject) => {
      const finish = (err: Error | null, results: Row[][] = []): void => {
        clearTimeout(timer);
        this.onData = null;
        if (err) reject(err);
        else resolve(results);
      };
      const timer = setTimeout(() => {
        if (this.child === child) this.child = null;
        child.kill('SIGKILL');
        finish(new PsqlError(`${where}: no answer within ${timeoutMs} ms`, this.stderr));
      }, timeoutMs);
      this.onData = () => {
        const answers = splitSessionOutput(this.stdout);
        if (answers.length >= statements.length) {
          // stdout and stderr are separate pipes: an error's text may arrive after the marker that
          // follows it, so whether a statement failed is read from the marker itself (psql's
          // ERROR / SQLSTATE / LAST_ERROR_MESSAGE variables), never from stderr's timing.
          const failed = answers.slice(0, statements.length).find((a) => a.error !== null);
          if (failed?.error) finish(new PsqlError(`${where}: ${failed.error}`, this.stderr));
          else
            finish(
              null,
              answers.slice(0, statements.length).map((a) => a.rows),
            );
        } else if (this.child !== child) {
          finish(
            new PsqlError(
              `${where}: ${this.stderr.trim().split('\n').slice(-2).join(' ') || 'connection ended'}`,
              this.stderr,
            ),
          );
        }
      };
      child.stdin.write(
        statements.map((s) => `${s.replace(/;\s*$/, '')};\n${SESSION_MARK_COMMAND}\n`).join(''),
      );
    });
  }
}

/** Printed after every statement in a session: the marker, then whether it failed and why. */
const SESSION_MARK_COMMAND = `\\echo ${PSQL_RESULT_MARK} :ERROR :SQLSTATE :LAST_ERROR_MESSAGE`;

interface SessionAnswer {
  readonly rows: Row[];
  /** null when the statement succeeded; otherwise "message (SQLSTATE code)". */
  readonly error: string | null;
}

/** Split a session's stdout into one answer per completed marker line (an incomplete tail is ignored). */
export function splitSessionOutput(stdout: string): SessionAnswer[] {
  const answers: SessionAnswer[] = [];
  let body: string[] = [];
  const lines = stdout.split('\n');
  lines.pop(); // the text after the last newline is not a complete line yet
  for (const line of lines) {
    if (line === PSQL_RESULT_MARK || line.startsWith(`${PSQL_RESULT_MARK} `)) {
      const [, flag = 'false', sqlstate = '', ...message] = line.split(' ');
      const error =
        flag === 'true'
          ? `${message.join(' ').trim() || 'statement failed'}${sqlstate ? ` (SQLSTATE ${sqlstate})` : ''}`
          : null;
      answers.push({ rows: parseUnaligned(body.join('\n')), error });
      body = [];
    } else {
      body.push(line);
    }
  }
  return answers;
}
