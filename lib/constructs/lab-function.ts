/**
 * The shape both of the lab's Lambda functions take (the metrics collector, the Spot request
 * canceller): an owned log group, a role with least privilege by hand, and a NodejsFunction bundled
 * with the local esbuild (never Docker, through the bundle cache: lambda-bundle.ts), SDK v3 clients
 * included. Children are named `Logs`, `Role`,
 * `Function` under `scope`, so logical ids are those of the constructs that used to spell this out.
 */
import { CfnResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { cachedLambdaCode } from './lambda-bundle';

export interface LabFunctionProps {
  /** The handler's TypeScript entry (exports `handler`). */
  readonly entry: string;
  readonly description: string;
  readonly roleDescription: string;
  readonly logRetention: logs.RetentionDays;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly environment?: Record<string, string>;
  /** What the function may do beyond writing its own log group, in order. */
  readonly statements: readonly iam.PolicyStatement[];
  /** cdk-nag findings on the role that are accepted, each with why (acknowledged in order). */
  readonly roleAcknowledgements?: readonly { readonly id: string; readonly reason: string }[];
}

export interface LabFunction {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
}

export function addLabFunction(scope: Construct, props: LabFunctionProps): LabFunction {
  // Owned here with DESTROY: a log group the function created itself at run time would outlive the lab.
  const logGroup = new logs.LogGroup(scope, 'Logs', {
    retention: props.logRetention,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = new iam.Role(scope, 'Role', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: props.roleDescription,
  });
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupArn],
    }),
  );
  for (const statement of props.statements) role.addToPolicy(statement);

  const fn = new NodejsFunction(scope, 'Function', {
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: props.memorySize,
    timeout: props.timeout,
    role,
    logGroup,
    environment: props.environment,
    description: props.description,
    // Bundled as NodejsFunction's local esbuild would (minified CJS for node24, no source map, the
    // SDK v3 clients bundled — pinned to the versions we test with, not taken from the runtime),
    // through the synth-time bundle cache: an unchanged handler is not rebuilt on every synth.
    code: cachedLambdaCode(props.entry, { target: 'node24' }),
    handler: 'index.handler',
  });

  // The function must wait for its inline policy (CDK adds that), but a DependsOn on the role it
  // already GetAtts is redundant (cfn-lint W3005): state the one dependency that matters.
  const policy = role.node.tryFindChild('DefaultPolicy')?.node.defaultChild;
  if (policy instanceof CfnResource) {
    (fn.node.defaultChild as CfnResource).addOverride('DependsOn', [Stack.of(scope).getLogicalId(policy)]);
  }
  for (const ack of props.roleAcknowledgements ?? []) Validations.of(role).acknowledge(ack);
  return { function: fn, role, logGroup };
}
