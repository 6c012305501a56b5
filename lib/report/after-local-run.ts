/**
 * Hook for `proxylab local` (scripts/commands/local.ts AFTER_RUN): write the report into the run
 * directory and print where it is; a run with session-state or latency steps also closes with the
 * session matrix and the added-latency table (render-session.ts). A report that cannot be written
 * does not fail the run.
 */
import { catalogLookup } from './catalog-lookup';
import { writeReport } from './index';
import { loadRun } from './load';
import { sessionSections, sessionSectionsMd } from './render-session';
import { forTerminal } from '../core/terminal-text';

// Synchronous work, but the hook signature (scripts/commands/local.ts AFTER_RUN) is async.
export function afterLocalRun(
  result: { readonly runDir: string },
  print: (line: string) => void,
): Promise<void> {
  try {
    const closing = sessionSectionsMd(sessionSections(loadRun(result.runDir), catalogLookup()));
    if (closing !== '') print(`${forTerminal(closing)}\n`);
    const r = writeReport(result.runDir);
    print(`Report: ${r.htmlPath} (${(r.bytes / 1024).toFixed(0)} KiB, ${Math.round(r.ms)} ms)`);
    print(`Summary: ${r.mdPath}`);
    if (r.downtimePaths.length > 0) print(`Downtime: ${r.downtimePaths.join(', ')}`);
  } catch (err) {
    print(
      `Report not written: ${err instanceof Error ? err.message : String(err)} (run \`proxylab report ${result.runDir}\` to retry)`,
    );
  }
  return Promise.resolve();
}
