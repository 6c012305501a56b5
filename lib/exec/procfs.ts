/**
 * Processes as Linux's /proc shows them: every process's command line, and whether a pid is alive
 * (not a zombie). Shared by the local stand-in's binary upgrade (lib/local/pgdoorman-upgrade.ts) and
 * the pooler host's rolling restart (lib/pooler-host/roll.ts).
 */
import * as fs from 'node:fs';
import type { ProcEntry } from '../poolers/processes';

export function readProcs(): ProcEntry[] {
  const out: ProcEntry[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (cmdline !== '') out.push({ pid: Number(e), cmdline });
    } catch {
      /* gone */
    }
  }
  return out;
}

/** `pid` runs and is not a zombie (a signal 0 is allowed or refused for permission only). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}
