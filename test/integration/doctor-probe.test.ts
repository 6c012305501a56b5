/** The runner probe `proxylab doctor` sends through SSM passes shellcheck and keeps the password out of argv. */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_ENDPOINT_SERVICES } from '../../lib/config/network';
import { probeScript } from '../../lib/operator/doctor';
import type { PoolerEndpoint } from '../../lib/poolers/pgbouncer/layout';
import { poolerEndpoint } from '../helpers/pooler-endpoint';
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

test('with poolers, the probe is still shellcheck-clean and the admin password stays out of argv', () => {
  const pooler = (name: string, placement: 'dedicated' | 'on-runners', host: string): PoolerEndpoint =>
    poolerEndpoint({ name, placement, host });
  const lines = probeScript({
    secretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:x',
    region: 'eu-west-1',
    bucket: 'results-bucket',
    targets: [{ name: 'writer', host: 'w.example', port: 5432 }],
    poolers: [pooler('bouncer', 'dedicated', '10.0.1.5'), pooler('colocated', 'on-runners', '127.0.0.1')],
    poolerAdminSecretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:admin',
  });
  const file = path.join(scratchDir('doctor-probe-'), 'probe.sh');
  writeFileSync(file, `#!/bin/bash\n${lines.join('\n')}\n`);
  const res = spawnSync('shellcheck', ['--shell=bash', file], { encoding: 'utf8' });
  expect(`${res.stdout}${res.stderr}`).toBe('');
  const text = lines.join('\n');
  // the admin password only as a variable in a command's environment prefix, never an argument
  expect(text).not.toMatch(/psql[^\n]*ADMIN_PASSWORD/);
  expect(text).toMatch(/PGPASSWORD="\$ADMIN_PASSWORD" psql /);
  expect(text).toContain('unset ADMIN_USER ADMIN_PASSWORD');
  expect(lines.filter((l) => l.includes("-Atc 'SHOW VERSION'"))).toHaveLength(4);
  expect(lines.filter((l) => l.includes("-Atc 'SELECT 1'"))).toHaveLength(4);
});

test('without internet, the endpoint lines are shellcheck-clean and ask each service by its usual hostname', () => {
  const lines = probeScript({
    secretArn: 'arn:aws:secretsmanager:us-east-1:1:secret:x',
    region: 'us-east-1',
    bucket: 'results-bucket',
    targets: [{ name: 'writer', host: 'w.example', port: 5432 }],
    endpointServices: PRIVATE_ENDPOINT_SERVICES.map((e) => e.service),
  });
  const file = path.join(scratchDir('doctor-probe-'), 'probe.sh');
  writeFileSync(file, `#!/bin/bash\n${lines.join('\n')}\n`);
  const res = spawnSync('shellcheck', ['--shell=bash', file], { encoding: 'utf8' });
  expect(`${res.stdout}${res.stderr}`).toBe('');
  const curls = lines.filter((l) => l.includes('curl '));
  expect(curls.map((l) => /https:\/\/([a-z0-9.-]+)\//.exec(l)?.[1])).toEqual(
    PRIVATE_ENDPOINT_SERVICES.map((e) => `${e.service}.us-east-1.amazonaws.com`),
  );
  // one line of output per service, whatever curl prints
  for (const l of curls) expect(l).toMatch(/--max-time 10 .*\| tr '\\n' ' '\)"$/);
});
