/**
 * The lab file schema (zod 4). Strict objects everywhere: an unknown key is an error, so a typo
 * never silently falls back to a default.
 *
 * Each leaf's error text is the description of what is ALLOWED ("an integer 1–100"); validate.ts
 * turns it into "must be an integer 1–100, got 120". Each field's `.meta()` carries its
 * documentation (description, default from DEFAULTS, or `defaultText` when the default is a rule):
 * the JSON Schema (docs/lab.schema.json) and the field tables in docs/lab-file.md and the README
 * are generated from it (scripts/gen-docs.ts). Rules that relate two fields (idle ≤ max,
 * unique proxy names, instanceClass vs serverless) live in validate.ts, because they need to run
 * even when other fields are broken.
 */
import { z } from 'zod';
import { DEFAULTS } from './defaults';
import { AURORA_POSTGRES_INSTANCE_CLASSES } from './instance-classes';
import {
  ACCOUNT_ID_PATTERN,
  IPV4_CIDR_PATTERN,
  NETWORK_EGRESS,
  NETWORK_ENDPOINTS,
  PRIVATE_ENDPOINT_SERVICES,
  SUBNET_ID_PATTERN,
  VPC_ID_PATTERN,
} from './network';
import {
  EC2_INSTANCE_TYPE_PATTERN,
  LAB_NAME_PATTERN,
  LIMITS,
  NO_CONTROL_EXCEPT_LINES,
  REGION_PATTERN,
  RESERVED_TAG_PREFIX,
  SUITE_NAME_PATTERN,
  TAG_CHARACTERS,
  TAG_TEXT_PATTERN,
  bool,
  doc,
  integer,
  numberIn,
  oneOf,
  startsWithAws,
} from './schema-kit';
import { auroraSchema, postgresSchema } from './schema-database';
import { proxySchema, poolerSchema } from './schema-poolers';
import { scenarioSchema } from './schema-scenarios';
import { BUILTIN_SCRIPTS } from '../suite/script-spec';
import { LOAD_LIMITS } from '../suite/disruption-load';

export {
  EC2_INSTANCE_TYPE_PATTERN,
  LIMITS,
  REGION_PATTERN,
  RESERVED_TAG_PREFIX,
  SCENARIO_NAME_PATTERN,
  SCRIPT_PATH_PATTERN,
  SUITE_NAME_PATTERN,
  TAG_TEXT_PATTERN,
  type FieldDoc,
} from './schema-kit';

const runnersSchema = z.strictObject(
  {
    instanceType: z
      .string({ error: 'an EC2 instance type string such as "c7g.large"' })
      .regex(EC2_INSTANCE_TYPE_PATTERN, { error: 'an EC2 instance type such as "c7g.large"' })
      .optional()
      .meta(
        doc({
          description:
            'An EC2 type (`family.size`); Graviton types get the arm64 AMI, others x86_64. `cost`, `deploy` and `validate` also need its price in lib/cost/price-table.ts; `cdk synth` does not.',
          default: DEFAULTS.runners.instanceType,
        }),
      ),
    count: integer(1, LIMITS.runnerCountMax)
      .optional()
      .meta(
        doc({
          description: 'Runners; the steps are split across them and merged.',
          default: DEFAULTS.runners.count,
        }),
      ),
    placement: z
      .enum(['any', 'cluster', 'spread'], { error: 'one of "any", "cluster", "spread"' })
      .optional()
      .meta(
        doc({
          description: 'EC2 placement group strategy; `any` = no placement group.',
          default: DEFAULTS.runners.placement,
        }),
      ),
    spot: bool.optional().meta(
      doc({
        description:
          '`true` runs the runners on Spot capacity (a persistent request that *stops* the runner on an interruption and starts it again, EBS intact, when capacity returns). An interruption loses at most the step in flight: `status` says which runner was interrupted and when, and `run` with the same `--run-id` resumes. `cost` shows the on-demand price as the ceiling.',
        default: DEFAULTS.runners.spot,
      }),
    ),
  },
  { error: 'an object such as { "instanceType": "c7g.large", "count": 1 }' },
);

const subnetIdText = 'a subnet id such as "subnet-0123456789abcdef0"';

