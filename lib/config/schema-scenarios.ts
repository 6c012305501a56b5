/** The lab file's own scenarios (zod 4): workload parts, client counts, the scenario object. */
import { z } from 'zod';
import { DEFAULTS } from './defaults';
import { BUILTIN_SCRIPTS } from '../suite/scenario';
import { CONNECT_MODES, PROTOCOLS } from '../suite/types';
import { TARGET_SELECTOR_NAMES } from '../suite/experiments/common';
import {
  LIMITS,
  NO_CONTROL_EXCEPT_LINES,
  SCENARIO_NAME_PATTERN,
  SCRIPT_PATH_PATTERN,
  doc,
  integer,
  numberIn,
  oneOf,
  quoted,
} from './schema-kit';

export const workloadPartSchema = z.strictObject(
  {
    builtin: z
      .enum(BUILTIN_SCRIPTS, { error: oneOf(BUILTIN_SCRIPTS) })
      .optional()
      .meta(
        doc({
          description: `A pgbench built-in script: ${quoted(BUILTIN_SCRIPTS)}. Give \`builtin\` or \`file\`.`,
        }),
      ),
    file: z
      .string({ error: 'a path such as "orders.sql", relative to the lab file' })
      .regex(SCRIPT_PATH_PATTERN, {
        error:
          'a path relative to the lab file\'s folder, ending in .sql, of letters, digits, . _ - and / (no "..", not absolute), such as "orders.sql" or "scripts/orders.sql"',
      })
      .optional()
      .meta(
        doc({
          description:
            "Your own pgbench script (SQL and pgbench meta-commands such as `\\set`), relative to the lab file's folder; read when the lab is validated (at most 64 KiB of UTF-8) and shipped to the runners in the run request.",
        }),
      ),
    weight: integer(1, LIMITS.scriptWeightMax)
      .optional()
      .meta(doc({ description: 'Relative weight in a mix (`-f file@W`, `-b name@W`).', default: 1 })),
  },
  { error: 'an object such as { "file": "orders.sql" } or { "builtin": "tpcb-like", "weight": 2 }' },
);

export const CLIENTS_RELATIVE_TO = ['maxConnections', 'poolSize'] as const;
export const clientsTimesText = `{ "times": T, "of": "maxConnections" | "poolSize" } with T > 0 and ≤ ${LIMITS.clientsTimesMax}`;
export const clientSpecSchema = z.union(
  [
    integer(1, LIMITS.clientsMax),
    // An object given is checked field by field (validate.ts descends into the option whose type
    // matches), so each field names what it allows.
    z.strictObject(
      {
        times: z
          .number({ error: `a number > 0 and ≤ ${LIMITS.clientsTimesMax}` })
          .gt(0, { error: `a number > 0 and ≤ ${LIMITS.clientsTimesMax}` })
          .max(LIMITS.clientsTimesMax, { error: `a number > 0 and ≤ ${LIMITS.clientsTimesMax}` }),
        of: z.enum(CLIENTS_RELATIVE_TO, { error: oneOf(CLIENTS_RELATIVE_TO) }),
      },
      { error: clientsTimesText },
    ),
  ],
  { error: `a number of clients 1–${LIMITS.clientsMax}, or ${clientsTimesText}` },
);

