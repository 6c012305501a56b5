/**
 * lab.json: the lab file a run was started with, verbatim — its text as read and validated (a UTF-8
 * byte order mark, which the reader drops, is the only byte not kept), the SHA-256 of that text's
 * UTF-8 bytes and the path it was given as — so that a result can be traced to its exact
 * configuration, a resume can refuse a lab that changed (lib/local/lab-record.ts, `proxylab run`),
 * and `proxylab compare` can say what differs between two runs' labs (./lab-diff.ts). Written
 * once, before the plan, by whoever read the lab file: `proxylab local --lab` into the run directory,
 * `proxylab run` (the operator) into `runs/<runId>/` of the lab's bucket. A run without a lab (a
 * `proxylab local` of a catalog suite without `--lab`) has none: its absence is the marker.
 *
 * The script files a lab's scenarios name are not repeated here: plan.json holds each text once, by
 * its SHA-256 (./plan-file.ts). Lab files hold no credentials by design (the lab schema, strict,
 * has no field for one: the database password is generated into Secrets Manager at deploy time),
 * and only a text that validated as a lab is recorded.
 *
 * Read back, the record is checked: its SHA-256 is the text's, the text is JSON (no key twice, the
 * depth and number range of lib/core/json-text.ts) of an object whose `name` is the record's, at
 * most READ_LIMITS.lab bytes. Pure: no I/O (the run store reads and writes it).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { UsageError } from '../core/errors';
import { parseJsonText } from '../core/json-text';
import { READ_LIMITS } from '../core/read';
import type { Holds, SameShape } from './same-shape';
import { sha256Hex } from './schemas';

export const LAB_RECORD_VERSION = 1 as const;

/** lab.json (schema: labRecordSchema). */
export interface LabRecord {
  readonly schemaVersion: typeof LAB_RECORD_VERSION;
  /** The lab's `name`. */
  readonly name: string;
  /** The lab file's path as it was given (`--lab labs/x.json`), for the reader to find it again. */
  readonly source: string;
  /** SHA-256 of `text`'s UTF-8 bytes, lowercase hex (`sha256sum` of the file, when it has no byte order mark). */
  readonly sha256: string;
  /** The lab file's text as read. */
  readonly text: string;
}

/** At most this many characters of the path a lab file was given as. */
const SOURCE_MAX_LENGTH = 4096;

export function labTextSha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The record of a lab file's text (read and validated by the caller: lib/config/lab-source.ts). */
export function labRecordOf(o: {
  readonly text: string;
  readonly source: string;
  readonly name: string;
}): LabRecord {
  return {
    schemaVersion: LAB_RECORD_VERSION,
    name: o.name,
    source: o.source,
    sha256: labTextSha256(o.text),
    text: o.text,
  };
}

/** The lab's JSON as its text says, parsed with the run files' checks; a UsageError when it is not JSON. */
export function parseLabText(record: Pick<LabRecord, 'text'>, where: string): unknown {
  return parseJsonText(record.text, { source: where, rejectDuplicateKeys: true });
}

export const labRecordSchema = z
  .object({
    schemaVersion: z.literal(LAB_RECORD_VERSION),
    name: z.string().min(1).max(64),
    source: z.string().min(1).max(SOURCE_MAX_LENGTH),
    sha256: sha256Hex,
    text: z.string(),
  })
  .superRefine((r, ctx) => {
    const issue = (path: string, message: string): void => {
      ctx.addIssue({ code: 'custom', path: [path], message });
    };
    if (Buffer.byteLength(r.text, 'utf8') > READ_LIMITS.lab) {
      issue('text', `longer than a lab file may be (${READ_LIMITS.lab} bytes)`);
      return;
    }
    if (labTextSha256(r.text) !== r.sha256) issue('sha256', 'is not the SHA-256 of `text`');
    let lab: unknown;
    try {
      lab = parseLabText(r, 'lab.json text');
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      issue('text', `is not the JSON of a lab file (${err.message})`);
      return;
    }
    const name =
      typeof lab === 'object' && lab !== null && !Array.isArray(lab)
        ? (lab as { name?: unknown }).name
        : undefined;
    if (name !== r.name) issue('name', 'is not the `name` of the lab in `text`');
  });

export type _LabRecordCheck = Holds<SameShape<LabRecord, z.infer<typeof labRecordSchema>>>;

/** `3f9a0c1d2e4b` — the first 12 hex digits, for messages and report headers. */
export function shortSha256(sha256: string): string {
  return sha256.slice(0, 12);
}