const existingNetworkSchema = z.strictObject(
  {
    vpcId: z
      .string({ error: 'a VPC id such as "vpc-0123456789abcdef0"' })
      .regex(VPC_ID_PATTERN, {
        error: 'a VPC id such as "vpc-0123456789abcdef0" (vpc- and 8 or 17 hex digits)',
      })
      .meta(
        doc({
          description:
            'An existing VPC, looked up at synth time (CDK VPC context lookup: the values land in cdk.context.json). Needs DNS resolution and DNS hostnames on for `vpc-endpoints`.',
        }),
      ),
    subnetIds: z
      .array(
        z
          .string({ error: subnetIdText })
          .regex(SUBNET_ID_PATTERN, { error: `${subnetIdText} (subnet- and 8 or 17 hex digits)` }),
        { error: `a list of ${LIMITS.networkSubnetsMin}–${LIMITS.networkSubnetsMax} subnet ids` },
      )
      .min(LIMITS.networkSubnetsMin, {
        error: `a list of at least ${LIMITS.networkSubnetsMin} subnet ids in at least two Availability Zones (the database subnet group needs two)`,
      })
      .max(LIMITS.networkSubnetsMax, { error: `a list of at most ${LIMITS.networkSubnetsMax} subnet ids` })
      .refine((ids) => new Set(ids).size === ids.length, { error: 'a list of distinct subnet ids' })
      .meta(
        doc({
          description:
            'Private subnets of that VPC (no route to an internet gateway), in at least two Availability Zones: the database, the proxies, the runners, the pooler hosts and the interface endpoints go there. No host gets a public IP.',
        }),
      ),
    account: z
      .string({ error: 'a 12-digit AWS account id in quotes, such as "111122223333"' })
      .regex(ACCOUNT_ID_PATTERN, { error: 'a 12-digit AWS account id in quotes, such as "111122223333"' })
      .meta(
        doc({
          description:
            "The VPC's account: the stack is bound to it and to the lab's `region` (required then), as CDK lookups need.",
        }),
      ),
    egress: z
      .enum(NETWORK_EGRESS, {
        error: `${oneOf(NETWORK_EGRESS)} ("vpc-endpoints": no internet path, AWS APIs through VPC endpoints; "internet": the subnets already route to the internet through a NAT or transit gateway the network team runs)`,
      })
      .meta(
        doc({
          description: `\`vpc-endpoints\`: no internet path; the hosts reach AWS only through interface endpoints (${PRIVATE_ENDPOINT_SERVICES.map((e) => e.service).join(', ')}) and an S3 gateway endpoint, and install nothing from the internet. \`internet\`: the subnets route to the internet already (NAT or transit gateway); the lab adds no endpoint.`,
        }),
      ),
    endpoints: z
      .enum(NETWORK_ENDPOINTS, { error: oneOf(NETWORK_ENDPOINTS) })
      .optional()
      .meta(
        doc({
          description:
            "`vpc-endpoints` only. `create`: the stack adds the interface endpoints (billed per zone-hour, see `proxylab cost`) and an S3 gateway endpoint on the subnets' route tables. `existing`: the network team's endpoints serve the VPC (private DNS on, S3 gateway on those route tables); the lab opens HTTPS to `endpointCidrs`.",
          default: DEFAULTS.network.endpoints,
        }),
      ),
    endpointCidrs: z
      .array(
        z
          .string({ error: 'an IPv4 CIDR block such as "10.0.0.0/16"' })
          .regex(IPV4_CIDR_PATTERN, { error: 'an IPv4 CIDR block such as "10.0.0.0/16"' }),
        { error: 'a list of IPv4 CIDR blocks' },
      )
      .min(1, { error: 'a non-empty list of IPv4 CIDR blocks' })
      .max(LIMITS.endpointCidrsMax, { error: `a list of at most ${LIMITS.endpointCidrsMax} CIDR blocks` })
      .optional()
      .meta(
        doc({
          description:
            "`endpoints: existing` only: where the network team's interface endpoints are (the hosts get HTTPS egress to these blocks and nowhere else besides S3).",
          defaultText: "the VPC's CIDR block",
        }),
      ),
  },
  {
    error:
      '"create", or an object such as { "vpcId": "vpc-…", "subnetIds": ["subnet-…", "subnet-…"], "account": "111122223333", "egress": "vpc-endpoints" }',
  },
);

