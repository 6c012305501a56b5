/** Types of scripts/cli-bundle.js (plain CommonJS, so that the launcher loads no TypeScript machinery). */

/** What a cached bundle is made from, and where it is kept. */
export interface BundleSpec {
  readonly cacheDir: string;
  /** Names the entries: `<name>-<key>/out/<outName>`. */
  readonly name: string;
  readonly outName: string;
  /** Everything besides the input files that shapes the output (esbuild's version and options): JSON. */
  readonly recipe: unknown;
  /** Absolute paths of files the build depends on that it does not report. */
  readonly extraInputs: readonly string[];
  /** Builds into `outDir` (empty, existing); returns the absolute paths of every file it read. */
  build(outDir: string): readonly string[];
}

export const CACHE_DIR: string;
export const BUILD_OPTIONS: Readonly<Record<string, unknown>>;
export function recipeHash(name: string, recipe: unknown): string;
export function contentKey(recipeId: string, inputs: readonly string[]): string | null;
export function cliSpec(root?: string, cacheDir?: string): BundleSpec;
export function lookup(spec: BundleSpec): string | null;
export function buildAndStore(spec: BundleSpec): string;
export function cliBundle(spec?: BundleSpec): string;
