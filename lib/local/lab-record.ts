/**
 * The lab of a `proxylab local --lab` run, kept in its run directory as lab.json
 * (lib/results/lab-record.ts): written with a new plan, before the first step, and checked by a
 * resume, which refuses a lab whose text changed since the run started — its steps would measure
 * another configuration under the same run id. A run without `--lab` writes none.
 */
import { UsageError } from '../core/errors';
import { labChangedProblem } from '../results/lab-diff';
import type { LabRecord } from '../results/lab-record';
import type { RunStore } from '../results/run-store';
import type { RunManifest } from '../suite/types';

/**
 * A resume of run `prev` with lab file `current` (null: no `--lab`): refused when the run ran
 * without a lab and one is given now, or when lab.json holds another text than `current`'s. A run
 * of an earlier release has no lab.json: only its lab's name is checked (by the manifest's settings).
 * A lab.json that does not fit its schema stops the resume naming it (a RunFileError).
 */
export async function checkLabUnchanged(
  store: Pick<RunStore, 'readLabRecord'>,
  prev: RunManifest,
  current: LabRecord | null,
): Promise<void> {
  // A lab run resumed without --lab, or a run of another mode, is refused with the other settings.
  if (current === null || prev.mode !== 'local') return;
  const refuse = (why: string, code: string): never => {
    throw new UsageError(`cannot resume run ${prev.runId}: ${why}`, { code });
  };
  if (typeof prev.settings.lab !== 'string')
    refuse(
      `it ran without a lab, and --lab ${current.source} is given now. Resume it without --lab, or start the lab's run under a new --run-id.`,
      'run-lab-added',
    );
  const stored = await store.readLabRecord();
  const problem = stored === null ? null : labChangedProblem(stored, current);
  if (problem !== null)
    refuse(
      `${problem}. A changed lab is another run: pass a new --run-id (or put back the text in the run's lab.json to resume this one).`,
      'run-lab-changed',
    );
}

/** lab.json of a run whose plan is being made now (nothing for a run without `--lab`). */
export async function recordLab(
  store: Pick<RunStore, 'writeLabRecord'>,
  current: LabRecord | null,
): Promise<void> {
  if (current !== null) await store.writeLabRecord(current);
}
