/**
 * Sharing a lab means sharing its template: every synthesized lab must deploy into any account
 * and region unchanged — except a lab in an existing VPC, which CDK looks up in one account and
 * region (its own describe block: bound to exactly those, and to nothing else). For every other
 * file in labs/: no 12-digit account id, no region name, no literal ARN (only `${AWS::Partition}` / `${AWS::Region}` / `${AWS::AccountId}` through Fn::Sub,
 * or Ref AWS::Partition inside Fn::Join), no context lookups, and the stack's own environment left
 * unresolved.
 *
 * Asset bundling is skipped (`aws:cdk:bundling-stacks: []`): it only changes an asset's hash, not
 * where the template points, and saves an esbuild run per lab.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { App, Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { loadLabFile } from '../../lib/config/load';
import { createLabStack } from '../../lib/lab-stack';
import { committedLookups } from '../helpers/lab-context';
import { scratchDir } from '../helpers/scratch';

const LABS_DIR = join(__dirname, '..', '..', 'labs');
const allLabFiles = readdirSync(LABS_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
/** An existing VPC is looked up in its account and region: those labs are bound to them by design. */
const boundLabFiles = allLabFiles.filter((f) => loadLabFile(join(LABS_DIR, f)).network.mode === 'existing');
const labFiles = allLabFiles.filter((f) => !boundLabFiles.includes(f));

/** Every string in a JSON value, with its path. */
function strings(value: unknown, path = '$'): Array<{ path: string; text: string }> {
  if (typeof value === 'string') return [{ path, text: value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [
      ...strings(k, `${path}.<key>`),
      ...strings(v, `${path}.${k}`),
    ]);
  if (typeof value === 'number') return [{ path, text: String(value) }];
  return [];
}

// Asset hashes (64 hex digits) can contain 12 decimal digits in a row by chance; they name
// content, not an account.
const ASSET_HASH = /[0-9a-f]{64}/g;
const ACCOUNT_ID = /(?<![0-9])[0-9]{12}(?![0-9])/;
const REGION =
  /\b(?:us|eu|ap|sa|ca|me|af|il|mx|cn)(?:-gov|-iso[a-z]*)?-(?:north|south|east|west|central|northeast|northwest|southeast|southwest)-\d\b/;
/** `arn:` followed by anything but the end of the string (Fn::Join piece) or `${` (Fn::Sub). */
const LITERAL_ARN = /arn:(?!\$\{|$)/;

describe.each(labFiles)('%s', (file) => {
  const app = new App({
    outdir: scratchDir('proxylab-cdk-test-'),
    context: { 'aws:cdk:bundling-stacks': [], 'proxylab:now': '2026-11-21T10:00:00Z' },
  });
  const stack = createLabStack(app, loadLabFile(join(LABS_DIR, file)));
  const template = Template.fromStack(stack).toJSON();
  // Logical ids (hash suffixes, ports: `...SecurityGroupB892058454325...`) name template entries, not accounts.
  const logicalIds = (['Resources', 'Outputs', 'Parameters', 'Conditions'] as const)
    .flatMap((section) =>
      Object.keys((template as Record<string, Record<string, unknown> | undefined>)[section] ?? {}),
    )
    .sort((a, b) => b.length - a.length);
  const scrub = (text: string): string =>
    logicalIds.reduce((t, id) => t.split(id).join('<id>'), text.replace(ASSET_HASH, '<hash>'));
  const all = strings(template).map((s) => ({ ...s, text: scrub(s.text) }));

  test('the stack has no account or region of its own and made no context lookups', () => {
    expect(Token.isUnresolved(stack.account)).toBe(true);
    expect(Token.isUnresolved(stack.region)).toBe(true);
    expect(app.synth().manifest.missing ?? []).toEqual([]);
  });

  test('no 12-digit account id', () => {
    expect(all.filter((s) => ACCOUNT_ID.test(s.text))).toEqual([]);
  });

  test('no region name', () => {
    expect(all.filter((s) => REGION.test(s.text))).toEqual([]);
  });

  test('no literal ARN: partition, region and account come from pseudo parameters', () => {
    expect(all.filter((s) => LITERAL_ARN.test(s.text))).toEqual([]);
    // AND the ARNs that are there use the pseudo parameters (the checks above would pass on an empty template)
    const json = JSON.stringify(template);
    expect(json).toContain('"Ref":"AWS::Partition"');
    expect(json).toMatch(
      /\$\{AWS::Partition\}:iam::\$\{AWS::AccountId\}:role\/cdk-[a-z0-9]+-cfn-exec-role-\$\{AWS::AccountId\}-\$\{AWS::Region\}/,
    );
  });
});

describe.each(boundLabFiles)('%s (an existing VPC)', (file) => {
  const lab = loadLabFile(join(LABS_DIR, file));
  if (lab.network.mode !== 'existing') throw new Error(`${file}: not an existing-VPC lab`);
  const network = lab.network;
  const app = new App({
    outdir: scratchDir('proxylab-cdk-test-'),
    context: { ...committedLookups(), 'aws:cdk:bundling-stacks': [], 'proxylab:now': '2026-11-21T10:00:00Z' },
  });
  const stack = createLabStack(app, lab);
  const template = Template.fromStack(stack).toJSON();
  const texts = strings(template).map((s) => ({ ...s, text: s.text.replace(ASSET_HASH, '<hash>') }));

  test("the stack is bound to the VPC's account and the lab's region, and every lookup is committed", () => {
    expect([stack.account, stack.region]).toEqual([network.account, lab.region]);
    expect(app.synth().manifest.missing ?? []).toEqual([]);
  });

  test("the only account id and region in the template are the lab's", () => {
    const accounts = new Set(texts.flatMap((s) => s.text.match(new RegExp(ACCOUNT_ID.source, 'g')) ?? []));
    const regions = new Set(texts.flatMap((s) => s.text.match(new RegExp(REGION.source, 'g')) ?? []));
    expect([...accounts]).toEqual([network.account]);
    expect([...regions]).toEqual([network.region]);
  });
});

describe('the detectors themselves', () => {
  test.each([
    ['arn:aws:iam::123456789012:role/x', true, true, false],
    ['arn:aws-cn:s3:::bucket', false, false, false],
    ['ec2.eu-west-1.amazonaws.com', false, false, true],
    ['arn:${AWS::Partition}:iam::${AWS::AccountId}:role/x', false, false, false],
    ['arn:', false, false, false],
    ['cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}', false, false, false],
    ['at(2026-11-21T18:00:00)', false, false, false],
  ])('%s → account %s', (text, account, _arnAws, region) => {
    expect(ACCOUNT_ID.test(text)).toBe(account);
    expect(REGION.test(text)).toBe(region);
  });

  test.each([
    ['arn:aws:iam::123456789012:role/x', true],
    ['arn:aws-cn:s3:::bucket', true],
    ['arn:${AWS::Partition}:iam::${AWS::AccountId}:role/x', false],
    ['arn:', false],
  ])('literal ARN %s → %s', (text, literal) => {
    expect(LITERAL_ARN.test(text)).toBe(literal);
  });
});
