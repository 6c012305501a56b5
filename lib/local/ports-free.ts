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

/** true when something accepts a TCP connection on 127.0.0.1:port within `timeoutMs`. */
export function acceptsConnections(port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
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
