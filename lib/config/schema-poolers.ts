/** The lab file's proxies and poolers (zod 4), each with its `settings` (./settings.ts). */
import { z } from 'zod';
import { DEFAULTS } from './defaults';
import { POOLER_DRIVERS } from '../poolers/registry';
import { POOL_MODES, POOLER_PLACEMENTS, POOLER_PRODUCTS } from '../poolers/products';
import { settingsSchema } from './settings';
import {
  EC2_INSTANCE_TYPE_PATTERN,
  LIMITS,
  POOLER_NAME_PATTERN,
  RDS_IDENTIFIER_PATTERN,
  SETTINGS_DOC,
  bool,
  doc,
  integer,
  oneOf,
  quoted,
} from './schema-kit';

export const proxySchema = z.strictObject(
  {
    name: z
      .string({ error: 'a string' })
      .min(1, { error: 'a non-empty string' })
      .max(LIMITS.proxyNameMaxLength, { error: `at most ${LIMITS.proxyNameMaxLength} characters` })
      .regex(RDS_IDENTIFIER_PATTERN, {
        error:
          'a valid RDS identifier: a letter first, then letters, digits or single hyphens, not ending in a hyphen',
      })
      .meta(
        doc({
          description:
            'RDS identifier: letter first, letters/digits/single hyphens, unique (case-insensitive). The RDS proxy is named `<lab>-<name>`.',
        }),
      ),
    maxConnectionsPercent: integer(1, 100)
      .optional()
      .meta(
        doc({
          description: '% of `max_connections` the proxy may open.',
          default: DEFAULTS.proxy.maxConnectionsPercent,
        }),
      ),
    maxIdleConnectionsPercent: integer(0, 100)
      .optional()
      .meta(
        doc({
          description: '% of `max_connections` kept idle; at most `maxConnectionsPercent`.',
          defaultText: 'half of maxConnectionsPercent, rounded down',
        }),
      ),
    borrowTimeoutSeconds: integer(0, LIMITS.borrowTimeoutSecondsMax)
      .optional()
      .meta(
        doc({
          description: 'How long a client waits for a pooled connection.',
          default: DEFAULTS.proxy.borrowTimeoutSeconds,
        }),
      ),
    requireTls: bool.optional().meta(
      doc({
        description: 'With `true`, pgbench needs `sslmode=require`.',
        default: DEFAULTS.proxy.requireTls,
      }),
    ),
    debugLogging: bool
      .optional()
      .meta(
        doc({ description: 'Proxy debug logs (may contain SQL).', default: DEFAULTS.proxy.debugLogging }),
      ),
    settings: settingsSchema('RDS Proxy').meta(
      doc(
        SETTINGS_DOC(
          'RDS Proxy',
          'rds-proxy',
          '{ "InitQuery": "SET search_path = app, public", "IdleClientTimeout": 900 }',
        ),
      ),
    ),
  },
  { error: 'a proxy object such as { "name": "pool100", "maxConnectionsPercent": 100 }' },
);

/** Each product's pinned releases, from its driver: `PgBouncer`, `1.26.0, 1.25.2, 1.24.1`. */
export const poolerReleases = POOLER_PRODUCTS.map((product) => {
  const d = POOLER_DRIVERS[product];
  const pins = [
    ...new Set(
      d.releases.map((r) => (r.gitCommit !== undefined ? "its tag's commit id" : 'its published SHA-256')),
    ),
  ];
  return {
    product,
    name: d.displayName,
    versions: d.releases.map((r) => r.version).join(', '),
    pin: pins.join(' or '),
  };
});

