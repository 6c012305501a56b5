/**
 * Shared helpers for the CDK tests: synthesize a lab in-process the way bin/proxylab.ts does
 * (same stack factory, cdk-nag available), but without Lambda bundling (asset content does not
 * change the template's shape; scripts/bench-synth.ts exercises real bundling) and with "now"
 * pinned so the expiry schedule is deterministic.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { expect } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Template } from 'aws-cdk-lib/assertions';
import { checkLabFile, formatProblems, LabConfig, validateLab } from '../../lib/config';
import { LabDatabase } from '../../lib/constructs/database';
import { createLabStack, LabStack } from '../../lib/lab-stack';
import { testApp } from '../helpers/cdk-app';
import { spawnToEnd } from '../helpers/spawn';
import { committedLookups } from '../helpers/lab-context';

export const ROOT = path.join(__dirname, '..', '..');
export const LABS_DIR = path.join(ROOT, 'labs');

export function labFiles(): string[] {
  return readdirSync(LABS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => path.join(LABS_DIR, f));
}

export function loadLab(file: string): LabConfig {
  const r = checkLabFile(file);
  if (!r.ok) throw new Error(formatProblems(r.problems, file));
  return r.lab;
}

/** A lab from a raw object (validated; throws with the problems if invalid). */
export function labFrom(raw: unknown): LabConfig {
  const r = validateLab(raw);
  if (!r.ok) throw new Error(formatProblems(r.problems));
  return r.lab;
}

/** "Now" in every newTestApp (`proxylab:now`): the expiry schedule a lab gets is at TEST_NOW + ttlHours. */
export const TEST_NOW = '2026-01-01T00:00:00Z';

export function newTestApp(outdir?: string): App {
  return testApp({
    ...(outdir === undefined ? {} : { outdir }),
    // The committed lookups (cdk.context.json): the existing-VPC labs synthesize from them, as with the CLI.
    context: { ...committedLookups(), 'proxylab:now': TEST_NOW },
  });
}

export interface SynthesizedLab {
  readonly app: App;
  readonly stack: LabStack;
  readonly template: Template;
}

export function synthLab(lab: LabConfig, app: App = newTestApp()): SynthesizedLab {
  const stack = createLabStack(app, lab);
  return { app, stack, template: Template.fromStack(stack) };
}

/** What cfn-lint said: its combined output (empty = clean) and exit code. */
export interface CfnLintResult {
  readonly output: string;
  readonly status: number | null;
}

/** Runs cfn-lint on template files; returns its combined output (empty = clean) and exit code. */
export function cfnLint(templates: readonly string[]): CfnLintResult {
  const res = spawnSync('cfn-lint', [...templates], { encoding: 'utf8' });
  if (res.error) throw res.error;
  return { output: `${res.stdout}${res.stderr}`.trim(), status: res.status };
}

/**
 * cfnLint without holding the worker: a test.concurrent test starts it right after beforeAll, and
 * the file's other tests run beside it (cfn-lint takes one core for most of a minute over every lab).
 */
export async function cfnLintInBackground(templates: readonly string[]): Promise<CfnLintResult> {
  const res = await spawnToEnd('cfn-lint', [...templates]);
  return { output: `${res.stdout}${res.stderr}`.trim(), status: res.code };
}

/** Every resource of a type, as [logicalId, properties, whole resource]. */
export function resourcesOfType(
  template: Template,
  type: string,
): Array<[string, Record<string, unknown>, Record<string, unknown>]> {
  const all = template.findResources(type) as Record<
    string,
    { Properties?: Record<string, unknown> } & Record<string, unknown>
  >;
  return Object.entries(all).map(([id, r]) => [id, r.Properties ?? {}, r]);
}

/** A VPC for a test stack that holds databases only (no NAT, two AZs). */
export function testVpc(stack: Stack): ec2.Vpc {
  return new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0, restrictDefaultSecurityGroup: false });
}

/** One LabDatabase per version in `stack`, from a lab whose `section` names only that version; keyed by version. */
export function databasePerVersion(
  stack: Stack,
  section: 'aurora' | 'postgres',
  versions: readonly { readonly version: string }[],
): Map<string, LabDatabase> {
  const vpc = testVpc(stack);
  const out = new Map<string, LabDatabase>();
  for (const { version } of versions) {
    const lab = labFrom({ name: 'v', [section]: { engineVersion: version } });
    out.set(
      version,
      new LabDatabase(stack, `V${version.replace(/\W/g, '_')}`, { vpc, subnets: {}, database: lab.database }),
    );
  }
  return out;
}

/** A stack of accepted versions and a canary stack on a retired one, which cfn-lint flags with `code`. */
export interface CanaryPair {
  readonly accepted: Stack;
  readonly canary: Stack;
  readonly code: string;
}

/** What one cfn-lint run said about the templates of an app's canary pairs. */
export interface CanaryLint {
  readonly output: string;
  /** The template file a stack was synthesized to. */
  readonly file: (stack: Stack) => string;
  readonly pairs: readonly CanaryPair[];
}

/** One cfn-lint run over every pair's `accepted` and `canary` templates (its start-up is the cost). */
export function lintCanaryPairs(app: App, pairs: readonly CanaryPair[]): CanaryLint {
  const assembly = app.synth();
  const file = (s: Stack): string => path.join(assembly.directory, s.templateFile);
  const { output } = cfnLint(pairs.flatMap((p) => [file(p.accepted), file(p.canary)]));
  return { output, file, pairs };
}

/**
 * For `pair` of the run: its canary is flagged, every finding on it is its `code`, and nothing names
 * its accepted stack; and nothing at all is reported outside the run's canaries.
 */
export function expectOnlyCanaryFlagged(lint: CanaryLint, pair: CanaryPair): void {
  const findings = lint.output.split(/\n\s*\n/).filter((block) => block.trim() !== '');
  const onCanary = findings.filter((f) => f.includes(lint.file(pair.canary)));
  expect(onCanary.length).toBeGreaterThan(0);
  for (const f of onCanary) expect(f).toMatch(new RegExp(`^${pair.code} `));
  expect(lint.output).not.toContain(lint.file(pair.accepted));
  for (const f of findings)
    expect({ finding: f, onACanary: lint.pairs.some((p) => f.includes(lint.file(p.canary))) }).toEqual({
      finding: f,
      onACanary: true,
    });
}
