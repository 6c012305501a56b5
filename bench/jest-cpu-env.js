/**
 * A jest test environment for measuring where `npm test`'s CPU goes (bench/README.md "npm test
 * time"): jest's node environment, plus one JSON line per test file appended to $JEST_CPU_LOG with
 * the file's wall time and the CPU seconds its worker spent on it — its own (user, sys) and its
 * reaped children's (cuser, csys: the CLI, pgbench, PostgreSQL, PgBouncer, moto, Chromium the file
 * started and waited for). A worker runs one file at a time, so the deltas of /proc/self/stat
 * between setup and teardown belong to that file. Linux only; changes nothing a test sees.
 *
 *   JEST_CPU_LOG=/tmp/cpu.jsonl npx jest --env=./bench/jest-cpu-env.js [FILES]
 *   npx tsx bench/jest-cpu-report.ts /tmp/cpu.jsonl
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

const TICK = 100; // USER_HZ: /proc's clock ticks per second on Linux

function times() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  // fields after the ")" that ends the command name: state is field 3, utime 14 … cstime 17
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const n = (i) => Number(f[i - 3]) / TICK;
  return { user: n(14), sys: n(15), cuser: n(16), csys: n(17), at: Date.now() };
}

class CpuEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.file = path.relative(config.globalConfig.rootDir, context.testPath);
    this.project = config.projectConfig.displayName?.name ?? '';
  }
  async setup() {
    this.start = times();
    await super.setup();
  }
  async teardown() {
    await super.teardown();
    const log = process.env.JEST_CPU_LOG;
    if (!log || !this.start) return;
    const end = times();
    const d = (k) => Math.round((end[k] - this.start[k]) * 100) / 100;
    const line = {
      file: this.file,
      project: this.project,
      wall: (end.at - this.start.at) / 1000,
      // when the file started and ended (ms since the epoch): the run's timeline, idle cores included
      startedAt: this.start.at,
      endedAt: end.at,
      user: d('user'),
      sys: d('sys'),
      cuser: d('cuser'),
      csys: d('csys'),
      pid: process.pid,
      load1: Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
    };
    fs.appendFileSync(log, JSON.stringify(line) + '\n');
  }
}

module.exports = CpuEnvironment;
