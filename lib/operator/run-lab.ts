/**
 * The lab file of a cloud run in its bucket: `proxylab run` — the operator, the side that read the
 * lab file — writes `runs/<runId>/lab.json` (lib/results/lab-record.ts) before `request.json`, so it
 * is there before any runner starts and before runner 0 writes plan.json; `proxylab fetch` copies
 * it with the rest (validated like every run file). Both calls are the operator's `run` policy's
 * (`ReadRuns`, `WriteRuns`: s3:GetObject and s3:PutObject on `runs/*`).
 *
 * The same run id again resumes the run: a lab.json there with another text refuses it, before
 * anything is sent, as `proxylab local` does (a changed lab is another run). A run started by an
 * earlier release has a manifest and no lab.json: none is written for it now, since the lab it
 * started with is not known.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { UsageError } from '../core/errors';
import { S3ResultSink } from '../aws/s3-sink';
import { labChangedProblem } from '../results/lab-diff';
import type { LabRecord } from '../results/lab-record';
import { RUN_PATHS } from '../results/run-paths';

/** What `checkRunLab` found: lab.json is to be written, or is there already with this text, or the run predates it. */
export type RunLabState = 'to-write' | 'same' | 'earlier-release';

/**
 * Before anything is sent: refuses (UsageError `run-lab-changed`) a run id whose lab.json holds
 * another lab text than `record`'s. A lab.json that does not fit its schema is a RunFileError naming it.
 */
export async function checkRunLab(
  s3: S3Client,
  bucket: string,
  runId: string,
  record: LabRecord,
): Promise<RunLabState> {
  const store = new S3ResultSink(s3, bucket, runId);
  const stored = await store.readLabRecord();
  if (stored !== null) {
    const problem = labChangedProblem(stored, record);
    if (problem === null) return 'same';
    throw new UsageError(
      `cannot resume run ${runId}: ${problem}. A changed lab is another run: pass a new --run-id ` +
        `(or put back the text in ${store.blobs.where(RUN_PATHS.lab)} to resume this one).`,
      { code: 'run-lab-changed' },
    );
  }
  return (await store.blobs.read(RUN_PATHS.manifest)) === null ? 'to-write' : 'earlier-release';
}

/** `runs/<runId>/lab.json`, when checkRunLab said it is to be written. */
export async function writeRunLab(
  s3: S3Client,
  bucket: string,
  runId: string,
  record: LabRecord,
  state: RunLabState,
): Promise<void> {
  if (state === 'to-write') await new S3ResultSink(s3, bucket, runId).writeLabRecord(record);
}
