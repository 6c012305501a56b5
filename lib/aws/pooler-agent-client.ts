/**
 * The contract between the pooler agent on a pooler host (lib/pooler-host/agent.ts) and its readers,
 * the runner and `proxylab doctor`: the stats line's schema and the client that reads one line.
 */
import * as net from 'node:net';
import { z } from 'zod';
import { InfrastructureError } from '../core/errors';
import type { PoolerCpuSnapshot } from '../engine/pooler-metrics';

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
