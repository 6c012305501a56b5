/**
 * jest globalSetup of the unit and integration projects: runs once per jest run in jest's own
 * process, before it starts the workers that run the test files (they inherit its environment).
 *
 * botocore's data directory (the service models test/helpers/aws-calls/model.ts checks AWS calls
 * against) is found here once and handed on as $PROXYLAB_BOTOCORE_DATA, instead of once per test
 * file that makes AWS calls (`python3 -c 'import botocore'`, ≈ 0.15 CPU-s each; bench/README.md
 * "npm test time"). A value already set is left alone; when python3 finds no botocore nothing is
 * set, and the model check says what is missing as before.
 */
import { BOTOCORE_DATA_ENV, findBotocoreModels } from '../../scripts/preflight';

export default function globalSetup(): void {
  if (process.env[BOTOCORE_DATA_ENV]) return;
  const dir = findBotocoreModels();
  if (dir !== null) process.env[BOTOCORE_DATA_ENV] = dir;
}
