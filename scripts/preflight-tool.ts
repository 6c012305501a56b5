/**
 * What the preflight knows of one external tool the tests use (scripts/preflight.ts TOOLS): types
 * only, shared by the preflight and its PgBouncer entries (scripts/preflight-pgbouncer.ts).
 */
import type { PackageManager } from '../lib/local/binaries';
import type { BuildOptions } from './pgbouncer-cache';

/** What a 'build' install may do: log, install OS packages for its build (null: may not). */
export type BuildContext = Pick<BuildOptions, 'log' | 'installPackages' | 'packageManager'>;

/**
 * How a tool is installed: OS packages per package manager, pip requirements, built by us (null
 * when built, else why not; `how` says how to get it by hand), or not at all.
 */
export type Install =
  | { readonly kind: 'os'; readonly packages: (pm: PackageManager) => readonly string[] | null }
  | { readonly kind: 'pip'; readonly requirement: string }
  | {
      readonly kind: 'build';
      readonly build: (ctx: BuildContext) => Promise<string | null>;
      readonly how: string;
    }
  | { readonly kind: 'none'; readonly how: string };

export interface Tool {
  readonly name: string;
  /** What the tests do with it. */
  readonly purpose: string;
  /** Matches the source of each test file that needs the tool (directly or through a helper). */
  readonly usedBy: RegExp;
  /** Path (or a description) when present, null when missing. */
  readonly find: () => string | null;
  readonly install: Install;
  /** Checked even when no test names it today (CI installs every required tool: a missing one is a broken CI). */
  readonly requiredInCi?: boolean;
  /**
   * Set for a product no package registry here provides (PgDoorman): when it is missing, its tests
   * do not run (their helper makes them describe.skip) and the preflight and `npm test` say which
   * and why, instead of stopping. The one exception to "nothing is skipped".
   */
  readonly optional?: string;
  /**
   * Data the tests read in process (no server, no tool run per test), so unit tests may use it:
   * botocore's service models.
   */
  readonly dataOnly?: boolean;
}