export const poolerSchema = z.strictObject(
  {
    name: z
      .string({ error: 'a string' })
      .min(1, { error: 'a non-empty string' })
      .max(LIMITS.poolerNameMaxLength, { error: `at most ${LIMITS.poolerNameMaxLength} characters` })
      .regex(POOLER_NAME_PATTERN, {
        error: 'lowercase letters, digits and single hyphens, starting with a letter',
      })
      .meta(
        doc({
          description:
            'Lowercase letters, digits, single hyphens; unique among proxies and poolers (case-insensitive). Targets are named `<name>-<mode>` (e.g. `bouncer-session`).',
        }),
      ),
    kind: z.enum(POOLER_PRODUCTS, { error: oneOf(POOLER_PRODUCTS) }).meta(
      doc({
        description: `The pooler product, an enum with one value per pooler driver (lib/poolers/registry.ts): ${quoted(POOLER_PRODUCTS)}. Any other name is refused until its driver exists (CONTRIBUTING.md, "Add a pooler product").`,
      }),
    ),
    placement: z
      .enum(POOLER_PLACEMENTS, {
        error: `${oneOf(POOLER_PLACEMENTS)} (a managed database's own host — Aurora or RDS — cannot run a pooler; "on-runners" co-locates it with the load)`,
      })
      .meta(
        doc({
          description:
            '`dedicated`: its own EC2 host (`instanceType`). `on-runners`: on every runner at 127.0.0.1, sharing the CPU with pgbench (the cloud stand-in for "pooler on the same host"; Aurora\'s host cannot run it).',
        }),
      ),
    // Required for dedicated and refused for on-runners: validate.ts checks it (it depends on placement).
    instanceType: z
      .string({ error: 'an EC2 instance type string such as "c7g.xlarge"' })
      .regex(EC2_INSTANCE_TYPE_PATTERN, { error: 'an EC2 instance type such as "c7g.xlarge"' })
      .optional()
      .meta(
        doc({
          description:
            'EC2 type of the dedicated host (required there, refused for `on-runners`); Graviton types get the arm64 AMI. `cost`, `deploy` and `validate` also need its price.',
          defaultText: 'none (required for dedicated)',
        }),
      ),
    // Checked by validate.ts against the kind's driver's releases (the message lists them).
    version: z
      .string({ error: poolerReleases.map((r) => `a ${r.name} release, one of ${r.versions}`).join('; or ') })
      .optional()
      .meta(
        doc({
          description: poolerReleases
            .map(
              (r) =>
                `${r.name} release pinned by ${r.pin} (lib/poolers/${r.product}/releases.ts): ${r.versions}.`,
            )
            .join(' '),
          default: DEFAULTS.pooler.version,
        }),
      ),
    poolModes: z
      .array(z.enum(POOL_MODES, { error: oneOf(POOL_MODES) }), {
        error: `a list of pool modes (${quoted(POOL_MODES)})`,
      })
      .min(1, { error: `a non-empty list of pool modes (${quoted(POOL_MODES)})` })
      .max(POOL_MODES.length, { error: `at most the ${POOL_MODES.length} pool modes ${quoted(POOL_MODES)}` })
      .refine((modes) => new Set(modes).size === modes.length, {
        error: `a list of distinct pool modes (${quoted(POOL_MODES)})`,
      })
      .optional()
      .meta(
        doc({
          description:
            'Pool modes to serve; each is a target. Transaction = the database name, session = `<db>_session`.',
          default: [...DEFAULTS.pooler.poolModes],
        }),
      ),
    poolPercent: integer(1, 100)
      .optional()
      .meta(
        doc({
          description:
            '% of `max_connections` the pooler opens in total (like RDS Proxy `maxConnectionsPercent`), split across `processes` (and, on the runners, across the runners).',
          default: DEFAULTS.pooler.poolPercent,
        }),
      ),
    maxPreparedStatements: integer(0, LIMITS.maxPreparedStatementsMax)
      .optional()
      .meta(
        doc({
          description:
            'PgBouncer `max_prepared_statements` (0 = off; transaction pools only); PgDoorman `prepared_statements_cache_size` (0 = `prepared_statements` off).',
          default: DEFAULTS.pooler.maxPreparedStatements,
        }),
      ),
    processes: integer(1, LIMITS.poolerProcessesMax)
      .optional()
      .meta(
        doc({
          description:
            "PgBouncer processes sharing the port (`so_reuseport`): one core each. At most the dedicated host's vCPUs. A multithreaded product (PgDoorman) runs 1: set `workerThreads`.",
          default: DEFAULTS.pooler.processes,
        }),
      ),
    workerThreads: integer(1, LIMITS.poolerWorkerThreadsMax)
      .optional()
      .meta(
        doc({
          description:
            "PgDoorman `worker_threads` (one process, this many threads). Default: the host's vCPUs (the dedicated host's, or the runners'), read at boot. Only for a multithreaded product.",
        }),
      ),
    tls: bool.optional().meta(
      doc({
        description:
          'Clients must use TLS (PgBouncer `client_tls_sslmode = require`, PgDoorman `tls_mode = "require"`; a key generated on the host), like RDS Proxy `requireTls`. Server side TLS is always on.',
        default: DEFAULTS.pooler.tls,
      }),
    ),
    settings: settingsSchema('pooler').meta(
      doc(
        SETTINGS_DOC(
          'the pooler (by its `kind`)',
          'pgbouncer',
          '{ "server_login_retry": 2, "query_wait_timeout": 30 }',
        ),
      ),
    ),
  },
  {
    error:
      'a pooler object such as { "name": "bouncer", "kind": "pgbouncer", "placement": "dedicated", "instanceType": "c7g.xlarge" }',
  },
);
