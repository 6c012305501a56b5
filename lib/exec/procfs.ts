/**
 * Processes as Linux's /proc shows them: every process's command line, and whether a pid is alive
 * (not a zombie), and what the kernel does with a closed SO_REUSEPORT listener's queue. Shared by the local stand-in's binary upgrade (lib/local/pgdoorman-upgrade.ts) and
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

/** Linux's switch for moving a closed SO_REUSEPORT listener's queued connections to a sibling. */
export const TCP_MIGRATE_REQ = '/proc/sys/net/ipv4/tcp_migrate_req';

/**
 * What the kernel does with connections still queued on the listener a rolling restart retires:
 * the retired process closes its listening socket (PgBouncer ≥ 1.23 on SIGTERM), and Linux resets
 * the connections in that socket's accept queue unless `net.ipv4.tcp_migrate_req` is 1 (Linux 5.14,
 * commit f9ac779f "net: Introduce net.ipv4.tcp_migrate_req": "we will be able to migrate child
 * sockets from a listener to another in the same reuseport group after close() or shutdown()").
 * A client connecting at that instant may so see a reset whatever the pooler does: said in the
 * step's events, so a reset in a rolling restart is read with its cause.
 */
export function reuseportCloseBehaviour(
  read: () => string = () => fs.readFileSync(TCP_MIGRATE_REQ, 'utf8'),
): string {
  let value: string;
  try {
    value = read().trim();
  } catch {
    return 'kernel: no net.ipv4.tcp_migrate_req (not Linux ≥ 5.14): connections queued on the retired listener are reset';
  }
  return value === '0'
    ? 'kernel: net.ipv4.tcp_migrate_req = 0: connections queued on the retired listener are reset (a client connecting at that instant sees ECONNRESET)'
    : `kernel: net.ipv4.tcp_migrate_req = ${value}: connections queued on the retired listener move to the new one`;
}
