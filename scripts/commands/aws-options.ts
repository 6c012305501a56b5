/**
 * `--profile` and `--region`, declared once for every command that calls AWS with a lab file
 * (lib/operator/operator.ts awsSettings reads them; the lab's region is the last fallback). Factories,
 * not shared instances: each command owns its Option objects.
 */
import { Option } from 'commander';

export function profileOption(): Option {
  return new Option('--profile <name>', 'AWS profile (default: AWS_PROFILE / the default credential chain)');
}

export function regionOption(): Option {
  return new Option(
    '--region <region>',
    "AWS region (default: AWS_REGION / the profile's region, else the lab's region)",
  );
}
