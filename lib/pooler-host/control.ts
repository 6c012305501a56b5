/**
 * The agent's control channel (protocol: lib/poolers/control.ts): on each connection a hello with a
 * fresh nonce, then ONE request line, checked before anything is done — at most CONTROL_MAX_LINE
 * bytes, JSON, `{"op":"roll","index":i,"token":…}` and nothing else, an index of this deployment,
 * the token the control key gives for this nonce — then the roll's events and its result (./roll.ts),
 * and the connection closes. One roll at a time on the host (a second request meanwhile is refused,
 * not queued); a client that sends no line within `lineTimeoutMs` is refused; a roll that takes
 * longer than `rollTimeoutMs` is reported failed. A refusal is one line
 * `{"result":"refused","error":…}` saying what was wrong (never the key, never the token).
 */
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import {
  CONTROL_MAX_LINE,
  CONTROL_PROTOCOL,
  requestSchema,
  tokenMatches,
  type ControlResult,
  type RollEvent,
} from '../poolers/control';
import type { PoolerRestart } from '../poolers/driver';
import { rollProcess, type RollHost } from './roll';

export interface ControlChannelOptions {
  /** The control key (hex, from the bootstrap's key file); null: none on this host, every roll refused. */
  readonly key: string | null;
  readonly processes: number;
  readonly restart: PoolerRestart;
  readonly immediateStop: readonly NodeJS.Signals[];
  readonly host: RollHost;
  readonly now?: () => Date;
  readonly sleep?: (ms: number) => Promise<void>;
  /** @default 10 000 */
  readonly lineTimeoutMs?: number;
  /** @default 60 000 */
  readonly rollTimeoutMs?: number;
  readonly startTimeoutMs?: number;
  readonly drainWaitMs?: number;
  readonly log?: (line: string) => void;
}

/** The connection handler of the control port (the agent listens with it). */
export function controlChannel(o: ControlChannelOptions): (sock: net.Socket) => void {
  const now = o.now ?? (() => new Date());
  const sleep = o.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms)));
  const log = o.log ?? (() => undefined);
  let busy = false;
  return (sock) => {
    const nonce = randomBytes(16).toString('hex');
    const send = (obj: object): void => {
      if (!sock.destroyed) sock.write(`${JSON.stringify(obj)}\n`);
    };
    const finish = (r: ControlResult): void => {
      if (r.result !== 'ok') log(`control: ${r.result}: ${r.error}`);
      if (!sock.destroyed) sock.end(`${JSON.stringify(r)}\n`);
    };
    const refuse = (error: string): void => finish({ result: 'refused', error, at: now().toISOString() });
    let buf = '';
    let handled = false;
    const timer = setTimeout(
      () => refuse(`no request line within ${o.lineTimeoutMs ?? 10_000} ms`),
      o.lineTimeoutMs ?? 10_000,
    );
    sock.setEncoding('utf8');
    sock.on('error', () => sock.destroy());
    sock.on('close', () => clearTimeout(timer));
    send({ hello: CONTROL_PROTOCOL, version: 1, nonce });
    sock.on('data', (d: string) => {
      if (handled) return;
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0 && Buffer.byteLength(buf) <= CONTROL_MAX_LINE) return;
      handled = true;
      clearTimeout(timer);
      sock.pause();
      const line = nl < 0 ? buf : buf.slice(0, nl);
      if (Buffer.byteLength(line) > CONTROL_MAX_LINE)
        return refuse(`request line longer than ${CONTROL_MAX_LINE} bytes`);
      void handle(line.replace(/\r$/, ''));
    });

    async function handle(line: string): Promise<void> {
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        return refuse('request is not JSON (expected {"op":"roll","index":i,"token":…})');
      }
      const req = requestSchema.safeParse(raw);
      if (!req.success)
        return refuse(
          `bad request: ${req.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
        );
      const { index, token } = req.data;
      if (index >= o.processes)
        return refuse(`index ${index} is not a process of this pooler (0–${o.processes - 1})`);
      if (o.key === null)
        return refuse('this host has no control key (deployed before the control channel): redeploy the lab');
      if (!tokenMatches(o.key, nonce, 'roll', index, token))
        return refuse('token does not match (not made with this pooler’s admin secret for this connection)');
      if (busy) return refuse('another roll is running on this host; one at a time');
      busy = true;
      log(`control: roll of process ${index + 1} requested`);
      const rolling = rollProcess(index, o.restart, o.immediateStop, o.host, {
        now,
        sleep,
        emit: (e: RollEvent) => send(e),
        ...(o.startTimeoutMs !== undefined ? { startTimeoutMs: o.startTimeoutMs } : {}),
        ...(o.drainWaitMs !== undefined ? { drainWaitMs: o.drainWaitMs } : {}),
      });
      // the host is busy until the roll itself ends, even when its answer timed out
      void rolling.then(
        () => (busy = false),
        () => (busy = false),
      );
      try {
        const outcome = await withTimeout(rolling, o.rollTimeoutMs ?? 60_000);
        finish({ result: 'ok', index, ...outcome, at: now().toISOString() });
      } catch (err) {
        finish({
          result: 'failed',
          error: err instanceof Error ? err.message : String(err),
          at: now().toISOString(),
        });
      }
    }
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the roll did not finish within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
