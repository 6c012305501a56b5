/** Free TCP ports on 127.0.0.1 below the kernel's ephemeral range (which starts at 32768). */
import * as net from 'node:net';

const PORT_RANGE = { min: 20000, max: 32000 } as const;

/** true when nothing listens on 127.0.0.1:port and we could bind it. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}

/**
 * Does 127.0.0.1:port accept a TCP connection? `refused` only when the kernel says nothing listens
 * (ECONNREFUSED: a dead server's socket is closed at once); a timeout or another error is `unknown`
 * (a loaded machine is not a dead server).
 */
export function probePort(port: number, timeoutMs = 2000): Promise<'accepts' | 'refused' | 'unknown'> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (answer: 'accepts' | 'refused' | 'unknown'): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done('unknown'));
    socket.once('connect', () => done('accepts'));
    socket.once('error', (e: NodeJS.ErrnoException) =>
      done(e.code === 'ECONNREFUSED' ? 'refused' : 'unknown'),
    );
  });
}

/** A random free port in PORT_RANGE, avoiding `exclude`; checked by binding it. */
export async function findFreePort(
  exclude: ReadonlySet<number> = new Set(),
  random: () => number = Math.random,
): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = PORT_RANGE.min + Math.floor(random() * (PORT_RANGE.max - PORT_RANGE.min));
    if (exclude.has(port)) continue;
    if (await isPortFree(port)) return port;
  }
  throw new Error(
    `no free port found in ${PORT_RANGE.min}-${PORT_RANGE.max} on 127.0.0.1 after 200 attempts`,
  );
}
