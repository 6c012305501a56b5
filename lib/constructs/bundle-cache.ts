/**
 * A content-addressed cache for esbuild bundles made at synth time (the runner bundle, the Lambda
 * handlers), so a second `cdk synth` of unchanged code reuses the bundle instead of rebuilding it.
 *
 * An entry is keyed by the recipe (its name, the esbuild version and options: anything that
 * changes the output without changing an input file) and by the content of every file the build
 * read — the inputs of esbuild's metafile from the last build of that recipe, plus `extraInputs`
 * that esbuild reads without listing them (tsconfig.json; package-lock.json stands for a changed
 * node_modules tree). A lookup re-hashes those files: any changed, added-by-rename or deleted input
 * is a miss, and a miss rebuilds and records the new input list.
 *
 * Layout under `root`:
 *   <name>-<recipe hash>.inputs.json   the absolute input paths of the recipe's latest build
 *   <name>-<key>/out/                  the bundle (what a CDK asset points at: nothing else in it)
 *   <name>-<key>/inputs.json           the inputs that key covers, and what the build reported
 * Entries are built in a temporary directory beside them and renamed into place (atomic), so a
 * parallel synth never sees half a bundle. Stale entries are left for `rm -rf` of the cache.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface BundleRecipe<R> {
  /** Names the cache entry: letters, digits and `-` only. */
  readonly name: string;
  /** Everything besides the input files that shapes the output (esbuild version, options): JSON. */
  readonly recipe: unknown;
  /** Absolute paths of files the build depends on that esbuild's metafile does not list. */
  readonly extraInputs: readonly string[];
  /**
   * Builds into `outDir` (empty, existing) and returns the absolute paths of every file it read
   * (esbuild's metafile inputs) and a JSON report kept beside the bundle (returned on a hit too).
   */
  build(outDir: string): { readonly inputs: readonly string[]; readonly report: R };
}

export interface CachedBundle<R> {
  /** The bundle directory: only what `build` wrote. */
  readonly dir: string;
  /** The content key (hex), part of the entry's directory name. */
  readonly key: string;
  /** True when an existing entry was reused (no build ran). */
  readonly hit: boolean;
  readonly report: R;
}

interface EntryManifest<R> {
  readonly inputs: readonly string[];
  readonly report: R;
}

const NAME = /^[a-z0-9-]+$/;
/** Inputs modified this long before a build started are not trusted to be what esbuild read. */
const MTIME_SLACK_MS = 2000;

function touchedSince(sinceMs: number, files: readonly string[]): boolean {
  return files.some((file) => {
    try {
      return fs.statSync(file).mtimeMs >= sinceMs;
    } catch {
      return true;
    }
  });
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The recipe's own hash: what the entry's input list is filed under. */
export function recipeHash(name: string, recipe: unknown): string {
  return sha256(JSON.stringify({ name, recipe })).slice(0, 16);
}

/**
 * The key of a recipe over these inputs as they are on disk now, or null when one of them is
 * missing (a deleted input: the entry cannot be trusted). Paths are sorted, so order never matters.
 */
export function contentKey(recipeId: string, inputs: readonly string[]): string | null {
  const hash = createHash('sha256').update(`${recipeId}\n`);
  for (const file of [...new Set(inputs)].sort()) {
    let content: Buffer;
    try {
      content = fs.readFileSync(file);
    } catch {
      return null;
    }
    hash.update(`${file}\0${sha256(content)}\n`);
  }
  return hash.digest('hex').slice(0, 32);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  } catch {
    return null;
  }
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/** The bundle for `spec`, from `root` when its inputs are unchanged, else freshly built and stored. */
export function cachedBundle<R>(root: string, spec: BundleRecipe<R>): CachedBundle<R> {
  if (!NAME.test(spec.name)) {
    throw new Error(
      `bundle cache: name ${JSON.stringify(spec.name)} is not allowed (letters a-z, digits, '-')`,
    );
  }
  fs.mkdirSync(root, { recursive: true });
  const recipeId = recipeHash(spec.name, spec.recipe);
  const pointer = path.join(root, `${spec.name}-${recipeId}.inputs.json`);
  const last = readJson(pointer);
  if (isStringArray(last)) {
    const key = contentKey(recipeId, [...last, ...spec.extraInputs]);
    const entry = key === null ? null : path.join(root, `${spec.name}-${key}`);
    const manifest =
      entry === null ? null : (readJson(path.join(entry, 'inputs.json')) as EntryManifest<R> | null);
    if (key !== null && entry !== null && manifest !== null && fs.existsSync(path.join(entry, 'out'))) {
      return { dir: path.join(entry, 'out'), key, hit: true, report: manifest.report };
    }
  }

  const work = fs.mkdtempSync(path.join(root, `build-${spec.name}-`));
  try {
    const out = path.join(work, 'out');
    fs.mkdirSync(out);
    const startedMs = Date.now();
    const built = spec.build(out);
    const inputs = [...new Set(built.inputs)].sort();
    const key = contentKey(recipeId, [...inputs, ...spec.extraInputs]);
    if (key === null) throw new Error(`bundle cache: an input of ${spec.name} vanished during its build`);
    const manifest: EntryManifest<R> = { inputs, report: built.report };
    fs.writeFileSync(path.join(work, 'inputs.json'), `${JSON.stringify(manifest, null, 1)}\n`);
    // The key hashes the inputs after the build: one written while esbuild ran (or just before,
    // within the file system's time stamp granularity) may differ from what esbuild read. Such a
    // bundle is used once under a one-off name and never filed under that key.
    if (touchedSince(startedMs - MTIME_SLACK_MS, [...inputs, ...spec.extraInputs])) {
      const once = fs.mkdtempSync(path.join(root, `${spec.name}-unsettled-`));
      fs.rmSync(once, { recursive: true });
      fs.renameSync(work, once);
      return { dir: path.join(once, 'out'), key, hit: false, report: built.report };
    }
    const entry = path.join(root, `${spec.name}-${key}`);
    if (!fs.existsSync(path.join(entry, 'out'))) {
      try {
        fs.renameSync(work, entry);
      } catch (err) {
        if (!fs.existsSync(path.join(entry, 'out'))) throw err; // else another synth won the race: same content
      }
    }
    writeAtomically(pointer, `${JSON.stringify(inputs)}\n`);
    return { dir: path.join(entry, 'out'), key, hit: false, report: built.report };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Absolute paths of a metafile's inputs (relative to `workingDir`), right after the build: the
 * files that exist, which skips esbuild's virtual inputs (`<define:…>`, `(disabled):…`).
 */
export function metafileInputs(inputs: Readonly<Record<string, unknown>>, workingDir: string): string[] {
  return Object.keys(inputs)
    .map((input) => path.resolve(workingDir, input))
    .filter((file) => fs.existsSync(file));
}
