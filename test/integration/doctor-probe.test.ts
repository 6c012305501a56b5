/** The runner probe `proxylab doctor` sends through SSM passes shellcheck and keeps the password out of argv. */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { probeScript } from '../../lib/cloud/doctor';
import { scratchDir } from '../helpers/scratch';

test('the runner probe is shellcheck-clean and keeps the password out of argv', () => {
  const lines = probeScript({
    secretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:x',
    region: 'eu-west-1',
    bucket: 'results-bucket',
    targets: [{ name: 'writer', host: 'w.example', port: 5432 }],
  });
  const file = path.join(scratchDir('doctor-probe-'), 'probe.sh');
  writeFileSync(file, `#!/bin/bash\n${lines.join('\n')}\n`);
  const res = spawnSync('shellcheck', ['--shell=bash', file], { encoding: 'utf8' });
  expect(`${res.stdout}${res.stderr}`).toBe('');
  expect(lines.join('\n')).not.toMatch(/PGPASSWORD=\S*password\S* psql|--password/);
  expect(lines.join('\n')).toContain('export PGUSER PGPASSWORD');
});
