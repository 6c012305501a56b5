/**
 * DB instance classes Aurora PostgreSQL offers (provisioned). Source: the AWS pricing data that
 * cfn-lint 1.51 ships for `AWS::RDS::DBInstance` with Engine `aurora-postgresql` in us-east-1,
 * minus db.r4 (not offered for Aurora PostgreSQL 14+). Regions differ in what they offer; a class
 * missing in the deploy region fails at deploy time, not here.
 */
const SIZES_R = ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge'];

function family(name: string, sizes: readonly string[]): string[] {
  return sizes.map((s) => `db.${name}.${s}`);
}

export const AURORA_POSTGRES_INSTANCE_CLASSES: readonly string[] = [
  ...family('t3', ['medium', 'large']),
  ...family('t4g', ['medium', 'large']),
  ...family('r5', ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge', '24xlarge']),
  ...family('r6g', SIZES_R),
  ...family('r6gd', ['xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge']),
  ...family('r6i', [...SIZES_R, '24xlarge', '32xlarge']),
  ...family('r6id', ['24xlarge', '32xlarge']),
  ...family('r7g', SIZES_R),
  ...family('r7i', [...SIZES_R, '24xlarge', '48xlarge']),
  ...family('r8g', [...SIZES_R, '24xlarge', '48xlarge']),
  ...family('r8gd', [
    'xlarge',
    '2xlarge',
    '4xlarge',
    '8xlarge',
    '12xlarge',
    '16xlarge',
    '24xlarge',
    '48xlarge',
  ]),
  ...family('x2g', SIZES_R),
];

export const DEFAULT_INSTANCE_CLASS = 'db.t4g.medium';
