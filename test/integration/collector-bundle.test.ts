import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { COLLECTOR_ESBUILD_OPTIONS, measureBundle, packageOf } from '../../scripts/bundle-size';

test.each([
  ['node_modules/@aws-sdk/client-s3/dist-cjs/index.js', '@aws-sdk/client-s3'],
  ['node_modules/zod/v4/core/schemas.js', 'zod'],
  ['node_modules/@aws-sdk/core/node_modules/@smithy/core/dist-es/x.js', '@smithy/core'],
  ['lib/collector/plan.ts', '(project) lib/collector'],
])('packageOf(%s) = %s', (input, expected) => {
  expect(packageOf(input)).toBe(expected);
});

describe('collector bundle (construct options)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'collector-bundle-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('stays under its budget: the SDK clients dominate, zod and our code stay small', async () => {
    // WHEN
    const measured = await measureBundle(path.join(dir, 'index.js'), COLLECTOR_ESBUILD_OPTIONS);
    // THEN
    const bytesOf = (prefix: string): number =>
      measured.contributors.filter((c) => c.name.startsWith(prefix)).reduce((n, c) => n + c.bytes, 0);
    expect(measured.bytes).toBeLessThan(900 * 1024);
    // `import { z } from 'zod'` instead of zod/mini would add ~400 KiB here
    expect(bytesOf('zod')).toBeLessThan(64 * 1024);
    expect(bytesOf('(project)')).toBeLessThan(32 * 1024);
    expect(bytesOf('@aws-sdk/') + bytesOf('@smithy/')).toBeGreaterThan(measured.bytes / 2);
  });
});
