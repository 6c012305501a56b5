/**
 * A throwaway moto server (AWS API stand-in) for integration tests: S3, CloudWatch and the rest of
 * what moto implements, on 127.0.0.1 at a free port in 20000–32000 (below the kernel's ephemeral
 * range, chosen at random because other test runs start servers too).
 *
 *   const moto = await startMoto();
 *   try { ...clients with { endpoint: moto.endpoint, forcePathStyle: true, ...MOTO_CLIENT_CONFIG } }
 *   finally { await moto.stop(); }
 *
 * Child processes (the real CLI) get `motoEnv(moto)`: AWS_ENDPOINT_URL, dummy credentials, region.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { findFreePort } from '../../lib/local/ports-free';

export interface MotoServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** Forget every resource (POST /moto-api/reset). */
  reset(): Promise<void>;
  /** Stop the server and wait for it to exit. */
  stop(): Promise<void>;
}

export const MOTO_REGION = 'us-east-1';
export const MOTO_CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' } as const;
/** SDK client config for talking to moto in-process (add `forcePathStyle: true` for S3). */
export function motoClientConfig(moto: MotoServer): {
  region: string;
  endpoint: string;
  credentials: typeof MOTO_CREDENTIALS;
} {
  return { region: MOTO_REGION, endpoint: moto.endpoint, credentials: MOTO_CREDENTIALS };
}

/** Environment for a child process (the real CLI) that must reach moto and nothing else. */
export function motoEnv(moto: MotoServer, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const key of Object.keys(env)) {
    if (key.startsWith('AWS_')) delete env[key];
  }
  return {
    ...env,
    AWS_ENDPOINT_URL: moto.endpoint,
    AWS_ACCESS_KEY_ID: MOTO_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: MOTO_CREDENTIALS.secretAccessKey,
    AWS_REGION: MOTO_REGION,
    // no shared config/credentials files from the developer's machine
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

export function findMotoServer(): string {
  const found = spawnSync('sh', ['-c', 'command -v moto_server'], { encoding: 'utf8' });
  const bin = found.stdout.trim();
  if (found.status !== 0 || bin === '') {
    throw new Error('moto_server not found on PATH: pip install "moto[server]" (CI installs it)');
  }
  return bin;
}

export async function startMoto(
  options: { readonly startTimeoutMs?: number; readonly attempts?: number } = {},
): Promise<MotoServer> {
  const bin = findMotoServer();
  const attempts = options.attempts ?? 5;
  let lastError: unknown = null;
  for (let i = 0; i < attempts; i++) {
    const port = await findFreePort();
    const child = spawn(bin, ['-p', String(port), '-H', '127.0.0.1'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    try {
      await waitUntilServing(child, port, options.startTimeoutMs ?? 30_000, () => stderr);
      return makeServer(child, port);
    } catch (err) {
      lastError = err;
      await stopChild(child);
    }
  }
  throw new Error(
    `moto_server did not start after ${attempts} attempts: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
  );
}

function makeServer(child: ChildProcess, port: number): MotoServer {
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    port,
    endpoint,
    reset: async () => {
      const res = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
      if (!res.ok) throw new Error(`moto reset failed: HTTP ${res.status}`);
    },
    stop: () => stopChild(child),
  };
}

async function waitUntilServing(
  child: ChildProcess,
  port: number,
  timeoutMs: number,
  stderr: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `moto_server exited (${child.exitCode ?? child.signalCode}) on port ${port}: ${stderr().trim()}`,
      );
    }
    try {
      const res = await fetch(`http://127.0.0.1:${port}/moto-api/`, { signal: AbortSignal.timeout(1000) });
      if (res.status < 500) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`moto_server not serving on port ${port} after ${timeoutMs} ms: ${stderr().trim()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
