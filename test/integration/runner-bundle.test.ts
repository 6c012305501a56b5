/**
 * The runner bundle ships the pooler entry beside the runner, and the runner software version
 * (the hash of runner.js that `proxylab run` and `doctor` compare) covers pooler.js too.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleRunner } from '../../lib/constructs/runner-bundle';
import { scratchDir } from '../helpers/scratch';

test('runner.js and pooler.js side by side; runner.js names the SHA-256 of pooler.js', () => {
  // GIVEN a fresh bundle
  const bundle = bundleRunner(path.join(scratchDir('proxylab-bundle-'), 'out'));
  // THEN the directory (the CDK asset) holds exactly the two files
  expect(fs.readdirSync(bundle.dir).sort()).toEqual(['pooler.js', 'runner.js']);
  expect(bundle.poolerFile).toBe(path.join(bundle.dir, 'pooler.js'));
  // … runner.js starts with pooler.js's hash, so a new pooler is a new runner version
  const poolerSha = createHash('sha256').update(fs.readFileSync(bundle.poolerFile)).digest('hex');
  expect(fs.readFileSync(bundle.file, 'utf8').split('\n')[0]).toBe(
    `/* proxylab pooler.js sha256:${poolerSha} */`,
  );
  // … and both load in Node
  for (const file of [bundle.file, bundle.poolerFile]) {
    const res = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
    expect({ file, status: res.status, stderr: res.stderr }).toEqual({ file, status: 0, stderr: '' });
  }
});
