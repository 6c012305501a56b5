import * as fs from 'node:fs';
import * as path from 'node:path';
import { scratchDir } from './scratch';

/**
 * A lab folder with `orders.sql` holding `sql`, and the lab file (returned) naming it in scenario
 * `orders` of lab `shared`, after which `more` workload parts follow (`{ builtin: 'select-only' }`).
 */
export function labWithScript(sql: string, more: readonly Record<string, unknown>[] = []): string {
  const dir = scratchDir('proxylab-lab-script-');
  fs.writeFileSync(path.join(dir, 'orders.sql'), sql);
  const file = path.join(dir, 'lab.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      name: 'shared',
      scenarios: [{ name: 'orders', workload: [{ file: 'orders.sql' }, ...more], clients: [2] }],
    }),
  );
  return file;
}
