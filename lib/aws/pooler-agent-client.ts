/**
 * The contract between the pooler agent on a pooler host (lib/pooler-host/agent.ts) and its readers,
 * the runner and `proxylab doctor`: the stats line's schema and the client that reads one line, and
 * the runner's client of the control channel (a rolling restart of one process).
 */
import * as net from 'node:net';
import { z } from 'zod';
import { InfrastructureError } from '../core/errors';
import type { PoolerCpuSnapshot } from '../engine/pooler-metrics';
import {
  answerSchema,
  controlToken,
  helloSchema,
  type ControlResult,
  type RollEvent,
} from '../poolers/control';

/** The stats line's shape (the runner and `proxylab doctor` check it). */
export const snapshotSchema = z.object({
  at: z.string().refine((s) => !Number.isNaN(Date.parse(s)), { message: 'not a time' }),
  clockTicksPerSecond: z.number().positive(),
  coresPerProcess: z.number().int().positive().optional(),
  processes: z.array(
    z.object({
      index: z.number().int().min(0),
      pid: z.number().int().positive(),
      cpuTicks: z.number().int().min(0),
      threads: z
        .array(
          z.object({
            tid: z.number().int().positive(),
            name: z.string().max(64),
            cpuTicks: z.number().int().min(0),
          }),
        )
        .max(4096)
        .optional(),
    }),
  ),
});

/** The runner's side: one line from the agent's stats port, checked. */
export function fetchPoolerCpu(host: string, port: number, timeoutMs = 5000): Promise<PoolerCpuSnapshot> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port });
    let text = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new InfrastructureError(`pooler stats ${host}:${port}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      text += d;
      if (text.length > 1_000_000) sock.destroy();
    });
    sock.on('error', (err) => {
      clearTimeout(timer);
      reject(new InfrastructureError(`pooler stats ${host}:${port}: ${err.message}`));
    });
    sock.on('close', () => {
      clearTimeout(timer);
      const line = text.split('\n')[0] ?? '';
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        reject(new InfrastructureError(`pooler stats ${host}:${port}: not JSON`));
        return;
      }
      const res = snapshotSchema.safeParse(parsed);
      if (res.success) resolve(res.data);
      else
        reject(
          new InfrastructureError(
            `pooler stats ${host}:${port}: ${res.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
          ),
        );
    });
  });
}

/**
 * The runner's side of the agent's control channel (lib/poolers/control.ts): read the hello, send
 * one roll request with the token the control key gives for its nonce, hand each event to
 * `onEvent` as it arrives, resolve with the checked result (`ok`, `failed` or `refused`). A line
 * that is not one of the protocol's, or no result within `timeoutMs`, rejects.
 */
export function rollPoolerProcess(
  host: string,
  port: number,
  key: string,
  index: number,
  onEvent: (e: RollEvent) => void,
  timeoutMs = 90_000,
): Promise<ControlResult> {
  const where = `pooler control ${host}:${port}`;
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port });
    let buf = '';
    let hello = false;
    let done = false;
    const fail = (msg: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      reject(new InfrastructureError(`${where}: ${msg}`));
    };
    const timer = setTimeout(() => fail(`no result within ${timeoutMs} ms`), timeoutMs);
    sock.setEncoding('utf8');
    sock.on('error', (err) => fail(err.message));
    sock.on('close', () => fail('closed before a result'));
    sock.on('data', (d: string) => {
      buf += d;
      if (buf.length > 1_000_000) return fail('answer too long');
      for (let nl = buf.indexOf('\n'); nl >= 0 && !done; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          return fail('a line that is not JSON');
        }
        if (!hello) {
          const h = helloSchema.safeParse(parsed);
          if (!h.success) return fail('no control channel hello (not a proxylab pooler agent?)');
          hello = true;
          sock.write(
            `${JSON.stringify({ op: 'roll', index, token: controlToken(key, h.data.nonce, 'roll', index) })}\n`,
          );
          continue;
        }
        const a = answerSchema.safeParse(parsed);
        if (!a.success)
          return fail(
            `unexpected line: ${a.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
          );
        if ('event' in a.data) {
          onEvent(a.data);
          continue;
        }
        done = true;
        clearTimeout(timer);
        sock.destroy();
        resolve(a.data);
      }
    });
  });
}
