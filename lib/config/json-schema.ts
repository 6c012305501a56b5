/**
 * The lab file's JSON Schema, generated from the zod schema (one source): committed as
 * docs/lab.schema.json so editors complete and check lab files (`"$schema": "../docs/lab.schema.json"`).
 * `npx tsx scripts/gen-docs.ts --write` regenerates it; test/unit/generated-docs.test.ts fails when
 * the committed file drifts. proxylab itself validates with zod (validate.ts), which also checks
 * what JSON Schema cannot say here (engine versions, instance classes, idle ≤ max, suites).
 */
import { z } from 'zod';
import { ACCEPTED_ENGINE_VERSIONS } from './engine-versions';
import { AURORA_POSTGRES_INSTANCE_CLASSES } from './instance-classes';
import { labFileSchema } from './schema';

/** Where the committed schema lives, relative to the repository root. */
export const LAB_SCHEMA_FILE = 'docs/lab.schema.json';

export type JsonSchema = { readonly [key: string]: unknown };

/** The JSON Schema (draft 2020-12) of a lab file, as the input a user writes (optional keys not required). */
export function labJsonSchema(opts: { readonly keepDefaultText?: boolean } = {}): JsonSchema {
  const schema = z.toJSONSchema(labFileSchema, {
    io: 'input',
    // `defaultText` documents a default that is a rule, for the generated field tables; JSON
    // Schema has no such keyword, so the description carries it instead.
    override: (ctx) => {
      const js = ctx.jsonSchema as Record<string, unknown>;
      const text = js.defaultText;
      if (typeof text === 'string' && !opts.keepDefaultText) {
        delete js.defaultText;
        if (typeof js.description === 'string') js.description = `${js.description} Default: ${text}.`;
      }
    },
  });
  // The two lists validate.ts checks by membership (so it can suggest a close value): as `enum`
  // here, editors complete them and flag anything else.
  const aurora = (
    schema.properties as Record<string, { properties: Record<string, Record<string, unknown>> }>
  ).aurora;
  const engineVersion = aurora?.properties.engineVersion;
  const instanceClass = aurora?.properties.instanceClass;
  if (!engineVersion || !instanceClass)
    throw new Error('lab schema: aurora.engineVersion/instanceClass not found');
  engineVersion.enum = ACCEPTED_ENGINE_VERSIONS.map((e) => e.version);
  instanceClass.enum = [...AURORA_POSTGRES_INSTANCE_CLASSES];
  return {
    ...schema,
    title: 'proxylab lab file',
    description:
      'One lab: Aurora PostgreSQL, RDS Proxies, pgbench runners, results bucket, lifetime. See docs/lab-file.md.',
  };
}
