/**
 * Where `npm test`'s CPU goes, per test file and project, from what bench/jest-cpu-env.js wrote
 * (bench/README.md "npm test time"):
 *
 *   JEST_CPU_LOG=/tmp/cpu.jsonl npx jest --env=./bench/jest-cpu-env.js [FILES]
 *   npx tsx bench/jest-cpu-report.ts /tmp/cpu.jsonl [TOP]
 *
 * Per file: CPU seconds (the jest worker's own + the children it reaped: the CLI, pgbench,
 * PostgreSQL, PgBouncer, moto, Chromium), wall seconds and the 1-minute load average at its end.
 * The two-worker estimate is the CPU total over two cores; a file's wall under load says little.
 */
import * as fs from 'node:fs';

interface Line {
  readonly file: string;
  readonly project: string;
  readonly wall: number;
  readonly user: number;
  readonly sys: number;
  readonly cuser: number;
  readonly csys: number;
  readonly load1: number;
}

function main(argv: readonly string[]): void {
  const [file, topText] = argv;
  if (file === undefined) {
    process.stderr.write('usage: npx tsx bench/jest-cpu-report.ts CPU_LOG.jsonl [TOP]\n');
    process.exitCode = 2;
    return;
  }
  const top = topText === undefined ? 25 : Number(topText);
  const lines = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line);
  const rows = lines
    .map((l) => ({
      ...l,
      self: l.user + l.sys,
      children: l.cuser + l.csys,
      cpu: l.user + l.sys + l.cuser + l.csys,
    }))
    .sort((a, b) => b.cpu - a.cpu);
  const f = (n: number, w = 7): string => n.toFixed(1).padStart(w);
  process.stdout.write(
    `${'cpu s'.padStart(7)} ${'own'.padStart(6)} ${'child'.padStart(6)} ${'wall s'.padStart(7)} load  file\n`,
  );
  for (const r of rows.slice(0, top))
    process.stdout.write(
      `${f(r.cpu)} ${f(r.self, 6)} ${f(r.children, 6)} ${f(r.wall)} ${f(r.load1, 4)}  ${r.file}\n`,
    );
  const projects = new Map<string, { files: number; cpu: number; wall: number }>();
  for (const r of rows) {
    const p = projects.get(r.project) ?? { files: 0, cpu: 0, wall: 0 };
    projects.set(r.project, { files: p.files + 1, cpu: p.cpu + r.cpu, wall: p.wall + r.wall });
  }
  const total = rows.reduce((n, r) => n + r.cpu, 0);
  for (const [name, p] of projects)
    process.stdout.write(
      `${name}: ${p.files} files, ${p.cpu.toFixed(0)} CPU-s, ${p.wall.toFixed(0)} file-seconds\n`,
    );
  process.stdout.write(
    `all: ${rows.length} files, ${total.toFixed(0)} CPU-s = ${(total / 2).toFixed(0)} s on two fully busy cores\n`,
  );
}

main(process.argv.slice(2));
