/**
 * The run names its database (issue 13 item 3): the run environment's `database` is schema-checked
 * where it is read, the HTML report and the Markdown summary say "RDS for PostgreSQL db.t4g.micro" /
 * "Aurora PostgreSQL db.r6g.large" / "local PostgreSQL", and a run recorded before it existed reads
 * as unknown — never as a guessed Aurora.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRun } from '../../lib/report/load';
import { renderHtml } from '../../lib/report/render-html';
import { renderMarkdown } from '../../lib/report/render-md';
import { buildModel, metricPanels } from '../../lib/report/shape';
import { describeRunDatabase } from '../../lib/suite/database';
import { manifestSchema } from '../../lib/results/schemas';
import type { RunDatabase } from '../../lib/suite/types';
import { cloudRun, writeRunDir } from '../fixtures/runs/synthetic';

const NOW = new Date('2026-01-06T00:00:00.000Z');
let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'report-database-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function render(database: RunDatabase | null | undefined, name: string): { page: string; md: string } {
  const run = cloudRun(`db-${name}`);
  const { database: _omit, ...env } = run.manifest.environment;
  const manifest = {
    ...run.manifest,
    environment: database === undefined ? env : { ...env, database },
  };
  const dir = writeRunDir(join(tmp, name), { ...run, manifest });
  const model = buildModel(loadRun(dir), () => null);
  return {
    page: renderHtml(model, { lookup: () => null, generatedAt: NOW }),
    md: renderMarkdown(model, () => null),
  };
}

describe('describeRunDatabase', () => {
  test.each<[RunDatabase | null | undefined, string | null]>([
    [{ engine: 'postgres', instanceClass: 'db.t4g.micro' }, 'RDS for PostgreSQL db.t4g.micro'],
    [{ engine: 'aurora-postgresql', instanceClass: 'db.r6g.large' }, 'Aurora PostgreSQL db.r6g.large'],
    [{ engine: 'aurora-postgresql', instanceClass: 'serverless' }, 'Aurora PostgreSQL Serverless v2'],
    [{ engine: 'postgres', instanceClass: null }, 'RDS for PostgreSQL'],
    [{ engine: 'local', instanceClass: null }, 'local PostgreSQL'],
    [null, null],
    [undefined, null],
  ])('%j → %s', (db, expected) => {
    expect(describeRunDatabase(db)).toBe(expected);
  });
});

describe('the report names the database', () => {
  test('RDS for PostgreSQL db.t4g.micro in report.html and summary.md, and no "Aurora" claim', () => {
    const { page, md } = render({ engine: 'postgres', instanceClass: 'db.t4g.micro' }, 'rds');
    expect(page).toContain('<dt>database</dt><dd id="database">RDS for PostgreSQL db.t4g.micro</dd>');
    expect(md).toContain('database RDS for PostgreSQL db.t4g.micro');
    expect(page).not.toContain('Aurora');
    expect(md).not.toContain('Aurora');
  });

  test('Aurora PostgreSQL db.r6g.large', () => {
    const { page, md } = render({ engine: 'aurora-postgresql', instanceClass: 'db.r6g.large' }, 'aurora');
    expect(page).toContain('<dd id="database">Aurora PostgreSQL db.r6g.large</dd>');
    expect(md).toContain('database Aurora PostgreSQL db.r6g.large');
  });

  test.each([
    ['recorded before runs named their database (no field)', undefined],
    ['a request that did not say (null)', null],
  ])('%s: unknown, not a guessed engine', (_what, database) => {
    const { page, md } = render(database, `unknown-${String(database)}`);
    expect(page).toContain('<dd id="database">unknown');
    expect(md).toContain('database unknown');
    expect(page).not.toMatch(/Aurora|RDS for PostgreSQL/);
  });
});

describe('the manifest schema', () => {
  const base = cloudRun('schema').manifest;
  test('reads a run without database (older runs) and one with it', () => {
    expect(manifestSchema.parse(base).environment.database).toBeUndefined();
    const withDb = {
      ...base,
      environment: { ...base.environment, database: { engine: 'local', instanceClass: null } },
    };
    expect(manifestSchema.parse(withDb).environment.database).toEqual({
      engine: 'local',
      instanceClass: null,
    });
  });

  test('refuses an engine it does not know, naming the path', () => {
    const bad = {
      ...base,
      environment: { ...base.environment, database: { engine: 'mysql', instanceClass: null } },
    };
    const r = manifestSchema.safeParse(bad);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['environment', 'database', 'engine']);
  });
});

describe('metric panels follow the engine', () => {
  test('RDS for PostgreSQL runs show the CPU credit balance where Aurora runs show CommitThroughput', () => {
    const titles = (engine: RunDatabase['engine'] | null) =>
      metricPanels('cloud', [], engine).map((p) => p.title);
    expect(titles('postgres')).toContain('CPU credit balance');
    expect(titles('postgres')).not.toContain('Commit throughput');
    expect(titles('aurora-postgresql')).toContain('Commit throughput');
    // unknown engine (older runs): the list they were always reported with
    expect(titles(null)).toEqual(titles('aurora-postgresql'));
  });
});
