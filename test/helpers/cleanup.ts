/** jest setupFilesAfterEnv: after each test file, remove its scratch directories. */
import { removeScratchDirs } from './scratch';

// The AWS SDK's 8-line "node >= 22 from January 2027" notice, once per client module, as the CLI
// silences it (scripts/cli.ts); the README states the requirement once.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

afterAll(() => {
  removeScratchDirs();
});
