#!/usr/bin/env node
/**
 * CDK app: `npx cdk synth -c lab=labs/NAME.json` (default labs/default.json, from cdk.json).
 * One environment-agnostic stack per lab, `proxylab-<name>`, checked by cdk-nag AwsSolutions:
 * an unacknowledged finding fails synthesis. A bad lab file fails with the same messages as
 * `proxylab validate`.
 */
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { checkLabFile, formatProblems } from '../lib/config';
import { addLabChecks, createLabStack } from '../lib/lab-stack';

// cdk-nag (below) and cfn-lint (tests and .ci/run) check the templates; aws-cdk-lib's built-in
// WASM CloudFormation validator would add ~4 s to every synth for the same checks.
// `CDK_VALIDATION=true npx cdk synth` turns it back on.
const app = new App({ builtinCloudFormationValidation: process.env.CDK_VALIDATION === 'true' });
const labArg: unknown = app.node.tryGetContext('lab');
const labPath = path.resolve(
  typeof labArg === 'string' && labArg !== '' ? labArg : path.join(__dirname, '..', 'labs', 'default.json'),
);
const result = checkLabFile(labPath);
if (!result.ok) {
  process.stderr.write(`error: invalid lab file ${formatProblems(result.problems, labPath)}\n`);
  process.exit(2);
}
createLabStack(app, result.lab);
addLabChecks(app);
app.synth();
