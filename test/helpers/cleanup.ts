/** jest setupFilesAfterEnv: after each test file, remove its scratch directories. */
import { removeScratchDirs } from './scratch';

afterAll(() => {
  removeScratchDirs();
});
