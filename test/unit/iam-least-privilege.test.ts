/**
 * Least privilege, shown by mutation: remove any one statement from the runner role, the collector
 * role (as synthesized, test/fixtures/iam/lab-policies.json) or the published operator policy
 * (`proxylab iam-policy`, what docs/aws.md shows), re-evaluate the AWS calls the tests made
 * (test/fixtures/iam/recorded-calls.json, recorded from real runs, see
 * test/helpers/aws-calls/recorded-calls.ts) and the calls made outside the tests' clients (boot
 * scripts, Lambda logs, cdk deploy: the stack's platform calls) — and some call is denied, named
 * with the test that made it. A statement no call needs is either a missing test or a grant too many.
 */
import { join } from 'node:path';
import { OPERATOR_ROLES, type OperatorRole } from '../../lib/operator/iam-policy';
import { iamProblems, iamRequestsOf, operatorPolicyFor, policiesOf } from '../helpers/aws-calls/iam';
import { labPolicies, type NamedPolicy, type PolicyJson } from '../helpers/aws-calls/lab-policies';
import type { LabRoleKind, Principal } from '../helpers/aws-calls/principals';
import { loadRecordedCalls, type RecordedCallFixture } from '../helpers/aws-calls/recorded-calls';

const ROOT = join(__dirname, '..', '..');

interface ScenarioCall {
  readonly by: string;
  readonly principal: Principal;
  readonly service: string;
  readonly operation: string;
  readonly input: Record<string, unknown>;
}

const recorded = loadRecordedCalls();

function absolute(p: Principal): Principal {
  return p.kind === 'operator' && p.labFile ? { ...p, labFile: join(ROOT, p.labFile) } : p;
}

function fromRecorded(c: RecordedCallFixture): ScenarioCall {
  return {
    by: `${c.file} › ${c.test}`,
    principal: absolute(c.principal),
    service: c.service,
    operation: c.operation,
    input: c.input,
  };
}

/** The calls a lab role made in the tests, plus its platform calls in `lab`. */
function roleScenario(kind: LabRoleKind, lab: string): ScenarioCall[] {
  const platform = labPolicies(lab)
    .platformCalls.filter((c) => c.principal === kind)
    .map((c) => ({
      by: `platform: ${c.why}`,
      principal: { kind, lab },
      service: c.service,
      operation: c.operation,
      input: c.input,
    }));
  const tests = recorded
    .filter((c) => c.principal.kind === kind && (c.principal.lab ?? lab) === lab)
    .map(fromRecorded)
    .map((c) => ({ ...c, principal: { kind, lab } }));
  return [...tests, ...platform];
}

const RANK: Readonly<Record<OperatorRole, number>> = { read: 0, run: 1, deploy: 2 };

/** The operator's calls under `role` or a smaller one (each role includes those below), in `lab`. */
function operatorScenario(role: OperatorRole, lab: string): ScenarioCall[] {
  const principal: Principal = { kind: 'operator', role, lab };
  const platform =
    role === 'deploy'
      ? labPolicies(lab)
          .platformCalls.filter((c) => c.principal === 'operator-deploy')
          .map((c) => ({
            by: `platform: ${c.why}`,
            principal,
            service: c.service,
            operation: c.operation,
            input: c.input,
          }))
      : [];
  const tests = recorded
    .filter(
      (c) =>
        c.principal.kind === 'operator' &&
        RANK[c.principal.role] <= RANK[role] &&
        (c.principal.lab ?? 'default') === lab,
    )
    .map(fromRecorded)
    .map((c) => ({ ...c, principal: { ...(c.principal as object), role } as Principal }));
  return [...tests, ...platform];
}

