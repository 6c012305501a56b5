/**
 * The CDK context lookups committed with the repository (cdk.context.json at its root): what
 * `cdk synth` of the existing-VPC labs (labs/private.json, labs/existing-vpc.json) reads instead of
 * asking AWS. The ids in it are fake; the CDK CLI reads the file itself, in-process tests give its
 * values to their App with this. Tests never call AWS: a lab whose lookup is not in the file
 * synthesizes CDK's dummy VPC and reports the context missing (`manifest.missing`), which the
 * network tests assert never happens for a shipped lab.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOOKUP_CONTEXT_FILE = join(__dirname, '..', '..', 'cdk.context.json');

export function committedLookups(): Record<string, unknown> {
  return JSON.parse(readFileSync(LOOKUP_CONTEXT_FILE, 'utf8')) as Record<string, unknown>;
}
