/**
 * scripts/preflight.ts, the one list of external tools: which tests it names for each tool, and the
 * one message it stops with. (Hiding tools from PATH for real is shown in the README's Tests.)
 */
import { missingMessage, testsUsing, TOOLS, type Tool } from '../../scripts/preflight';

function tool(name: string): Tool {
  const found = TOOLS.find((t) => t.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

test('unit tests need no external tool (a test that does belongs in cdk or integration)', () => {
  // WHEN
  const users = testsUsing(['unit']);
  // THEN
  expect(
    [...users].filter(([, tests]) => tests.length > 0).map(([t, tests]) => `${t.name}: ${tests.join(', ')}`),
  ).toEqual([]);
});

test.each([
  ['shellcheck', 'test/cdk/constructs.test.ts'],
  ['cfn-lint', 'test/cdk/labs.test.ts'],
  ['moto_server', 'test/integration/collect-moto.test.ts'],
  ['Chromium', 'test/integration/report-browser.test.ts'],
  ['PgBouncer', 'test/integration/local-smoke.test.ts'],
])('%s is needed by %s', (name, file) => {
  expect(testsUsing(['unit', 'cdk', 'integration']).get(tool(name))).toContain(file);
});

test('the message names each missing tool, its tests and one exact install command each', () => {
  // WHEN
  const text = missingMessage(
    [
      { tool: tool('shellcheck'), tests: ['test/cdk/constructs.test.ts'] },
      { tool: tool('moto_server'), tests: ['test/integration/collect-moto.test.ts'] },
      { tool: tool('PgBouncer 1.25.2'), tests: [] },
    ],
    'apt-get',
    'report only',
  );
  // THEN
  expect(text).toContain('(report only)');
  expect(text).toContain('✗ shellcheck');
  expect(text).toContain('needed by test/cdk/constructs.test.ts');
  expect(text).toMatch(
    /install: (sudo )?apt-get update && (sudo )?apt-get install -y --no-install-recommends shellcheck\n/,
  );
  expect(text).toContain("install: python3 -m pip install 'moto[server]'");
  expect(text).toContain('✗ PgBouncer 1.25.2');
  expect(text).toContain('PROXYLAB_PGBOUNCER_1_25=');
  expect(text.match(/✗ /g)).toHaveLength(3);
});
