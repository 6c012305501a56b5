/**
 * The runner software as a CDK asset: the esbuild bundle of scripts/runner.ts (one file), which
 * the runner fleet's user data downloads to /opt/proxylab/runner and installs as
 * /opt/proxylab/runner.js. Bundled once per process (every lab stack of an app shares it).
 */
import { Stack } from 'aws-cdk-lib';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import type { Construct } from 'constructs';
import { bundleRunner, type RunnerBundle } from './runner-bundle';
import { RUNNER_INSTALL_PATH } from './runner-args';

let bundled: RunnerBundle | null = null;

/** The bundle, built on first use in this process. */
export function runnerBundleOnce(): RunnerBundle {
  bundled ??= bundleRunner();
  return bundled;
}

/** What the RunnerFleet seam takes: the asset and the install command (run in /opt/proxylab). */
export interface RunnerSoftwareSpec {
  readonly asset: s3assets.Asset;
  readonly command: string;
}

/** Shell run after the download: install the file and make sure Node can load it. */
export function runnerInstallCommand(downloaded = '/opt/proxylab/runner'): string {
  return `install -m 0644 ${downloaded} ${RUNNER_INSTALL_PATH} && node --check ${RUNNER_INSTALL_PATH} && echo "proxylab runner installed at ${RUNNER_INSTALL_PATH}"`;
}

export function proxylabRunnerSoftware(scope: Construct, id = 'RunnerBundle'): RunnerSoftwareSpec {
  const asset = new s3assets.Asset(Stack.of(scope), id, { path: runnerBundleOnce().file });
  return { asset, command: runnerInstallCommand() };
}