/** Every statement of `policies` as [label, policies without it]. */
function withoutEach(policies: readonly NamedPolicy[]): Array<[string, NamedPolicy[]]> {
  const out: Array<[string, NamedPolicy[]]> = [];
  policies.forEach((p, pi) =>
    p.document.Statement.forEach((st, si) => {
      const actions = Array.isArray(st.Action) ? st.Action.join(',') : st.Action;
      const label = `${p.name}#${si}${st.Sid ? ` ${st.Sid}` : ''} ${actions} on ${JSON.stringify(st.Resource)}`;
      const mutated = policies.map((q, qi) =>
        qi === pi
          ? { ...q, document: { ...q.document, Statement: q.document.Statement.filter((_, k) => k !== si) } }
          : q,
      );
      out.push([label, mutated]);
    }),
  );
  return out;
}

function actionsOf(policies: readonly NamedPolicy[], label: string): string[] {
  for (const p of policies)
    for (const [si, st] of p.document.Statement.entries())
      if (label.startsWith(`${p.name}#${si} `)) return Array.isArray(st.Action) ? st.Action : [st.Action];
  return [];
}

/** The first scenario call each statement's removal denies (null: none needs it). */
async function mutationTable(
  scenario: readonly ScenarioCall[],
  policies: readonly NamedPolicy[],
): Promise<{ baseline: string[]; denied: Array<[string, string | null]> }> {
  const baseline: string[] = [];
  for (const c of scenario)
    baseline.push(...(await iamProblems(c, c.principal, policies)).map((p) => `${c.by}: ${p}`));
  // The IAM actions each call needs (null: no mapping, judged every time). A removal is noticed
  // only as "may not <action> on" for one of the removed statement's own actions, so a call that
  // needs none of them cannot notice it: it is not simulated again (the same table, fewer runs).
  const needs = scenario.map((c) => {
    const requests = iamRequestsOf(c, policiesOf(c.principal).lab);
    return typeof requests === 'string' ? null : new Set(requests.map((r) => r.action));
  });
  const denied: Array<[string, string | null]> = [];
  for (const [label, mutated] of withoutEach(policies)) {
    const actions = actionsOf(policies, label);
    let first: string | null = null;
    for (const [i, c] of scenario.entries()) {
      const needed = needs[i];
      if (needed && !actions.some((a) => needed.has(a))) continue;
      const problems = await iamProblems(c, c.principal, mutated);
      const hit = problems.find((p) => actions.some((a) => p.includes(` may not ${a} on `)));
      if (hit) {
        first = `${c.by} — ${hit.slice(0, hit.indexOf(' — '))}`;
        break;
      }
    }
    denied.push([label, first]);
  }
  return { baseline, denied };
}

/** Statements whose removal no call noticed; each noticed one names a test file or a platform call. */
function unneeded(denied: Array<[string, string | null]>): string[] {
  if (process.env.PROXYLAB_IAM_REPORT === '1')
    process.stdout.write(
      denied.map(([label, hit]) => `- without ${label}\n    denied: ${hit ?? 'NOTHING'}\n`).join(''),
    );
  return denied
    .filter(
      ([, hit]) => hit === null || !/^(test\/(unit|integration)\/\S+\.test\.ts › |platform: )/.test(hit),
    )
    .map(([label]) => label);
}

jest.setTimeout(300_000);

describe.each([
  ['runner', 'e5-big-server'],
  // the disruption grants (issue 22): each lab's own, each needed by a recorded call
  ['runner', 'failover-aurora'],
  ['runner', 'failover-rds'],
  ['collector', 'default'],
] as const)('the %s role (lab %s) as synthesized', (kind, lab) => {
  test('every recorded call is allowed, and removing any one statement denies a named call', async () => {
    // GIVEN the role's policy and the calls made as that role
    const fixture = labPolicies(lab);
    const role = fixture.roles[fixture.principals[kind] ?? ''];
    const scenario = roleScenario(kind, lab);
    expect(role?.policies.length).toBeGreaterThan(0);
    // WHEN each statement is removed in turn
    const { baseline, denied } = await mutationTable(scenario, role?.policies ?? []);
    // THEN all calls pass with the whole policy, and each removal is noticed by a named call
    expect(baseline).toEqual([]);
    expect(unneeded(denied)).toEqual([]);
    expect(denied.length).toBeGreaterThanOrEqual(3);
  });
});