export const scenarioSchema = z.strictObject(
  {
    name: z
      .string({ error: 'a string' })
      .max(LIMITS.scenarioNameMaxLength, { error: `at most ${LIMITS.scenarioNameMaxLength} characters` })
      .regex(SCENARIO_NAME_PATTERN, {
        error:
          'lowercase letters, digits and single hyphens, starting with a letter (it begins every step id)',
      })
      .meta(
        doc({
          description:
            "Unique among the lab's scenarios; the first segment of every step id (`orders/direct/c50/simple/persistent/r1`).",
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
        doc({ description: 'What the scenario asks, in words (the report shows it).', defaultText: 'none' }),
      ),
    workload: z
      .array(workloadPartSchema, { error: 'a list of scripts such as [{ "file": "orders.sql" }]' })
      .min(1, { error: 'a non-empty list of scripts such as [{ "file": "orders.sql" }]' })
      .max(LIMITS.workloadPartsMax, { error: `a list of at most ${LIMITS.workloadPartsMax} scripts` })
      .meta(
        doc({
          description:
            'The scripts pgbench runs: one, or a weighted mix. Each is `{ "builtin": "tpcb-like" }` (or `select-only`, `simple-update`) or `{ "file": "orders.sql" }`, with an optional `weight`.',
        }),
      ),
    scale: integer(1, LIMITS.scaleMax)
      .optional()
      .meta(
        doc({
          description:
            'pgbench -i scale of the data loaded before the scenario (your script may use the pgbench tables).',
          default: DEFAULTS.scenario.scale,
        }),
      ),
    clients: z
      .array(clientSpecSchema, { error: 'a list of client counts such as [50, 100, 200]' })
      .min(1, { error: 'a non-empty list of client counts such as [50, 100, 200]' })
      .max(LIMITS.clientCountsMax, { error: `a list of at most ${LIMITS.clientCountsMax} client counts` })
      .meta(
        doc({
          description:
            'Client counts: absolute, or relative to the database\'s max_connections or to the smallest pool among the targets (`{ "times": 0.5, "of": "poolSize" }`). Each count is one cell on every target.',
        }),
      ),
    durationSec: integer(1, LIMITS.durationSecMax)
      .optional()
      .meta(
        doc({
          description: 'pgbench -T per step. Not together with `transactionsPerClient`.',
          defaultText: `${DEFAULTS.scenario.durationSec} unless transactionsPerClient is given`,
        }),
      ),
    transactionsPerClient: integer(1, LIMITS.transactionsPerClientMax)
      .optional()
      .meta(doc({ description: 'pgbench -t per client instead of a duration.', defaultText: 'none' })),
    protocols: z
      .array(z.enum(PROTOCOLS, { error: oneOf(PROTOCOLS) }), {
        error: `a list of protocols (${quoted(PROTOCOLS)})`,
      })
      .min(1, { error: `a non-empty list of protocols (${quoted(PROTOCOLS)})` })
      .max(PROTOCOLS.length, { error: `at most the ${PROTOCOLS.length} protocols` })
      .refine((l) => new Set(l).size === l.length, {
        error: `a list of distinct protocols (${quoted(PROTOCOLS)})`,
      })
      .optional()
      .meta(
        doc({
          description: 'pgbench --protocol values; each is a cell.',
          default: [...DEFAULTS.scenario.protocols],
        }),
      ),
    connects: z
      .array(z.enum(CONNECT_MODES, { error: oneOf(CONNECT_MODES) }), {
        error: `a list of connect modes (${quoted(CONNECT_MODES)})`,
      })
      .min(1, { error: `a non-empty list of connect modes (${quoted(CONNECT_MODES)})` })
      .max(CONNECT_MODES.length, { error: `at most the ${CONNECT_MODES.length} connect modes` })
      .refine((l) => new Set(l).size === l.length, {
        error: `a list of distinct connect modes (${quoted(CONNECT_MODES)})`,
      })
      .optional()
      .meta(
        doc({
          description:
            '`persistent` (one connection per client) and/or `per-transaction` (pgbench -C); each is a cell.',
          default: [...DEFAULTS.scenario.connects],
        }),
      ),
    repetitions: integer(1, LIMITS.repetitionsMax)
      .optional()
      .meta(
        doc({
          description: 'Runs of every cell; the report gives the median and the spread.',
          default: DEFAULTS.scenario.repetitions,
        }),
      ),
    rateTps: numberIn(
      0.001,
      LIMITS.rateTpsMax,
      `a number of transactions per second > 0 and ≤ ${LIMITS.rateTpsMax}`,
    )
      .optional()
      .meta(
        doc({
          description:
            'pgbench -R: the total rate the step aims at (split across the runners); unthrottled when absent.',
          defaultText: 'none (unthrottled)',
        }),
      ),
    jobs: integer(1, LIMITS.jobsMax)
      .optional()
      .meta(
        doc({
          description: "pgbench -j threads (at most the step's clients; divided across the runners).",
          default: DEFAULTS.scenario.jobs,
        }),
      ),
    targets: z
      .array(z.enum(['all', ...TARGET_SELECTOR_NAMES], { error: oneOf(['all', ...TARGET_SELECTOR_NAMES]) }), {
        error: `a list of target selectors (${quoted(['all', ...TARGET_SELECTOR_NAMES])})`,
      })
      .min(1, {
        error: `a non-empty list of target selectors (${quoted(['all', ...TARGET_SELECTOR_NAMES])})`,
      })
      .refine((l) => new Set(l).size === l.length, { error: 'a list of distinct target selectors' })
      .optional()
      .meta(
        doc({
          description:
            "Which of the lab's targets run it, by what they are (as the catalog chooses them): `all`, or `direct`, `managed-pool` (every RDS Proxy), `self-hosted-transaction-pool`, `self-hosted-session-pool`. `proxylab plan` names every target left out and why.",
          default: [...DEFAULTS.scenario.targets],
        }),
      ),
  },
  {
    error:
      'a scenario object such as { "name": "orders", "workload": [{ "file": "orders.sql" }], "clients": [50, 100, 200] }',
  },
);
