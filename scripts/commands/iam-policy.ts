/**
 * `proxylab iam-policy --lab FILE [--role read|run|deploy]`: print the operator's least-privilege
 * IAM policy for a lab (lib/operator/iam-policy.ts). docs/aws.md shows it for labs/default.json.
 * Makes no AWS call.
 */
import type { Command } from 'commander';
import {
  checkOperatorPolicyOptions,
  OPERATOR_ROLE_COMMANDS,
  OPERATOR_ROLES,
  operatorPolicy,
  parseOperatorRole,
} from '../../lib/operator/iam-policy';
import { loadLabFile } from '../../lib/config/load';

interface IamPolicyFlags {
  readonly lab: string;
  readonly role: string;
  readonly account?: string;
  readonly region?: string;
  readonly bucket?: string;
  readonly cdkQualifier?: string;
}

export function register(program: Command): void {
  program
    .command('iam-policy')
    .description(
      "Print the least-privilege IAM policy (JSON) an operator needs for a lab, scoped to the lab's stack, " +
        'results bucket, runners and DB instances (by the proxylab:lab tag) and expiry schedule. Roles: ' +
        OPERATOR_ROLES.map((r) => `${r} = ${OPERATOR_ROLE_COMMANDS[r]}`).join('; ') +
        '. Makes no AWS call.',
    )
    .requiredOption('--lab <file>', 'lab file (JSON)')
    .option('--role <role>', `one of ${OPERATOR_ROLES.join(', ')}`, 'run')
    .option('--account <id>', 'the 12-digit account id to pin ARNs to (default: any account, *)')
    .option(
      '--region <region>',
      "the region to pin ARNs to, e.g. eu-west-1 (default: the lab's region, else *)",
    )
    .option(
      '--bucket <name>',
      'the results bucket (stack output ResultsBucketName), once deployed; an S3 bucket name, no wildcards',
    )
    .option('--cdk-qualifier <q>', 'the CDK bootstrap qualifier (1–10 letters, digits, _ and -)', 'hnb659fds')
    .action((flags: IamPolicyFlags) => {
      const role = parseOperatorRole(flags.role);
      const options = {
        ...(flags.account !== undefined ? { account: flags.account } : {}),
        ...(flags.region !== undefined ? { region: flags.region } : {}),
        ...(flags.bucket !== undefined ? { bucket: flags.bucket } : {}),
        ...(flags.cdkQualifier !== undefined ? { cdkQualifier: flags.cdkQualifier } : {}),
      };
      // AWS's naming rules, before the lab is read and before any policy is printed (exit 2):
      // a wildcard in a flag would widen the policy it pins.
      checkOperatorPolicyOptions(options);
      const lab = loadLabFile(flags.lab);
      const policy = operatorPolicy(lab, { role, ...options });
      process.stdout.write(JSON.stringify(policy, null, 2) + '\n');
    });
}