const networkSchema = z.union([z.literal('create', { error: '"create"' }), existingNetworkSchema], {
  error:
    '"create" (the lab\'s own VPC), or an existing VPC as an object such as { "vpcId": "vpc-…", "subnetIds": ["subnet-…", "subnet-…"], "account": "111122223333", "egress": "vpc-endpoints" }',
});

const resultsSchema = z.strictObject(
  {
    retainOnDestroy: bool.optional().meta(
      doc({
        description: '`true` keeps the results bucket (and its objects) when the lab is destroyed.',
        default: DEFAULTS.results.retainOnDestroy,
      }),
    ),
    expireAfterDays: integer(1, LIMITS.expireAfterDaysMax)
      .optional()
      .meta(
        doc({
          description: 'Result objects expire this many days after they are written.',
          default: DEFAULTS.results.expireAfterDays,
        }),
      ),
  },
  { error: 'an object such as { "retainOnDestroy": false, "expireAfterDays": 30 }' },
);

const budgetSchema = z.strictObject(
  {
    maxHourlyUsd: z
      .number({ error: `a number of US dollars per hour ≥ ${LIMITS.budgetMaxHourlyUsdMin}` })
      .min(LIMITS.budgetMaxHourlyUsdMin, {
        error: `a number of US dollars per hour ≥ ${LIMITS.budgetMaxHourlyUsdMin}`,
      })
      .meta(
        doc({
          description:
            '`deploy` refuses a lab estimated above this many US dollars per hour unless `--force`.',
        }),
      ),
  },
  { error: 'an object such as { "maxHourlyUsd": 1.5 }' },
);

/** `disruptionLoad`: a background load for the lab's disruption scenarios (lib/suite/disruption-load.ts). */
const disruptionLoadSchema = z.strictObject(
  {
    scenario: z
      .string({ error: "a pgbench built-in script or one of the lab's own scenarios by name" })
      .min(1, { error: "a pgbench built-in script or one of the lab's own scenarios by name" })
      .meta(
        doc({
          description: `What pgbench runs: a built-in script (${BUILTIN_SCRIPTS.map((b) => `\`${b}\``).join(', ')}) or one of the lab's own \`scenarios\` by name (its workload and scale).`,
        }),
      ),
    clients: z
      .number({ error: `a whole number of clients ${LOAD_LIMITS.clients.min}–${LOAD_LIMITS.clients.max}` })
      .int({ error: `a whole number of clients ${LOAD_LIMITS.clients.min}–${LOAD_LIMITS.clients.max}` })
      .min(LOAD_LIMITS.clients.min, { error: `at least ${LOAD_LIMITS.clients.min} client` })
      .max(LOAD_LIMITS.clients.max, { error: `at most ${LOAD_LIMITS.clients.max} clients` })
      .meta(doc({ description: 'pgbench clients per probed target (`-c`).' })),
    jobs: z
      .number({ error: `a whole number of threads ${LOAD_LIMITS.jobs.min}–${LOAD_LIMITS.jobs.max}` })
      .int({ error: `a whole number of threads ${LOAD_LIMITS.jobs.min}–${LOAD_LIMITS.jobs.max}` })
      .min(LOAD_LIMITS.jobs.min, { error: `at least ${LOAD_LIMITS.jobs.min} thread` })
      .max(LOAD_LIMITS.jobs.max, { error: `at most ${LOAD_LIMITS.jobs.max} threads` })
      .optional()
      .meta(doc({ description: 'pgbench threads (`-j`), capped at the clients.', defaultText: '1' })),
  },
  { error: 'an object such as { "scenario": "tpcb-like", "clients": 4 }' },
);

const tagKey = z
  .string()
  .min(1, { error: 'a non-empty tag key' })
  .max(LIMITS.tagKeyMaxLength, { error: `a tag key of at most ${LIMITS.tagKeyMaxLength} characters` })
  .regex(TAG_TEXT_PATTERN, { error: `a tag key of ${TAG_CHARACTERS} (AWS's tag characters)` })
  .refine((k) => !startsWithAws(k), { error: 'a tag key not starting with "aws:" (reserved by AWS)' })
  .refine((k) => !k.toLowerCase().startsWith(RESERVED_TAG_PREFIX), {
    error: `a tag key not starting with "${RESERVED_TAG_PREFIX}" (proxylab sets proxylab:lab, proxylab:owner and proxylab:expires-at itself; the operator policy relies on them)`,
  });

