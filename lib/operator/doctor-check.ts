/**
 * One doctor check and what `proxylab doctor` needs to run them (./doctor.ts): the shared shape of
 * every check module (./doctor-*.ts), and the checklist as printed.
 */
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { RDSClient } from '@aws-sdk/client-rds';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { StagingKeyReader } from './staging-key';

export interface Check {
  readonly title: string;
  readonly ok: boolean;
  /** What was seen (value, status, error). */
  readonly detail: string;
  /** The exact fix, for a failed check. */
  readonly fix: string | null;
}

export interface DoctorDeps {
  readonly cloudformation: CloudFormationClient;
  readonly rds: RDSClient;
  readonly scheduler: SchedulerClient;
  readonly ssm: SSMClient;
  readonly lambda: LambdaClient;
  /** For spot runners' requests (DescribeSpotInstanceRequests). */
  readonly ec2: EC2Client;
  /** The CLI's runner software version (runnerSoftwareVersion()). */
  readonly softwareVersion: string;
  readonly region: string;
  readonly now: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  /**
   * Wait between two looks at a probe. @default PROBE_POLL_MS: 1 s, 2 s, then 5 s — a probe that
   * finishes at once (a quick runner, moto) is seen within a second; a slow one is polled every 5 s.
   */
  readonly pollMs?: number;
  /** How long to wait for each runner's probe. @default the probe's execution timeout + 60 s, at least 180 000 */
  readonly probeTimeoutMs?: number;
  /**
   * Reads the CDK staging bucket's encryption and key (./staging-key.ts): whether the hosts can
   * decrypt the runner bundle. @default - not checked
   */
  readonly stagingKey?: StagingKeyReader;
}

export const ok = (title: string, detail: string): Check => ({ title, ok: true, detail, fix: null });
export const bad = (title: string, detail: string, fix: string): Check => ({ title, ok: false, detail, fix });

/** The checklist as printed: ✓/✗, title, detail, and the fix under each ✗. */
export function formatChecks(checks: readonly Check[]): string {
  const lines = checks.map(
    (c) => `${c.ok ? '✓' : '✗'} ${c.title}: ${c.detail}${c.fix ? `\n    fix: ${c.fix}` : ''}`,
  );
  const failed = checks.filter((c) => !c.ok).length;
  lines.push(
    failed === 0 ? `all ${checks.length} checks hold` : `${failed} of ${checks.length} checks failed`,
  );
  return lines.join('\n') + '\n';
}

export function message(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
