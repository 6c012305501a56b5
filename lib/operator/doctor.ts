/**
 * `proxylab doctor --lab FILE`: on a deployed lab, check every integration point the mocks cannot
 * prove, in a few minutes and a few cents, and say how to fix each failure. It never changes the
 * lab: it reads (CloudFormation, RDS, Scheduler), runs one read-only probe per runner through SSM
 * (which writes one small object under runs/proxylab-doctor/ to prove the runner can write), and
 * invokes the collector for the last minutes (which writes runs/proxylab-doctor/metrics/).
 *
 * Checks, in order: stack status; with `deps.stagingKey`, that the hosts can decrypt the CDK staging
 * bucket's assets (./staging-key.ts); expiry schedule; parameter groups in sync (and, for an Aurora
 * lab with the blue-green suite, its cluster parameter group: ./doctor-blue-green.ts); for a lab without
 * internet egress, no route of its subnets to an internet or NAT gateway; per runner: SSM
 * reachable, runner software version, Node and pgbench, the DB secret readable, TLS connections
 * to the writer and each proxy with `SHOW max_connections` matching the lab, S3 write/read/list
 * under runs/, and without internet each VPC endpoint answering HTTPS from inside the VPC; the
 * collector returning CloudWatch and PI data.
 *
 * This file runs them in that order; the checks live by concern: ./doctor-check.ts (a check, the
 * deps, the printed checklist), ./doctor-probe.ts (the runner's probe script), ./doctor-runner.ts
 * (one runner through SSM), ./doctor-poolers.ts, ./doctor-network.ts, ./doctor-spot.ts.
 */
import { DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { stackNameFor } from '../config/stack-outputs';
import type { LabConfig } from '../config/types';
import { formatExpiresAt } from '../config/expiry';
import { readLabExpiry } from './extend';
import { buildCollectEvent, invokeCollector } from '../aws/collector-invoke';
import { runnerArgsFromOutputs } from './operator';
import type { LabOutputs } from './outputs';
import { parameterStates } from './parameters';
import { stagingKeyChecksOfStack } from './staging-key';
import { isPrivateNetwork, PRIVATE_ENDPOINT_SERVICES } from '../config/network';
import { bad, message, ok, type Check, type DoctorDeps } from './doctor-check';
import { DOCTOR_RUN_ID, probeExecutionSeconds, probeScript } from './doctor-probe';
import { checkRunner } from './doctor-runner';
import { poolerOutputChecks } from './doctor-poolers';
import { routeTableChecks } from './doctor-network';
import { spotChecks } from './doctor-spot';
import { blueGreenParameterCheck } from './doctor-blue-green';
import { labReplacesDatabase } from '../config/disruptions';

export { formatChecks, type Check, type DoctorDeps } from './doctor-check';
export { DOCTOR_RUN_ID, parseProbe, probeExecutionSeconds, probeScript } from './doctor-probe';
export { MAX_CLOCK_OFFSET_MS, PROBE_POLL_MS, timeSyncCheck } from './doctor-runner';
export { runnerPoolerChecks } from './doctor-poolers';
export { isPrivateIpv4, routeTableChecks, runnerEndpointChecks } from './doctor-network';

export async function runDoctor(
  lab: LabConfig,
  labFile: string,
  outputs: LabOutputs,
  deps: DoctorDeps,
): Promise<Check[]> {
  const checks: Check[] = [];
  const redeploy = `npx proxylab deploy --lab ${labFile}`;
  const stackName = stackNameFor(lab.name);

  // 1. the stack
  const stack = await stackCheck(stackName, labFile, redeploy, deps);
  const stackId = stack.stackId;
  checks.push(stack.check);

  // 1b. the CDK staging bucket's key: the hosts must be able to decrypt the runner bundle
  if (deps.stagingKey) checks.push(...(await stagingKeyChecksOfStack(deps.stagingKey, stackId, deps.region)));

  // 2. the expiry schedule
  checks.push(await expiryCheck(lab, stackName, redeploy, deps));

  // 3. parameter groups (and an Aurora cluster's, when a Blue/Green switchover needs its logical replication)
  checks.push(await parameterGroupCheck(outputs, redeploy, deps));
  if (labReplacesDatabase(lab) && outputs.databaseEngine === 'aurora-postgresql')
    checks.push(await blueGreenParameterCheck(deps.rds, outputs.clusterIdentifier));

  // 3b. a lab without internet: its subnets route nowhere out
  const network = lab.network;
  const privateNetwork = isPrivateNetwork(network) ? network : null;
  if (privateNetwork) checks.push(...(await routeTableChecks(deps.ec2, privateNetwork)));

  // 4. each runner, through SSM
  const base = runnerArgsFromOutputs(outputs, lab, {
    runId: DOCTOR_RUN_ID,
    suite: 'smoke',
    region: deps.region,
    startAt: '',
  });
  const targets = [
    { name: 'writer', host: base.writerEndpoint.host, port: base.writerEndpoint.port },
    ...base.proxies.map((p) => ({ name: p.name, host: p.endpoint.host, port: p.endpoint.port })),
  ];
  const poolers = Object.values(outputs.poolerEndpoints);
  checks.push(...poolerOutputChecks(lab, outputs, redeploy));
  const script = probeScript({
    secretArn: outputs.dbSecretArn,
    region: deps.region,
    bucket: outputs.resultsBucketName,
    targets,
    poolers,
    poolerAdminSecretArn: outputs.poolerAdminSecretArn,
    ...(privateNetwork ? { endpointServices: PRIVATE_ENDPOINT_SERVICES.map((e) => e.service) } : {}),
  });
  const executionSeconds =
    probeExecutionSeconds(targets.length, poolers) +
    (privateNetwork ? 12 * PRIVATE_ENDPOINT_SERVICES.length : 0);
  for (const instanceId of outputs.runnerInstanceIds) {
    checks.push(
      ...(await checkRunner(
        instanceId,
        { lines: script, executionSeconds },
        targets.map((t) => t.name),
        lab,
        labFile,
        deps,
        { poolers, adminSecret: outputs.poolerAdminSecretArn !== null, stackName },
      )),
    );
  }

  // 4b. spot runners: each runner's Spot request, as the stack's canceller will see it on destroy
  if (lab.runners.spot)
    checks.push(...(await spotChecks(deps.ec2, stackId, outputs.runnerInstanceIds, labFile)));

  // 5. the collector, for the last 15 minutes
  checks.push(...(await collectorChecks(lab, outputs, base.collector, redeploy, deps)));
  return checks;
}

/** The stack's status (DescribeStacks), and its id for the checks that need it (null when unknown). */
async function stackCheck(
  stackName: string,
  labFile: string,
  redeploy: string,
  deps: DoctorDeps,
): Promise<{ readonly check: Check; readonly stackId: string | null }> {
  try {
    const res = await deps.cloudformation.send(new DescribeStacksCommand({ StackName: stackName }));
    const status = res.Stacks?.[0]?.StackStatus ?? 'unknown';
    const stackId = res.Stacks?.[0]?.StackId ?? null;
    return {
      stackId,
      check: /^(CREATE|UPDATE)_COMPLETE$/.test(status)
        ? ok(`stack ${stackName}`, status)
        : bad(
            `stack ${stackName}`,
            status,
            status === 'DELETE_FAILED'
              ? `the expiry or a destroy could not delete everything: npx proxylab destroy --lab ${labFile}, then see the stack events in the CloudFormation console`
              : /IN_PROGRESS$/.test(status)
                ? 'wait until CloudFormation finishes, then run doctor again'
                : `see the stack events (aws cloudformation describe-stack-events --stack-name ${stackName}), then ${redeploy}`,
          ),
    };
  } catch (err) {
    return {
      stackId: null,
      check: bad(`stack ${stackName}`, message(err), `${redeploy} (check --profile/--region)`),
    };
  }
}

/** The lab's expiry schedule exists and has not fired (a lab without ttlHours has none). */
async function expiryCheck(
  lab: LabConfig,
  stackName: string,
  redeploy: string,
  deps: DoctorDeps,
): Promise<Check> {
  if (lab.ttlHours === null)
    return ok('expiry schedule', 'none (the lab sets no ttlHours): destroy it yourself');
  try {
    const at = await readLabExpiry(deps.scheduler, stackName);
    if (at === null)
      return bad('expiry schedule', 'not found', `${redeploy} (the schedule is part of the stack)`);
    if (at.getTime() <= deps.now().getTime())
      return bad('expiry schedule', `fired at ${formatExpiresAt(at)}`, `${redeploy} to start a new lab`);
    return ok('expiry schedule', `deletes the lab at ${formatExpiresAt(at)}`);
  } catch (err) {
    return bad(
      'expiry schedule',
      message(err),
      'the CLI needs scheduler:GetSchedule; check your credentials',
    );
  }
}

/** Every DB instance's parameter groups in sync (nothing pending a reboot). */
async function parameterGroupCheck(outputs: LabOutputs, redeploy: string, deps: DoctorDeps): Promise<Check> {
  try {
    const states = await parameterStates(deps.rds, outputs.dbInstanceIds);
    const off = states.filter((s) => !s.applyStatus.every((a) => a === 'in-sync'));
    return off.length === 0
      ? ok('parameter groups in sync', states.map((s) => s.instanceId).join(', '))
      : bad(
          'parameter groups in sync',
          off.map((s) => `${s.instanceId}: ${s.applyStatus.join(',')}`).join('; '),
          off.map((s) => `aws rds reboot-db-instance --db-instance-identifier ${s.instanceId}`).join(' && ') +
            ` (or ${redeploy}, which reboots pending instances)`,
        );
  } catch (err) {
    return bad('parameter groups in sync', message(err), 'the CLI needs rds:DescribeDBInstances');
  }
}

/** The collector, invoked for the last 15 minutes: CloudWatch series, and PI series when the lab turns PI on. */
async function collectorChecks(
  lab: LabConfig,
  outputs: LabOutputs,
  collector: ReturnType<typeof runnerArgsFromOutputs>['collector'],
  redeploy: string,
  deps: DoctorDeps,
): Promise<Check[]> {
  const checks: Check[] = [];
  const end = new Date(Math.floor(deps.now().getTime() / 60_000) * 60_000);
  const window = { start: new Date(end.getTime() - 15 * 60_000).toISOString(), end: end.toISOString() };
  try {
    if (!collector) throw new Error('the stack outputs name no collector');
    const event = buildCollectEvent(collector, DOCTOR_RUN_ID, window, outputs.resultsBucketName);
    const summary = (await invokeCollector(deps.lambda, outputs.collectorFunctionName, event)) as {
      cloudwatch?: { series?: { ok?: number } };
      pi?: { series?: { ok?: number } } | null;
    } | null;
    const cw = summary?.cloudwatch?.series?.ok ?? 0;
    checks.push(
      cw > 0
        ? ok('collector: CloudWatch', `${cw} series with data in the last 15 min`)
        : bad(
            'collector: CloudWatch',
            'no series with data in the last 15 min',
            'a new lab publishes its first metrics after a few minutes: run doctor again in 5 min; if it stays empty, check the collector role (cloudwatch:GetMetricData) in CloudWatch Logs of the function',
          ),
    );
    if (lab.database.performanceInsights) {
      const pi = summary?.pi?.series?.ok ?? 0;
      checks.push(
        pi > 0
          ? ok('collector: Performance Insights', `${pi} series with data`)
          : bad(
              'collector: Performance Insights',
              'no series with data in the last 15 min',
              'Performance Insights needs a few minutes after the instance starts: run doctor again; if it stays empty, check pi:GetResourceMetrics on the DbiResourceIds in the collector role',
            ),
      );
    }
  } catch (err) {
    checks.push(
      bad(
        'collector',
        message(err),
        `see the function's log group (/aws/lambda/${outputs.collectorFunctionName}); ${redeploy}`,
      ),
    );
  }
  return checks;
}