describe.each(OPERATOR_ROLES.map((r) => [r] as const))(
  'the published operator policy, role %s (labs/default.json)',
  (role) => {
    test('every recorded CLI call is allowed, and removing any one statement denies a named call', async () => {
      const policies: NamedPolicy[] = [
        { name: `operator-${role}`, document: operatorPolicyFor('default', role) },
      ];
      const { baseline, denied } = await mutationTable(operatorScenario(role, 'default'), policies);
      expect(baseline).toEqual([]);
      expect(unneeded(denied)).toEqual([]);
    });
  },
);

test('the spot lab: its operator may read Spot requests, and needs to (doctor)', async () => {
  const policy: PolicyJson = operatorPolicyFor('pocket', 'run');
  const extra = policy.Statement.filter((s) => s.Sid === 'ReadSpotRequests');
  expect(extra).toHaveLength(1);
  const { baseline, denied } = await mutationTable(operatorScenario('run', 'pocket'), [
    { name: 'operator-run', document: policy },
  ]);
  expect(baseline).toEqual([]);
  expect(denied.find(([label]) => label.includes('ReadSpotRequests'))?.[1]).toMatch(
    /may not ec2:DescribeSpotInstanceRequests on \*/,
  );
});

test('a lab with the blue-green suite: its operator may delete what a Blue/Green run left, and each of those statements is needed (destroy)', async () => {
  // GIVEN the deploy policy of the Aurora failover lab, whose suites hold blue-green
  const policy: PolicyJson = operatorPolicyFor('failover-aurora', 'deploy');
  const sids = ['FindBlueGreenLeftovers', 'ReadOldBlue', 'DeleteBlueGreenLeftovers'];
  expect(policy.Statement.filter((s) => sids.includes(s.Sid ?? '')).map((s) => s.Sid)).toEqual(sids);
  // WHEN each statement is removed in turn from the policy judging destroy's recorded calls
  const { baseline, denied } = await mutationTable(operatorScenario('deploy', 'failover-aurora'), [
    { name: 'operator-deploy', document: policy },
  ]);
  // THEN every call passes with the whole policy, and each Blue/Green statement's removal denies one
  expect(baseline).toEqual([]);
  for (const sid of sids)
    expect([sid, denied.find(([label]) => label.includes(` ${sid} `))?.[1]]).toEqual([
      sid,
      expect.stringMatching(/^test\/unit\/cloud-blue-green\.test\.ts › /),
    ]);
});

test('the denial names the call and the test: without the lock grant, the runner cannot release its lock', async () => {
  // GIVEN the runner role without its s3:DeleteObject statement (the code before issue 20)
  const fixture = labPolicies('e5-big-server');
  const policies = fixture.roles[fixture.principals.runner ?? '']?.policies ?? [];
  const [, mutated] = withoutEach(policies).find(([label]) => label.includes('s3:DeleteObject')) ?? ['', []];
  // WHEN the recorded scenario is judged by it
  const { denied } = await mutationTable(roleScenario('runner', 'e5-big-server'), mutated);
  const all = (
    await Promise.all(
      roleScenario('runner', 'e5-big-server').map(async (c) => ({
        c,
        p: await iamProblems(c, c.principal, mutated),
      })),
    )
  ).filter((x) => x.p.length > 0);
  // THEN the lock deletions are denied, named with their tests
  expect(denied.length).toBeGreaterThan(0);
  expect(all.length).toBeGreaterThan(0);
  expect(
    all.every(
      (x) => x.c.operation === 'DeleteObject' && /\/locks\/runner-\d+\.lock$/.test(String(x.c.input.Key)),
    ),
  ).toBe(true);
  expect(all.map((x) => x.c.by)).toEqual(expect.arrayContaining([expect.stringMatching(/cloud-run-lock/)]));
});
