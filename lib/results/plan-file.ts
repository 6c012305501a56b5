/**
 * plan.json as it is written: a plan with script files stores each text once, by its SHA-256
 * (schemaVersion 2, ./schemas.ts planFileV2Schema), instead of in every step that runs it; a plan
 * without script files is written as schemaVersion 1, byte for byte what earlier releases wrote and
 * read. Both forms read back (planSchema) as the same RunPlan. Pure: no I/O.
 *
 * Why: a lab's 60 KiB script run by ~1,100 steps made a 181 MiB plan.json, beyond what every reader
 * of a run (`report`, resume, the cloud runner) accepts (READ_LIMITS.runFile, 64 MiB), so a valid lab
 * made a run its own reader refused. `planFileBytes` is the size estimate `plan` and `validate` warn
 * with (lib/cost/run-plan.ts) when a plan would still be too large.
 */
import { createHash } from 'node:crypto';
import { READ_LIMITS } from '../core/read';
import type { ScriptPart } from '../suite/catalog';
import type { RunPlan } from '../suite/plan';
import { runFileText } from './blob-store';
import { PLAN_SCRIPTS_BY_HASH } from './schemas';

/** A file part as plan.json of schemaVersion 2 stores it. */
type StoredScriptPart =
  | Exclude<ScriptPart, { readonly file: unknown }>
  | { readonly file: { readonly name: string; readonly sha256: string }; readonly weight?: number };

/** plan.json of schemaVersion 2 (schema: ./schemas.ts planFileV2Schema). */
export interface PlanFileV2 extends Omit<RunPlan, 'schemaVersion' | 'steps'> {
  readonly schemaVersion: typeof PLAN_SCRIPTS_BY_HASH;
  /** Each script file's text, by the SHA-256 of its UTF-8 bytes (lowercase hex). */
  readonly scripts: Readonly<Record<string, string>>;
  readonly steps: ReadonlyArray<
    Omit<RunPlan['steps'][number], 'script'> & {
      readonly script: { readonly parts: readonly StoredScriptPart[] };
    }
  >;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The document written as plan.json: schemaVersion 2 when a step runs a script file, else the plan as it is. */
export function planFileOf(plan: RunPlan): RunPlan | PlanFileV2 {
  if (!plan.steps.some((s) => s.script.parts.some((p) => 'file' in p))) return plan;
  const scripts: Record<string, string> = {};
  const byText = new Map<string, string>();
  const hashOf = (sql: string): string => {
    let hash = byText.get(sql);
    if (hash === undefined) {
      hash = sha256(sql);
      byText.set(sql, hash);
      scripts[hash] = sql;
    }
    return hash;
  };
  const { schemaVersion: _inMemory, steps, ...header } = plan;
  return {
    schemaVersion: PLAN_SCRIPTS_BY_HASH,
    ...header,
    scripts,
    steps: steps.map((step) => ({
      ...step,
      script: {
        parts: step.script.parts.map((part) =>
          'file' in part ? { ...part, file: { name: part.file.name, sha256: hashOf(part.file.sql) } } : part,
        ),
      },
    })),
  };
}

/** The bytes plan.json of `plan` takes as written (runFileText: two-space indented, UTF-8). */
export function planFileBytes(plan: RunPlan): number {
  return Buffer.byteLength(runFileText(planFileOf(plan)), 'utf8');
}

/** What plan.json may be: every reader of a run reads it with this limit (lib/core/read.ts). */
export const PLAN_FILE_MAX_BYTES = READ_LIMITS.runFile;
