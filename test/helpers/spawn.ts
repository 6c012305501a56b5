/** A child process run to its end, its output collected: spawnSync's result without blocking the worker. */
import { spawn, type SpawnOptions } from 'node:child_process';

export interface Ended {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `command ARGS` to its end with stdin closed, stdout and stderr collected as UTF-8. Concurrent tests
 * (test.concurrent) await it side by side, where spawnSync would hold the worker and every test
 * beside it (CONTRIBUTING.md "Test time").
 */
export function spawnToEnd(
  command: string,
  args: readonly string[],
  options: Omit<SpawnOptions, 'stdio'> = {},
): Promise<Ended> {
  return new Promise<Ended>((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
    child.stderr?.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