const tagValue = z
  .string({ error: `a string of at most ${LIMITS.tagValueMaxLength} characters` })
  .max(LIMITS.tagValueMaxLength, { error: `a string of at most ${LIMITS.tagValueMaxLength} characters` })
  .regex(TAG_TEXT_PATTERN, { error: `a tag value of ${TAG_CHARACTERS} (AWS's tag characters)` })
  .refine((v) => !startsWithAws(v), { error: 'a tag value not starting with "aws:" (reserved by AWS)' });

export const labFileSchema = z.strictObject({
  // Editors read this to find docs/lab.schema.json; validation accepts it and ignores it.
  $schema: z
    .string({ error: 'a string (the path or URL of the lab JSON Schema)' })
    .optional()
    .meta(
      doc({
        description: 'The JSON Schema for editors, e.g. "../docs/lab.schema.json"; ignored by proxylab.',
      }),
    ),
  name: z
    .string({ error: 'a string' })
    .min(1, { error: 'a non-empty string' })
    .max(LIMITS.labNameMaxLength, { error: `at most ${LIMITS.labNameMaxLength} characters` })
    .regex(LAB_NAME_PATTERN, {
      error: 'lowercase letters, digits and single hyphens, starting with a letter (it names the stack)',
    })
    .meta(
      doc({
        description:
          'Lowercase letters, digits and single hyphens, starting with a letter. The stack is `proxylab-<name>`.',
      }),
    ),
  description: z
    .string({ error: 'a string' })
    .max(LIMITS.descriptionMaxLength, { error: `at most ${LIMITS.descriptionMaxLength} characters` })
    .regex(NO_CONTROL_EXCEPT_LINES, {
      error: 'text without control characters (newlines and tabs are allowed)',
    })
    .optional()
    .meta(
      doc({
        description:
          'For shared labs: what the lab is for, which published setup it stands in for and what differs.',
        default: DEFAULTS.description,
      }),
    ),
  region: z
    .string({ error: 'an AWS region string such as "eu-west-1"' })
    .regex(REGION_PATTERN, { error: 'an AWS region such as "eu-west-1"' })
    .optional()
    .meta(
      doc({
        description:
          'Region hint such as `eu-west-1` (cost estimate, humans). The stack stays environment-agnostic; you deploy with your own credentials and region. Required with an existing VPC (`network`): the lookup binds the stack to this region.',
        defaultText: 'none',
      }),
    ),
  owner: z
    .string({ error: 'a string' })
    .min(1, { error: 'a non-empty string' })
    .max(LIMITS.ownerMaxLength, { error: `at most ${LIMITS.ownerMaxLength} characters (a tag value)` })
    // The tag characters exclude control characters too.
    .regex(TAG_TEXT_PATTERN, {
      error: `${TAG_CHARACTERS}, as in an e-mail address (it becomes a tag value)`,
    })
    .refine((v) => !startsWithAws(v), { error: 'text not starting with "aws:" (reserved by AWS)' })
    .optional()
    .meta(
      doc({
        description:
          'Who to ask about this lab, e.g. an e-mail address; becomes the `proxylab:owner` tag (AWS tag characters: letters, digits, spaces, `+ - = . _ : / @`).',
        defaultText: 'none',
      }),
    ),
  aurora: auroraSchema.optional().meta(
    doc({
      description: 'The Aurora PostgreSQL cluster (the default database). Not together with `postgres`.',
    }),
  ),
  postgres: postgresSchema.optional().meta(
    doc({
      description: 'An RDS for PostgreSQL instance instead of Aurora. Not together with `aurora`.',
      defaultText: 'none (Aurora)',
    }),
  ),
  proxies: z
    .array(proxySchema, { error: 'a list of proxies' })
    .max(LIMITS.proxiesMax, { error: `a list of at most ${LIMITS.proxiesMax} proxies` })
    .optional()
    .meta(
      doc({
        description: 'RDS Proxies in front of the database, each with its own pool settings.',
        default: [],
      }),
    ),
  poolers: z
    .array(poolerSchema, { error: 'a list of poolers' })
    .max(LIMITS.poolersMax, { error: `a list of at most ${LIMITS.poolersMax} poolers` })
    .optional()
    .meta(
      doc({
        description:
          'Self-hosted poolers (PgBouncer, PgDoorman) in front of the database: on a dedicated EC2 host or on every runner (docs/stacks.md).',
        default: [],
      }),
    ),
  crossZone: bool.optional().meta(
    doc({
      description:
        '`false`: the writer, the runners and the dedicated pooler hosts share one Availability Zone, so no target has a cross-zone hop the others lack. ' +
        "`true`: the writer goes to the VPC's other zone, to measure what a cross-zone hop costs (RDS Proxy spans both zones either way). " +
        "Each component's zone is recorded in the run (environment.zones).",
      default: DEFAULTS.crossZone,
    }),
  ),
  runners: runnersSchema.optional().meta(doc({ description: 'The pgbench runners (EC2).' })),
  network: networkSchema.optional().meta(
    doc({
      description:
        'Where the hosts live: `"create"` builds the lab\'s own VPC (public IPv4 per runner, no inbound rules); an object names an existing VPC and private subnets (docs/aws.md, "Regulated accounts").',
      default: DEFAULTS.network.mode,
    }),
  ),
  results: resultsSchema.optional().meta(doc({ description: 'The results bucket.' })),
  ttlHours: numberIn(
    LIMITS.ttlHoursMin,
    LIMITS.ttlHoursMax,
    `a number of hours ${LIMITS.ttlHoursMin}–${LIMITS.ttlHoursMax} (a deploy alone takes 15–30 minutes)`,
  )
    // null: an explicit opt-out (no expiry schedule); absent: the safe default (DEFAULTS.ttlHours).
    .nullable()
    .optional()
    .meta(
      doc({
        description:
          'The lab deletes itself this long after deploy (expiry schedule); at least 1 (a deploy takes 15–30 minutes). `null` opts out: no schedule, the lab runs until `proxylab destroy`.',
        default: DEFAULTS.ttlHours,
      }),
    ),
  // The count (≤ LIMITS.userTagsMax) is checked in validate.ts: a zod refinement would stay silent
  // while any single tag is invalid.
  tags: z
    .record(tagKey, tagValue, { error: 'an object of string tags' })
    .optional()
    .meta(
      doc({
        description: `Extra tags on every resource, at most ${LIMITS.userTagsMax} (AWS's 50 minus proxylab's three): keys 1–128 and values ≤ 256 characters of letters, digits, spaces and \`+ - = . _ : / @\`; keys starting with \`aws:\` or \`proxylab:\` are reserved.`,
        default: {},
      }),
    ),
  suites: z
    .array(
      z
        .string({ error: 'a suite name' })
        .regex(SUITE_NAME_PATTERN, { error: 'a suite name (lowercase letters, digits, hyphens)' }),
      { error: 'a list of suite names' },
    )
    .min(1, { error: 'a non-empty list of suite names' })
    .optional()
    .meta(
      doc({
        description:
          'Suites to run on this lab: from the catalog (lib/suite/catalog.ts; see docs/suite.md), or `lab` for its own `scenarios`. `validate` warns about a target or billed part none of them measures.',
        defaultText: '["lab"] when the lab has `scenarios`, else ["quick"]',
      }),
    ),
  scenarios: z
    .array(scenarioSchema, { error: 'a list of scenarios' })
    .min(1, { error: 'a non-empty list of scenarios (leave the key out for none)' })
    .max(LIMITS.scenariosMax, { error: `a list of at most ${LIMITS.scenariosMax} scenarios` })
    .optional()
    .meta(
      doc({
        description:
          'Your own scenarios: your workload, client counts, durations and targets, run as the suite `lab` (`proxylab plan|run --suite lab`, `proxylab local --lab FILE`). See docs/lab-file.md.',
        defaultText: 'none',
      }),
    ),
  disruptionLoad: disruptionLoadSchema.optional().meta(
    doc({
      description:
        'A background load during every disruption scenario the lab runs that names none of its own: pgbench through each probed target from the warm-up until the recovery window closes, its tps per second beside the probes (docs/disruptions.md, Background load). It travels resolved in the run request to the runners, as in `proxylab local --lab`.',
      defaultText: 'none',
    }),
  ),
  budget: budgetSchema
    .optional()
    .meta(doc({ description: 'Spending guard for `proxylab deploy`.', defaultText: 'none' })),
});

export type LabFileInput = z.infer<typeof labFileSchema>;

export { AURORA_POSTGRES_INSTANCE_CLASSES };
